//! The seed's step 5: run an external benchmark once per profile (`{profile}` in a command
//! template), then import its result file (vLLM `--save-result` JSON). Such runs are marked
//! `source: imported`; a failed command or a missing file gives a `failed` run with the reason.
//! The output directory is the same [`Layout`] as a native collection's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sloscope_core::contract::Profile;
use sloscope_core::schema::{Candidate, EvidenceLevel, Repeat, Role, Run, RunSource, RunStatus};

use crate::clock::rfc3339_now;
use crate::config::{fill_template, RunPlan};
use crate::error::CollectError;
use crate::layout::Layout;
use crate::runner::{skeleton_for, write_copies};
use crate::write;

/// The external benchmark to run.
pub struct External {
    /// Shell command with `{profile}` (and `{workload_id}`, `{concurrency}`, `{prompt_tokens}`,
    /// `{max_output_tokens}`, `{requests}`, `{out}`).
    pub command_template: String,
    /// Where the command leaves its result, with the same placeholders.
    pub result_template: String,
    /// Which plan candidate the external benchmark measured.
    pub candidate: Option<String>,
}

/// Runs the external benchmark for every profile of the plan and writes run files.
pub fn run(
    plan: &RunPlan,
    ext: &External,
    out: &Path,
    quiet: bool,
) -> Result<Vec<(PathBuf, RunStatus)>, CollectError> {
    let layout = Layout::new(out);
    write_copies(plan, &layout, &crate::secret::Redactor::default())?;
    let cand = candidate(plan, ext.candidate.as_deref())?;
    let mut written = Vec::new();
    for p in &plan.profiles {
        let vars = template_vars(p, out);
        let command = fill_template(&ext.command_template, &vars).map_err(CollectError::Plan)?;
        let result =
            PathBuf::from(fill_template(&ext.result_template, &vars).map_err(CollectError::Plan)?);
        if !quiet {
            eprintln!("{}: running {command}", p.name);
        }
        if p.search.is_some() {
            // Shown even with --quiet: the plan asks for something this path does not do.
            eprintln!(
                "{}: the profile's capacity search is not run through --command-template (only the fixed load); run sloscope's own collector for it",
                p.name
            );
        }
        let mut run = skeleton_for(plan, cand, p);
        run.source = RunSource::Imported;
        run.server = None;
        match run_command(&command, &result, &layout.external_log(p.name.as_str())) {
            Err(f) => fail(&mut run, f),
            Ok(()) => import(&mut run, &result)?,
        }
        run.finished_at = Some(rfc3339_now());
        let path = layout.run(p.name.as_str(), Role::Candidate, &cand.name);
        write::json_compact(&path, &run).map_err(CollectError::write(path.clone()))?;
        written.push((path, run.status));
    }
    Ok(written)
}

fn candidate<'a>(plan: &'a RunPlan, name: Option<&str>) -> Result<&'a Candidate, CollectError> {
    match name {
        Some(n) => plan.candidates.iter().find(|c| c.name == n).ok_or_else(|| {
            CollectError::Plan(format!(
                "--import-candidate {n:?} is not a candidate of the plan"
            ))
        }),
        None => plan
            .candidates
            .first()
            .ok_or_else(|| CollectError::Plan("the plan has no candidates".into())),
    }
}

/// The placeholders of the command and result templates.
fn template_vars(p: &Profile, out: &Path) -> BTreeMap<String, String> {
    let w = &p.workload;
    let mut vars = BTreeMap::new();
    vars.insert("profile".to_string(), p.name.as_str().to_string());
    vars.insert("workload_id".to_string(), p.workload_id.clone());
    for (k, v) in [
        ("concurrency", w.concurrency),
        ("prompt_tokens", w.prompt_tokens),
        ("max_output_tokens", w.max_output_tokens),
        ("requests", w.requests_per_repeat),
    ] {
        vars.insert(k.to_string(), v.map(|x| x.to_string()).unwrap_or_default());
    }
    vars.insert("out".to_string(), out.display().to_string());
    vars
}

/// Runs the command with its output in `log`; `Err` says why there is no result to import.
fn run_command(command: &str, result: &Path, log: &Path) -> Result<(), String> {
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .map_err(|e| format!("cannot run the command: {e}"))?;
    let mut text = o.stdout.clone();
    text.extend_from_slice(&o.stderr);
    if let Err(e) = std::fs::write(log, &text) {
        eprintln!("sloscope: {}: cannot write the log: {e}", log.display());
    }
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        return Err(format!("the command exited with {}: {tail}", o.status));
    }
    if !result.exists() {
        return Err(format!("benchmark result missing: {}", result.display()));
    }
    Ok(())
}

fn fail(run: &mut Run, why: String) {
    run.status = RunStatus::Failed;
    run.evidence_level = EvidenceLevel::FailedBackendProfile;
    run.failure = Some(why);
}

/// Imports the result file into `run`.
fn import(run: &mut Run, result: &Path) -> Result<(), CollectError> {
    let bytes = std::fs::read(result).map_err(|source| CollectError::Read {
        path: result.to_path_buf(),
        source,
    })?;
    match sloscope_core::import::vllm(&result.display().to_string(), &bytes) {
        Err(e) => fail(run, e),
        Ok(im) => {
            run.imported_from = Some(format!("{} ({})", result.display(), im.format));
            run.notes.extend(im.notes);
            run.reported = Some(im.reported);
            if let Some(req) = im.requests {
                run.repeats.push(Repeat {
                    index: 0,
                    requests: req,
                    ..Default::default()
                });
            }
        }
    }
    Ok(())
}
