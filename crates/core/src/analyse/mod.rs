//! The whole analysis of a set of loaded files: lineage, then per profile the comparable runs,
//! their recomputed summaries, the SLO verdict and the float-baseline comparison. The result
//! types live in [`crate::analyse::report`]; what a reader sees of them is built by [`crate::show::view`].

pub mod baseline;
pub mod calibrate;
pub mod capacity;
pub mod compare;
pub mod complete;
pub mod evidence;
pub mod explore;
pub mod flags;
mod names;
mod profile;
pub mod regression;
pub mod report;
pub(crate) mod screen;
mod searched;
pub mod shard;
pub mod subject;
pub mod summary;
pub mod verdict;

use crate::analyse::compare::Ctx;
use crate::analyse::report::Analysis;
use crate::check::lineage::{check_lineage, LineageInputs};
use crate::read::json::{Document, LoadedFile};
use crate::schema::{Plan, Run};

/// Choices the user makes explicitly; the defaults are what a reviewer signs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnalyzeOptions {
    /// Pool different runs of one candidate under one profile (reruns) into one run whose
    /// repeats are all of theirs, instead of excluding that candidate as a conflict.
    pub pool_reruns: bool,
}

/// Analyses every loaded file together (`LoadedFile`s, or anything that borrows as one, such as
/// `Rc<LoadedFile>` in the page).
pub fn analyze<F: std::borrow::Borrow<LoadedFile>>(files: &[F]) -> Analysis {
    analyze_with(files, AnalyzeOptions::default())
}

/// [`analyze`] with explicit options.
pub fn analyze_with<F: std::borrow::Borrow<LoadedFile>>(
    files: &[F],
    options: AnalyzeOptions,
) -> Analysis {
    analyze_inner(files, &[], options, None)
}

/// [`analyze_with`], also told of the files that could not be read (each message naming its
/// file): a planned cell left without a run names them as what may have held it.
pub fn analyze_all<F: std::borrow::Borrow<LoadedFile>>(
    files: &[F],
    refused: &[String],
    options: AnalyzeOptions,
) -> Analysis {
    analyze_inner(files, refused, options, None)
}

/// [`analyze_with`], also keeping the run each candidate report rests on.
pub(crate) fn analyze_keeping<F: std::borrow::Borrow<LoadedFile>>(
    files: &[F],
    options: AnalyzeOptions,
) -> (Analysis, Vec<crate::analyse::compare::Kept>) {
    let kept = std::cell::RefCell::new(Vec::new());
    let a = analyze_inner(files, &[], options, Some(&kept));
    (a, kept.into_inner())
}

fn analyze_inner<F: std::borrow::Borrow<LoadedFile>>(
    files: &[F],
    refused: &[String],
    options: AnalyzeOptions,
    kept: Option<&std::cell::RefCell<Vec<crate::analyse::compare::Kept>>>,
) -> Analysis {
    // Every list the analysis builds follows this order, so the order the files were given in
    // never changes a result.
    let given: Vec<&LoadedFile> = files.iter().map(std::borrow::Borrow::borrow).collect();
    // Another tool's run written as several files is one run (an AIPerf artifact directory).
    let joined = crate::read::import::artifact::join(&given);
    let files: Vec<&LoadedFile> = given
        .into_iter()
        .filter(|f| !joined.consumed.contains(&f.name))
        .chain(&joined.files)
        .collect();
    // Made names of other tools' runs that two files share, each told apart by its file.
    let renamed = crate::read::import::distinct::distinct(&files);
    let mut files: Vec<&LoadedFile> = files
        .into_iter()
        .filter(|f| !renamed.iter().any(|r| r.name == f.name))
        .chain(&renamed)
        .collect();
    crate::base::order::sort_by(&mut files, |a, b| a.name.cmp(&b.name));
    let (files, shards) = shard::merge::merge(files);
    let held = shards.as_ref().filter(|s| !s.complete).map(shard_hold);
    let mut inputs = LineageInputs::default();
    let mut plans: Vec<(&str, &Plan)> = Vec::new();
    let mut notes = joined.notes.clone();
    let mut imported: Vec<(&str, &Vec<(String, Run)>)> = Vec::new();
    for f in files {
        match &f.doc {
            Document::QualityGate(g) => inputs.gates.push((&f.name, g)),
            Document::FloatBaseline(b) => inputs.baselines.push((&f.name, b)),
            Document::Deployment(d) => inputs.deployments.push((&f.name, d)),
            Document::Plan(p) => plans.push((&f.name, p)),
            Document::Run(r) => inputs.runs.push((&f.name, r)),
            Document::Imported(runs) => imported.push((&f.name, runs)),
            Document::Aside(what) => notes.push(format!("{}: set aside: {what}", f.name)),
            Document::Shard(_) | Document::ShardDone(_) => {}
        }
    }
    // Another tool's file read directly belongs to no deployment: it is compared (and, beside a
    // plan, left out with the reason) but does not take part in the lineage check.
    // Copies of one plan narrowed differently (two sittings, `--profiles latency` then
    // `--profiles balanced`) are one plan: what any of them ran.
    let merged = merge_narrowed(&plans);
    if let Some((m, note)) = &merged {
        notes.push(note.clone());
        plans = vec![(plans[0].0, m)];
    }
    let (plan, plan_conflict) = one_plan(&plans);
    inputs.plan_gate = plan.and_then(|(_, p)| p.gate.clone());
    let lineage = check_lineage(&inputs);
    add_imported(&mut inputs, &imported, &mut notes);
    if let Some(why) = &plan_conflict {
        notes.push(why.clone());
    }
    let mut subject = subject::subject(&inputs, plan);
    if plan_conflict.is_some() {
        subject.plan = Some(conflicting_plans(&plans));
    }
    let (names, unknown_profiles) = names::profile_names(plan, &inputs.runs);
    let quantized_artifact = inputs
        .deployments
        .first()
        .map(|d| d.1.artifact.artifact_id.clone())
        .or_else(|| {
            inputs
                .gates
                .first()
                .map(|g| g.1.artifact.artifact_id.clone())
        });
    let ctx = Ctx {
        plan_conflict,
        held,
        no_records: inputs.gates.is_empty()
            && inputs.baselines.is_empty()
            && inputs.deployments.is_empty(),
        plan,
        runs: &inputs.runs,
        lineage: &lineage,
        quantized_artifact,
        baseline_artifact: inputs
            .baselines
            .first()
            .map(|b| b.1.artifact.artifact_id.clone()),
        pool_reruns: options.pool_reruns,
        kept,
        shards: shards.as_ref(),
        refused,
        formats: formats(&inputs),
    };
    let profiles: Vec<_> = names
        .into_iter()
        .map(|n| profile::analyze_profile(&ctx, n))
        .collect();
    say_left_out(&mut subject, &inputs, &profiles);
    let completeness_unchecked = unchecked(&ctx, !inputs.runs.is_empty());
    Analysis {
        sloscope_version: env!("CARGO_PKG_VERSION").to_string(),
        subject,
        lineage,
        profiles,
        completeness_unchecked,
        unknown_profiles,
        notes,
        shards,
    }
}

/// The distinct runs (identical copies once) every profile left out: each run file that
/// an exclusion names and no profile compares.
fn left_out<'a>(runs: &[(&str, &'a Run)], profiles: &[report::ProfileReport]) -> Vec<&'a Run> {
    let compared: std::collections::BTreeSet<&str> = profiles
        .iter()
        .flat_map(|p| p.candidates.iter().map(|c| c.file.as_str()))
        .collect();
    let excluded: std::collections::BTreeSet<&str> = profiles
        .iter()
        .flat_map(|p| p.excluded.iter().map(|e| e.file.as_str()))
        .filter(|f| !compared.contains(f))
        .collect();
    let out: Vec<&Run> = runs
        .iter()
        .filter(|(f, _)| excluded.contains(f))
        .map(|(_, r)| *r)
        .collect();
    out.iter()
        .enumerate()
        .filter(|(i, r)| !out[..*i].contains(r))
        .map(|(_, r)| *r)
        .collect()
}

/// How many runs every profile left out; and, where the runs of another artifact than the
/// records' are all among them, that they are (said as left out, not as what was measured).
fn say_left_out(
    subject: &mut subject::Subject,
    inputs: &LineageInputs<'_>,
    profiles: &[report::ProfileReport],
) {
    let out = left_out(&inputs.runs, profiles);
    subject.runs_left_out = out.len();
    if let (Some(said), Some(id)) = (subject.runs_artifact.as_mut(), record_id(inputs)) {
        let mut others = inputs
            .runs
            .iter()
            .filter(|(_, r)| r.role == crate::schema::Role::Candidate && r.artifact_id != id);
        if others.all(|(_, r)| out.contains(r)) {
            said.push_str(", left out of every verdict");
        }
    }
}

/// The artifact the records name (the deployment's, else the gate's).
fn record_id<'a>(inputs: &LineageInputs<'a>) -> Option<&'a str> {
    inputs
        .deployments
        .first()
        .map(|d| d.1.artifact.artifact_id.as_str())
        .or_else(|| {
            inputs
                .gates
                .first()
                .map(|g| g.1.artifact.artifact_id.as_str())
        })
}

/// The deployment's and the float baseline's quantization formats, as their records say.
fn formats(inputs: &LineageInputs<'_>) -> [Option<String>; 2] {
    [
        inputs
            .deployments
            .first()
            .and_then(|d| d.1.artifact.format.clone()),
        inputs
            .baselines
            .first()
            .and_then(|b| b.1.artifact.format.clone()),
    ]
}

/// One plan made of several copies narrowed from the same whole plan (each records its hash),
/// when they differ: the profiles, candidates and baseline any of them ran; left out, what none
/// ran. `None` when the plans are one already, or are not copies of one plan.
fn merge_narrowed(plans: &[(&str, &Plan)]) -> Option<(Plan, String)> {
    let (first, rest) = plans.split_first()?;
    let whole = first.1.left_out.as_ref()?.whole_content_sha256.clone()?;
    let same = |p: &Plan| {
        p.left_out
            .as_ref()
            .and_then(|l| l.whole_content_sha256.as_deref())
            == Some(whole.as_str())
    };
    if rest.is_empty()
        || !rest.iter().all(|(_, p)| same(p))
        || rest.iter().all(|(_, p)| *p == first.1)
    {
        return None;
    }
    let mut m = first.1.clone();
    for (_, p) in rest {
        for s in &p.profiles {
            if !m.profiles.iter().any(|x| x.name == s.name) {
                m.profiles.push(s.clone());
            }
        }
        for c in &p.candidates {
            if !m.candidates.iter().any(|x| x.name == c.name) {
                m.candidates.push(c.clone());
            }
        }
        m.baseline = m.baseline.take().or_else(|| p.baseline.clone());
    }
    let all = |f: &dyn Fn(&crate::schema::LeftOut) -> Vec<String>| -> Vec<String> {
        let mut v: Vec<String> = plans
            .iter()
            .filter_map(|(_, p)| p.left_out.as_deref())
            .flat_map(f)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let left = crate::schema::LeftOut {
        profiles: all(&|l| l.profiles.clone())
            .into_iter()
            .filter(|n| !m.profiles.iter().any(|s| s.name.as_deref() == Some(n)))
            .collect(),
        candidates: all(&|l| l.candidates.clone())
            .into_iter()
            .filter(|n| !m.candidates.iter().any(|c| &c.name == n))
            .collect(),
        baseline: all(&|l| l.baseline.iter().cloned().collect())
            .into_iter()
            .find(|_| m.baseline.is_none()),
        whole_content_sha256: Some(whole),
    };
    m.left_out = Some(Box::new(left));
    let names: Vec<&str> = plans.iter().map(|p| p.0).collect();
    let note = format!(
        "{} copies of one plan, each narrowed when run ({}), read as one plan: what any of them ran",
        plans.len(),
        names.join(", ")
    );
    Some((m, note))
}

/// With runs and records but no plan (and not two plans, which the verdicts already say):
/// which runs were planned is unknown.
fn unchecked(ctx: &Ctx<'_>, any_run: bool) -> Option<String> {
    (ctx.plan.is_none() && ctx.plan_conflict.is_none() && !ctx.no_records && any_run).then(|| {
        "no plan was loaded: which runs were planned is unknown, so a missing candidate or \
         float baseline cannot be told from one never planned (load the plan.json the run \
         wrote)"
            .to_string()
    })
}

/// The header's plan when several different plans are loaded: each named, with its hash, and
/// none used.
fn conflicting_plans(plans: &[(&str, &Plan)]) -> String {
    let names: Vec<String> = plans
        .iter()
        .map(|(f, p)| {
            let hash = subject::content_sha256(p).unwrap_or_default();
            format!(
                "{}, content sha256 {}",
                subject::said(p.name.as_deref().unwrap_or(f)),
                &hash[..12.min(hash.len())]
            )
        })
        .collect();
    format!(
        "{} different plans loaded ({}): none is used",
        plans.len(),
        names.join("; ")
    )
}

/// Why a sharded results tree that does not stand for the whole plan gives no verdict.
fn shard_hold(s: &shard::types::ShardReport) -> String {
    let first = s
        .problems
        .first()
        .cloned()
        .unwrap_or_else(|| "not every shard finished".to_string());
    let more = match s.problems.len().saturating_sub(1) {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    format!(
        "the sharded run does not stand for the whole plan: {first}{more}; no verdict until every shard finished once, on the same lineage"
    )
}

/// The plan every file is measured against: copies of one plan are one plan; two different
/// plans are a conflict that no verdict may settle by file order, so none is used.
fn one_plan<'a>(plans: &[(&'a str, &'a Plan)]) -> (Option<(&'a str, &'a Plan)>, Option<String>) {
    let Some(&first) = plans.first() else {
        return (None, None);
    };
    let differ: Vec<&str> = plans
        .iter()
        .filter(|(_, p)| *p != first.1)
        .map(|(f, _)| *f)
        .collect();
    if differ.is_empty() {
        return (Some(first), None);
    }
    let names: Vec<&str> = plans.iter().map(|p| p.0).collect();
    (
        None,
        Some(format!(
            "{} different plans loaded ({}): no verdict can say which one the runs are measured \
             against; load one plan",
            plans.len(),
            names.join(", ")
        )),
    )
}

/// Foreign files read directly join the runs, except one that a sloscope run file already holds
/// as an import (same sha256): the directory `run --command-template` writes keeps the tool's
/// file beside the run made from it, and the two are one measurement.
fn add_imported<'a>(
    inputs: &mut LineageInputs<'a>,
    imported: &[(&'a str, &'a Vec<(String, Run)>)],
    notes: &mut Vec<String>,
) {
    let held: Vec<(&str, &str)> = inputs
        .runs
        .iter()
        .filter_map(|(f, r)| r.import.as_ref().map(|i| (i.sha256.as_str(), *f)))
        .collect();
    for (file, runs) in imported {
        let sha = runs
            .first()
            .and_then(|(_, r)| r.import.as_ref())
            .map(|i| i.sha256.as_str());
        let same = |h: &str| sha.is_some_and(|s| s.eq_ignore_ascii_case(h));
        if let Some((_, by)) = held.iter().find(|(h, _)| same(h)) {
            notes.push(format!(
                "{file}: already imported as {by} (same sha256); read once"
            ));
            continue;
        }
        for (name, run) in runs.iter() {
            inputs.runs.push((name.as_str(), run));
        }
    }
}
