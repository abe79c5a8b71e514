//! The seed's step 5: run an external benchmark once per profile (`{profile}` in a command
//! template), then import its result file (vLLM `--save-result` JSON). Such runs are marked
//! `source: imported`; a failed command or a missing file gives a `failed` run with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sloscope_core::schema::{EvidenceLevel, Repeat, RunSource, RunStatus};

use crate::config::{fill_template, RunPlan};
use crate::runner::{rfc3339_now, skeleton_for};
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
) -> anyhow::Result<Vec<(PathBuf, RunStatus)>> {
    for d in ["runs", "lineage", "logs"] {
        std::fs::create_dir_all(out.join(d))?;
    }
    write::json(&out.join("plan.json"), &plan.raw)?;
    for ((_, bytes), kind) in plan
        .lineage_files
        .iter()
        .zip(["gate", "baseline", "deployment"])
    {
        write::atomic(&out.join("lineage").join(format!("{kind}.json")), bytes)?;
    }
    let cand = match &ext.candidate {
        Some(n) => plan
            .candidates
            .iter()
            .find(|c| &c.name == n)
            .ok_or_else(|| {
                anyhow::anyhow!("--import-candidate {n:?} is not a candidate of the plan")
            })?,
        None => plan
            .candidates
            .first()
            .ok_or_else(|| anyhow::anyhow!("the plan has no candidates"))?,
    };
    let mut written = Vec::new();
    for p in &plan.profiles {
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
        let command = fill_template(&ext.command_template, &vars).map_err(anyhow::Error::msg)?;
        let result =
            PathBuf::from(fill_template(&ext.result_template, &vars).map_err(anyhow::Error::msg)?);
        if !quiet {
            eprintln!("{}: running {command}", p.name);
        }
        let mut run = skeleton_for(plan, cand, p);
        run.source = RunSource::Imported;
        run.server = None;
        let outcome = std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .output();
        let log = out.join("logs").join(format!("external-{}.log", p.name));
        let failure = match outcome {
            Err(e) => Some(format!("cannot run the command: {e}")),
            Ok(o) => {
                let mut text = o.stdout.clone();
                text.extend_from_slice(&o.stderr);
                let _ = std::fs::write(&log, &text);
                let tail: String = String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .rev()
                    .take(10)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                if !o.status.success() {
                    Some(format!("the command exited with {}: {tail}", o.status))
                } else if !result.exists() {
                    Some(format!("benchmark result missing: {}", result.display()))
                } else {
                    None
                }
            }
        };
        match failure {
            Some(f) => {
                run.status = RunStatus::Failed;
                run.evidence_level = EvidenceLevel::FailedBackendProfile;
                run.failure = Some(f);
            }
            None => {
                let bytes = std::fs::read(&result)?;
                match sloscope_core::import::vllm(&result.display().to_string(), &bytes) {
                    Err(e) => {
                        run.status = RunStatus::Failed;
                        run.evidence_level = EvidenceLevel::FailedBackendProfile;
                        run.failure = Some(e);
                    }
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
            }
        }
        run.finished_at = Some(rfc3339_now());
        let path = out
            .join("runs")
            .join(format!("{}--{}.json", p.name, cand.name));
        write::json_compact(&path, &run)?;
        written.push((path, run.status));
    }
    Ok(written)
}
