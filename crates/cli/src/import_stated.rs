//! `sloscope import FILES --profile P --slo METRIC=LIMIT …`: other tools' files judged under
//! SLOs stated on the command line, as the page's "state what they measured and the SLOs"
//! judges them — the same core functions (`units`, `stated_plan`, `assign`), so the plan and
//! the runs written here are the page's. Writes `plan.json`, the runs and (with `--lineage`)
//! the lineage records into the output directory, ready for `analyze`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sloscope_collector::record::write;
use sloscope_core::input::{
    assign, default_candidates, default_primary, join_imported, stated_plan, units, StatedPlace,
    StatedProfile, Statement,
};
use sloscope_core::schema::{Deployment, Run};
use sloscope_core::{Document, LoadedFile};

use crate::exit::Import;

/// What was asked.
pub struct Stated {
    pub files: Vec<PathBuf>,
    pub out: PathBuf,
    pub profile: String,
    pub candidate: Option<String>,
    pub slo: Vec<String>,
    pub primary_metric: Option<String>,
    pub lineage: Option<PathBuf>,
}

/// Runs the command.
pub fn run(a: &Stated) -> anyhow::Result<ExitCode> {
    // The plan written is the folder's only plan: beside another plan's runs, or an earlier
    // import's, the two would be read as one collection.
    if std::fs::read_dir(&a.out).is_ok_and(|mut d| d.next().is_some()) {
        return bad(&format!(
            "--out {}: not empty; a stated plan and its runs need a folder of their own (an earlier import's runs, or another plan's, would be read with them)",
            a.out.display()
        ));
    }
    let slo = match limits(&a.slo) {
        Ok(s) => s,
        Err(e) => return bad(&e),
    };
    let deployment = match a.lineage.as_deref().map(read_deployment).transpose() {
        Ok(d) => d,
        Err(e) => return bad(&e),
    };
    let (read, failed) = read_files(&a.files);
    let refs: Vec<&LoadedFile> = read.iter().collect();
    let joined = join_imported(&refs);
    let units = units(&refs, &joined);
    if units.is_empty() {
        return bad("none of the files holds a measurement to judge");
    }
    let names: Vec<&str> = units.iter().map(|u| u.name).collect();
    let candidates = match &a.candidate {
        Some(c) => vec![c.clone(); units.len()],
        None => default_candidates(&names, &[]),
    };
    let st = statement(a, slo, units.len(), &candidates);
    let given: Vec<(&str, &[(String, Run)])> = units.iter().map(|u| (u.name, u.runs)).collect();
    let plan = match stated_plan(&st, &given) {
        Ok(p) => p,
        Err(e) => return bad(&e),
    };
    let (written, skipped) =
        match write_out(a, (&read, &units, &candidates), &plan, deployment.as_ref()) {
            Ok(x) => x,
            Err(Stop::Bad(why)) => return bad(&why),
            Err(Stop::Write(path, e)) => {
                eprintln!("sloscope: cannot write {}: {e}", path.display());
                return Ok(ExitCode::from(Import::Output));
            }
        };
    for f in &failed {
        eprintln!("sloscope: not imported: {f}");
    }
    for s in &skipped {
        eprintln!("sloscope: skipped: {s}");
    }
    eprintln!(
        "sloscope: wrote the plan stated ({} under {}) and {written} run files to {} (analyse with: sloscope analyze {})",
        a.slo.join(", "),
        a.profile,
        a.out.display(),
        a.out.display()
    );
    Ok(ExitCode::from(if failed.is_empty() {
        Import::Ok
    } else {
        Import::Bad
    }))
}

/// Why writing stopped.
enum Stop {
    /// A unit could not be placed in the plan.
    Bad(String),
    /// This could not be written.
    Write(PathBuf, std::io::Error),
}

/// The one profile stated, each unit its candidate.
fn statement(a: &Stated, slo: BTreeMap<String, f64>, n: usize, candidates: &[String]) -> Statement {
    Statement {
        profiles: vec![StatedProfile {
            name: a.profile.clone(),
            primary_metric: a
                .primary_metric
                .clone()
                .unwrap_or_else(|| default_primary(&a.profile).to_string()),
            slo,
        }],
        places: (0..n)
            .map(|i| StatedPlace {
                file: i,
                profile: a.profile.clone(),
                candidate: candidates[i].clone(),
            })
            .collect(),
    }
}

/// Each unit's runs placed in `plan`, the plan and the lineage records, written into the
/// output directory: how many runs, and what was folded in or left out.
fn write_out(
    a: &Stated,
    (read, units, candidates): (&[LoadedFile], &[sloscope_core::input::Unit<'_>], &[String]),
    plan: &sloscope_core::schema::Plan,
    deployment: Option<&Deployment>,
) -> Result<(usize, Vec<String>), Stop> {
    let unwritten = |path: PathBuf, e| Stop::Write(path, e);
    let runs_dir = a.out.join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(|e| unwritten(runs_dir.clone(), e))?;
    let (mut written, mut skipped) = (0, Vec::new());
    for (n, (u, cand)) in units.iter().zip(candidates).enumerate() {
        skipped.extend(u.parts.iter().map(|&i| {
            format!(
                "{}: one run with {} (the same measurement)",
                read[i].name, u.name
            )
        }));
        let made =
            assign(u.name, u.runs, plan, deployment, (&a.profile, cand)).map_err(Stop::Bad)?;
        skipped.extend(made.skipped);
        for (i, (_, run)) in made.runs.iter().enumerate() {
            // Per unit and benchmark: files given one candidate never overwrite each other.
            let path = runs_dir.join(format!("{}--{cand}--import{n:02}-{i:02}.json", a.profile));
            write::json_compact(&path, run).map_err(|e| unwritten(path.clone(), e))?;
            written += 1;
        }
    }
    let plan_file = a.out.join("plan.json");
    write::json_compact(&plan_file, plan).map_err(|e| unwritten(plan_file.clone(), e))?;
    if let Some(dir) = &a.lineage {
        let to = a.out.join("lineage");
        copy_lineage(dir, &to).map_err(|e| unwritten(to.clone(), e))?;
    }
    Ok((written, skipped))
}

fn bad(why: &str) -> anyhow::Result<ExitCode> {
    eprintln!("sloscope: {why}");
    Ok(ExitCode::from(Import::Bad))
}

/// `METRIC=LIMIT` pairs, each limit a number 0 or more.
fn limits(given: &[String]) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    for g in given {
        let (metric, text) = g
            .split_once('=')
            .filter(|(m, _)| !m.trim().is_empty())
            .ok_or_else(|| format!("--slo {g:?}: expected METRIC=LIMIT, e.g. ttft_p95_ms=200"))?;
        let v = text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!("--slo {g:?}: {text:?} is not a limit: expected a number, 0 or more")
            })?;
        if out.insert(metric.trim().to_string(), v + 0.0).is_some() {
            return Err(format!("--slo: {metric} is given twice"));
        }
    }
    Ok(out)
}

/// Each file as the page reads it without a plan (a file given twice, once; a file another
/// tool writes beside its results with no measurement of its own, such as AIPerf's warm-up
/// phase summary, set aside and said); the ones that cannot be read, with why.
fn read_files(files: &[PathBuf]) -> (Vec<LoadedFile>, Vec<String>) {
    let mut read = Vec::new();
    let mut failed = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for f in files {
        let key = f.canonicalize().unwrap_or_else(|_| f.clone());
        if seen.contains(&key) {
            eprintln!("sloscope: skipped: {}: given twice, read once", f.display());
            continue;
        }
        seen.push(key);
        let name = f.display().to_string();
        match std::fs::read(f) {
            Err(e) => failed.push(format!("{name}: cannot read: {e}")),
            Ok(bytes) => match sloscope_core::read_document(&name, bytes) {
                Ok(doc @ Document::Imported(_)) => read.push(LoadedFile { name, doc }),
                Ok(Document::Aside(what)) => {
                    eprintln!("sloscope: skipped: {name}: set aside: {what}");
                }
                Ok(_) => failed.push(format!(
                    "{name}: a sloscope file, not another tool's result (analyse it with the runs instead)"
                )),
                Err(e) => failed.push(e.to_string()),
            },
        }
    }
    (read, failed)
}

fn read_deployment(dir: &Path) -> Result<Deployment, String> {
    let path = dir.join("deployment.json");
    let bytes =
        std::fs::read(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    match sloscope_core::read_document(&path.display().to_string(), bytes) {
        Ok(Document::Deployment(d)) => Ok(d),
        Ok(_) => Err(format!("{}: not a deployment record", path.display())),
        Err(e) => Err(e.to_string()),
    }
}

/// The lineage records of `from` (those present), copied into `to`.
fn copy_lineage(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for name in ["deployment.json", "gate.json", "baseline.json"] {
        let src = from.join(name);
        if src.exists() {
            std::fs::copy(&src, to.join(name))?;
        }
    }
    Ok(())
}
