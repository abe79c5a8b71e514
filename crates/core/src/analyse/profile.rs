//! One profile of the analysis: its definition (the plan's, or the one its runs agree on),
//! its comparable candidates with their recomputed summaries, the SLO verdict, the float
//! baseline, the capacity search and the cost.

use crate::analyse::compare::Ctx;
use crate::analyse::report::{CandidateReport, Excluded, ProfileReport};
use crate::analyse::screen::{self, screen};
use crate::analyse::summary::Thresholds;
use crate::analyse::verdict::ProfileDecision as Decision;
use crate::base::problem::{Problem, ProblemCode};
use crate::check::contract::{validate_profile, Profile};
use crate::check::run::Expect;
use crate::schema::{Plan, ProfileName, ProfileSpec, Role, Run, WorkloadSpec};

mod decide;
use decide::{decide_profile, lineage_missing};

/// The profile's definition: the plan's, else the one every run that carries one agrees on
/// (runs that define it differently leave it undefined, never decided by file order).
fn profile_spec(
    ctx: &Ctx<'_>,
    name: ProfileName,
    runs: &[(&str, &Run)],
) -> Result<(ProfileSpec, String), String> {
    if let Some((file, plan)) = ctx.plan {
        return plan
            .profiles
            .iter()
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .map(|s| (s.clone(), file.to_string()))
            .ok_or_else(|| format!("the plan {file} does not define the {name} profile"));
    }
    let mut specs: Vec<(&str, &ProfileSpec)> = runs
        .iter()
        .filter_map(|(f, r)| r.profile_spec.as_ref().map(|s| (*f, s)))
        .collect();
    crate::base::order::sort_by(&mut specs, |a, b| a.0.cmp(b.0));
    let Some(&(first_file, first)) = specs.first() else {
        return Err(format!(
            "no definition of the {name} profile: load the plan, or runs that carry profile_spec"
        ));
    };
    if let Some((other, _)) = specs.iter().find(|(_, s)| *s != first) {
        return Err(format!(
            "the runs define the {name} profile differently ({first_file} and {other} differ): \
             load the plan to say which is meant"
        ));
    }
    Ok((first.clone(), first_file.to_string()))
}

pub(super) fn analyze_profile(ctx: &Ctx<'_>, name: ProfileName) -> ProfileReport {
    let runs: Vec<(&str, &Run)> = ctx
        .runs
        .iter()
        .filter(|(_, r)| r.profile == name.as_str())
        .copied()
        .collect();
    // Another tool's run read without a plan (never placed in one) has no profile of its own.
    let unplaced_only = !runs.is_empty()
        && runs.iter().all(|(_, r)| {
            r.source == crate::schema::RunSource::Imported && r.profile_spec.is_none()
        });
    let defined = profile_spec(ctx, name, &runs);
    let (spec, defined_in) = match &defined {
        Ok((s, f)) => (
            Some(with_replayed_hashes(s.clone(), runs.iter().copied())),
            Some(f.clone()),
        ),
        Err(_) => (None, None),
    };
    let knob = ctx.plan.map(|(_, p)| p.knob.clone()).or_else(|| {
        runs.iter()
            .find(|(_, r)| r.role == Role::Candidate)
            .and_then(|(_, r)| r.candidate.knob.clone())
    });
    let contract = match (&spec, &defined) {
        (Some(s), _) => validate_profile(s),
        (None, Err(why)) => Err(vec![Problem::new(
            ProblemCode::MissingField,
            "profiles",
            why.clone(),
        )]),
        (None, Ok(_)) => Err(Vec::new()),
    };
    let profile = contract.as_ref().ok();
    let mut report = empty_report(name, spec.as_ref(), defined_in, &contract, knob.clone());
    let expect = Expect {
        spec: spec.as_ref(),
        plan: ctx.plan,
        knob: knob.as_deref(),
        artifacts: [
            ctx.quantized_artifact.as_deref(),
            ctx.baseline_artifact.as_deref(),
        ],
        search: profile.and_then(|p| p.search.as_ref()),
        formats: [ctx.formats[0].as_deref(), ctx.formats[1].as_deref()],
        pooled: false,
    };
    let loaded_trials: Vec<(&str, &Run)> = runs
        .iter()
        .copied()
        .filter(|(_, r)| r.search.is_some())
        .collect();
    let runs = apart(ctx.lineage, runs, &mut report.excluded);
    let runs = screen(&runs, &expect, &mut report.excluded, &mut report.flags);
    let (search_runs, mut runs): (Vec<_>, Vec<_>) =
        runs.into_iter().partition(|(_, r)| r.search.is_some());
    let plan = ctx.plan.map(|p| p.1);
    runs.extend(crate::analyse::searched::search(
        plan,
        profile,
        [&search_runs, &loaded_trials],
        &mut report,
    ));
    let (trial_runs, runs): (Vec<_>, Vec<_>) = runs
        .into_iter()
        .partition(|(_, r)| r.trial.is_some() && r.role == Role::Candidate);
    let (baseline_runs, candidate_runs): (Vec<_>, Vec<_>) = runs
        .into_iter()
        .partition(|(_, r)| r.role == Role::Baseline);
    let used = candidates(ctx, &expect, profile, &candidate_runs, &mut report);
    collected_under(
        ctx,
        spec.as_ref(),
        [&candidate_runs, &baseline_runs, &trial_runs],
        &mut report,
    );
    order_like_plan(ctx.plan.map(|p| p.1), &mut report.candidates);
    decide_profile(ctx, profile, &mut report);
    summaries_only(ctx, spec.is_none(), unplaced_only, &mut report);
    capacity(ctx, profile, &trial_runs, &mut report);
    crate::analyse::flags::after_verdict(&mut report);
    let thresholds = profile.map_or_else(Thresholds::default, |p| Thresholds::from_slo(&p.slo));
    let chosen = report
        .recommended_name
        .as_deref()
        .and_then(|n| used.iter().find(|(k, _)| k == n))
        .map(|(_, r)| &**r);
    report.baseline = crate::analyse::compare::baseline_report(
        &expect,
        &thresholds,
        (&baseline_runs, chosen),
        ctx.pool_reruns,
        &mut report,
    );
    cost(ctx.plan.map(|p| p.1), &mut report);
    finish(ctx, profile.is_some(), &mut report);
    report
}

/// A profile nothing asked to judge shows summaries only: without a plan or records (another
/// tool's file read alone), or where every run is another tool's file never placed in the
/// plan (shown under the profile its load suggests) — no verdict withheld, none invalid.
fn summaries_only(ctx: &Ctx<'_>, no_spec: bool, unplaced_only: bool, report: &mut ProfileReport) {
    let reason = if no_spec && ctx.no_records {
        "summaries only: a verdict needs the plan (SLOs) and the lineage records; import another tool's file with `sloscope import FILE --out DIR --plan PLAN --profile NAME --candidate NAME`"
    } else if no_spec && unplaced_only {
        "summaries only: other tools' files not placed in the plan, shown under the profile their load suggests (place them: on the page, their profile and candidate; or `sloscope import FILE --plan PLAN --profile NAME --candidate NAME`)"
    } else {
        return;
    };
    report.summaries_only = true;
    // Nothing was planned to be missing here, and there is no verdict to hold back.
    report.provisional = None;
    report.missing.clear();
    report.reason = reason.into();
}

/// What the runs were collected under that is not what they are judged by: the plan's SLOs
/// edited since, another tool's file placed by hand that names another model.
fn collected_under(
    ctx: &Ctx<'_>,
    spec: Option<&ProfileSpec>,
    [candidates, baselines, trials]: [&[(&str, &Run)]; 3],
    report: &mut ProfileReport,
) {
    if let (Some(s), Some(_)) = (spec, ctx.plan) {
        let all = candidates.iter().chain(baselines).chain(trials);
        report
            .flags
            .extend(crate::analyse::flags::slo_changed(s, all.copied()));
    }
    report.flags.extend(crate::analyse::flags::placed_models(
        candidates.iter().copied(),
    ));
}

/// What the plan asked for and did not get, the flags of what was judged, a stable order.
fn finish(ctx: &Ctx<'_>, valid: bool, report: &mut ProfileReport) {
    completeness(ctx, valid, report);
    flags_of_the_judged(report);
    canonical_order(report);
}

/// A run left out of the comparison raises no flag on the verdict: the flags of a candidate
/// that only left-out runs carry are dropped (its exclusion already says why it is not judged).
fn flags_of_the_judged(report: &mut ProfileReport) {
    let judged = |n: &str| report.candidates.iter().any(|c| c.name == n);
    let only_left_out: Vec<String> = report
        .excluded
        .iter()
        .map(|e| e.candidate.clone())
        .filter(|n| !judged(n))
        .collect();
    report.flags.retain(|f| {
        f.candidate
            .as_ref()
            .is_none_or(|n| !only_left_out.contains(n))
    });
}

/// The runs of another lineage than the records' left out, each with what differs.
fn apart<'a>(
    l: &crate::check::lineage::LineageReport,
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
) -> Vec<(&'a str, &'a Run)> {
    runs.into_iter()
        .filter(|(file, run)| {
            let Some(a) = l.runs_apart.iter().find(|a| a.file == *file) else {
                return true;
            };
            excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: crate::analyse::report::Code::LineageMismatch,
                reason: a.problem.message.clone(),
            });
            false
        })
        .collect()
}

/// A profile whose planned cells are not all measured (or whose sharded tree did not finish)
/// gets no verdict over the rest: `incomplete`, naming each missing cell, the verdict over the
/// measured ones kept as provisional. Two plans or an invalid profile are already incomplete
/// (no verdict over anything), and a broken lineage stays the rejection it is — unless the tree is a sharded run that does not stand
/// for its plan, whose missing pieces may be what breaks it.
fn completeness(ctx: &Ctx<'_>, valid: bool, report: &mut ProfileReport) {
    if ctx.plan_conflict.is_some() || !valid || report.summaries_only {
        return;
    }
    if !ctx.lineage.ready && ctx.held.is_none() && !lineage_missing(ctx.lineage) {
        return;
    }
    let missing = match ctx.plan {
        Some((_, plan)) => crate::analyse::complete::missing(
            &crate::analyse::complete::Context {
                plan,
                runs: ctx.runs,
                shards: ctx.shards,
                refused: ctx.refused,
            },
            report,
        ),
        None => Vec::new(),
    };
    if missing.is_empty() && ctx.held.is_none() {
        return;
    }
    let empty = missing.is_empty();
    if report.decision == crate::analyse::verdict::ProfileDecision::Incomplete && !empty {
        // Held already (a lineage record missing): the missing cells are said too.
        report.reason = format!(
            "{}; {}",
            report.reason,
            crate::analyse::complete::reason(&missing)
        );
        report.missing = missing;
        return;
    }
    crate::analyse::complete::hold(report, missing);
    if let Some(held) = &ctx.held {
        if empty {
            crate::analyse::complete::hold_for(report, held);
        } else {
            report.reason = format!("{}; {held}", report.reason);
        }
    }
}

/// Each candidate's cost per million output tokens at the plan's price.
fn cost(plan: Option<&crate::schema::Plan>, report: &mut ProfileReport) {
    let price = match plan.map(crate::schema::price) {
        None | Some(Ok(None)) => return,
        Some(Ok(Some(p))) => Ok(p),
        Some(Err(e)) => Err(e),
    };
    if let Ok((usd, gpus)) = price {
        for c in &mut report.candidates {
            c.cost_per_million_output_tokens_usd = c
                .metric(crate::base::metric::Metric::THROUGHPUT)
                .filter(|&t| t > 0.0)
                .map(|t| usd * f64::from(gpus) / 3600.0 / t * 1e6);
        }
    }
    report.price = Some(price);
}

/// Flags and exclusions in an order the evidence decides — code (the catalogue's order, then
/// the selection's own), candidate, words — and only then the file name: files given in
/// another order or under other names give the same report.
fn canonical_order(report: &mut ProfileReport) {
    crate::base::order::sort_by(&mut report.flags, |a, b| {
        (a.code, &a.candidate, &a.message).cmp(&(b.code, &b.candidate, &b.message))
    });
    crate::base::order::sort_by(&mut report.excluded, |a, b| {
        (a.code, &a.candidate, &a.reason, &a.file).cmp(&(b.code, &b.candidate, &b.reason, &b.file))
    });
}

fn empty_report(
    name: ProfileName,
    spec: Option<&ProfileSpec>,
    defined_in: Option<String>,
    contract: &Result<Profile, Vec<Problem>>,
    knob: Option<String>,
) -> ProfileReport {
    let profile = contract.as_ref().ok();
    ProfileReport {
        profile: name.as_str().to_string(),
        decision: Decision::Reject,
        recommended_name: None,
        reason: String::new(),
        contract_issues: contract.as_ref().err().cloned().unwrap_or_default(),
        defined_in,
        workload: spec.and_then(|s| s.workload.clone()),
        primary_metric: spec.and_then(|s| s.primary_metric.clone()),
        primary_direction: profile.map(|p| p.primary_metric.direction()),
        slo: profile.map(Profile::slo_limits).unwrap_or_default(),
        knob,
        candidates: Vec::new(),
        excluded: Vec::new(),
        binding_slo: None,
        confidence: None,
        baseline: None,
        flags: Vec::new(),
        capacity: None,
        search: None,
        summaries_only: false,
        price: None,
        missing: Vec::new(),
        provisional: None,
    }
}

/// The candidates' reports: distinct runs (pooled when asked, and a pooled run passes the
/// invariants again as the run it now is), those that finished with data, each summarised.
fn candidates<'a>(
    ctx: &Ctx<'_>,
    expect: &Expect<'_>,
    profile: Option<&Profile>,
    runs: &[(&'a str, &'a Run)],
    report: &mut ProfileReport,
) -> Vec<(String, std::borrow::Cow<'a, Run>)> {
    let thresholds = profile.map_or_else(Thresholds::default, |p| Thresholds::from_slo(&p.slo));
    let runs = crate::analyse::compare::distinct_runs(
        runs,
        ctx.pool_reruns,
        &mut report.flags,
        &mut report.excluded,
    );
    let mut used = Vec::new();
    for (file, cow) in runs {
        let pooled = matches!(cow, std::borrow::Cow::Owned(_));
        let (file, run) = (file.as_str(), &*cow);
        if pooled {
            let pooled_expect = crate::check::run::Expect {
                pooled: true,
                ..*expect
            };
            let found = crate::check::run::examine(run, &pooled_expect);
            if !screen::apply(file, run, found, &mut report.excluded, &mut report.flags) {
                continue;
            }
        }
        match crate::analyse::compare::comparable(run) {
            Err((code, reason)) => report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code,
                reason,
            }),
            Ok(()) => {
                let c = crate::analyse::compare::candidate_report(file, run, profile, &thresholds);
                if let Some(kept) = ctx.kept {
                    kept.borrow_mut().push(crate::analyse::compare::Kept {
                        profile: report_name(report),
                        candidate: c.name.clone(),
                        run: run.clone(),
                    });
                }
                crate::analyse::flags::repeat_artefact(&c, &mut report.flags);
                report.candidates.push(c);
                used.push((run.candidate.name.clone(), cow.clone()));
            }
        }
    }
    used
}

fn report_name(report: &ProfileReport) -> ProfileName {
    ProfileName::parse(&report.profile).unwrap_or(ProfileName::Latency)
}

fn order_like_plan(plan: Option<&Plan>, cands: &mut [CandidateReport]) {
    if let Some(plan) = plan {
        let pos = |n: &str| {
            plan.candidates
                .iter()
                .position(|c| c.name == n)
                .unwrap_or(usize::MAX)
        };
        crate::base::order::sort_by_key(cands, |c| pos(&c.name));
    }
}

/// The capacity search's result from the trial runs; with `rank_by = "capacity"` or
/// `"goodput"` it decides
/// the profile (when the lineage and contract allow any decision).
fn capacity(
    ctx: &Ctx<'_>,
    profile: Option<&Profile>,
    trial_runs: &[(&str, &Run)],
    report: &mut ProfileReport,
) {
    let search = profile.and_then(|p| p.search.as_ref().map(|s| (p, s)));
    let Some((profile, search)) = search else {
        for (file, run) in trial_runs {
            report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: crate::analyse::report::Code::TrialWithoutSearch,
                reason: "a capacity-search trial, but the profile declares no search".into(),
            });
        }
        return;
    };
    let order: Vec<String> = ctx
        .plan
        .map(|p| p.1.candidates.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default();
    let cap = crate::analyse::capacity::capacity_report(profile, search, trial_runs, &order);
    trials_shown(search, trial_runs, &cap, report);
    if search.rank_by != crate::analyse::capacity::RankBy::FixedLoad && ctx.lineage.ready {
        let v = held_to_fixed_load(crate::analyse::capacity::decide(&cap), report);
        report.decision = v.0;
        report.recommended_name = v.1;
        report.reason = v.2;
        report.confidence = None;
        for c in &mut report.candidates {
            c.chosen = report.recommended_name.as_deref() == Some(c.name.as_str());
        }
    }
    report.capacity = Some(cap);
}

/// A capacity verdict held to the candidate's own run at the workload's load: an `accept` whose
/// fixed-load run fails an SLO there (by its interval) contradicts itself, and is `tune`.
fn held_to_fixed_load(
    v: (Decision, Option<String>, String),
    report: &ProfileReport,
) -> (Decision, Option<String>, String) {
    if v.0 != Decision::Accept {
        return v;
    }
    let Some(c) =
        v.1.as_deref()
            .and_then(|n| report.candidates.iter().find(|c| c.name == n))
    else {
        return v;
    };
    let failed: Vec<String> = c
        .slo_checks
        .iter()
        .filter(|k| k.outcome == crate::analyse::evidence::SloOutcome::Fail)
        .map(|k| {
            format!(
                "{} {} against a limit of {}",
                k.metric,
                k.value
                    .map_or("not measured".into(), crate::base::fmt::format_number),
                crate::base::fmt::format_number(k.limit)
            )
        })
        .collect();
    if failed.is_empty() {
        return v;
    }
    (
        Decision::Tune,
        v.1,
        format!(
            "{}; but its own run at the workload's load fails {} (by its 95% interval): the \
             trials and that run contradict each other",
            v.2,
            failed.join(", ")
        ),
    )
}

/// Every trial the capacity does not rest on is named in the profile's own lists: a trial left
/// out, with its reason, and a pass above a failing load (a search that is not monotone).
fn trials_shown(
    search: &crate::analyse::capacity::Search,
    trial_runs: &[(&str, &Run)],
    cap: &crate::analyse::capacity::CapacityReport,
    report: &mut ProfileReport,
) {
    use crate::analyse::report::Code;
    for (file, run) in trial_runs {
        if let Err(why) = crate::analyse::capacity::usable(search, run) {
            report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: Code::TrialNotUsed,
                reason: format!("capacity trial not used: {why}"),
            });
        }
    }
    for k in cap
        .candidates
        .iter()
        .filter(|k| !k.passes_above_fail.is_empty())
    {
        let loads: Vec<String> = k
            .passes_above_fail
            .iter()
            .map(|&l| crate::analyse::capacity::load_text(search.over, l))
            .collect();
        report.flags.push(crate::analyse::report::Flag {
            code: Code::NonMonotoneTrials,
            candidate: Some(k.name.clone()),
            message: format!(
                "{} passed at {} above its first failing load {}: the trials contradict each \
                 other (noise, or a server that recovers); the capacity uses the first fail",
                k.name,
                loads.join(", "),
                k.first_fail
                    .map_or("–".into(), |f| crate::analyse::capacity::load_text(
                        search.over,
                        f
                    )),
            ),
        });
    }
}

/// Picks a replayed file (name, hash) out of a workload.
type FileOf = dyn Fn(&WorkloadSpec) -> Option<(&str, Option<&str>)>;

/// A plan names the dataset or trace a profile replays, usually without its hash; the runs
/// record the hash of what they read. The profile takes the hash of the first run (by file
/// name) that replayed a file of that name, so runs that read other bytes under the same name
/// are not compared with it.
fn with_replayed_hashes<'a>(
    mut spec: ProfileSpec,
    runs: impl Iterator<Item = (&'a str, &'a Run)>,
) -> ProfileSpec {
    let Some(w) = spec.workload.as_mut() else {
        return spec;
    };
    let mut runs: Vec<(&str, &Run)> = runs.collect();
    crate::base::order::sort_by(&mut runs, |a, b| a.0.cmp(b.0));
    let theirs = |pick: &FileOf, name: &str| {
        runs.iter().find_map(|(_, r)| {
            let (file, hash) = pick(r.profile_spec.as_ref()?.workload.as_ref()?)?;
            (crate::schema::replay::file_name(file) == name)
                .then(|| hash.map(str::to_owned))
                .flatten()
        })
    };
    if let Some(d) = w.dataset.as_mut().filter(|d| d.sha256.is_none()) {
        d.sha256 = theirs(
            &|w| {
                w.dataset
                    .as_ref()
                    .map(|d| (d.file.as_str(), d.sha256.as_deref()))
            },
            crate::schema::replay::file_name(&d.file),
        );
    }
    if let Some(t) = w.trace.as_mut().filter(|t| t.sha256.is_none()) {
        t.sha256 = theirs(
            &|w| {
                w.trace
                    .as_ref()
                    .map(|t| (t.file.as_str(), t.sha256.as_deref()))
            },
            crate::schema::replay::file_name(&t.file),
        );
    }
    spec
}
