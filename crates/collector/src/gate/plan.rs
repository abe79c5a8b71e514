//! `sloscope gate --plan`: the plan's `[gate]` section and its two servers — the quantized
//! model on a candidate's configuration, the float model on the baseline's — launched as `run`
//! launches them (the same command template, variables and health check), or reached at their
//! endpoints. The lineage records are the plan's, and the record written replaces the plan's
//! gate record.

use std::path::{Path, PathBuf};

use sloscope_core::schema::{Deployment, FloatBaseline, PlanGateLimits, Role};

use crate::cancel::Cancel;
use crate::plan::config::{load_plan, Overrides, RunPlan};
use crate::plan::target::TargetSpec;
use crate::server::process::{LaunchError, Launched};
use crate::server::target;

/// What the plan says about the gate, resolved.
pub struct PlanGate {
    /// The `[gate]` section.
    pub section: PlanGateLimits,
    /// The evaluation set, resolved against the plan's folder.
    pub eval: PathBuf,
    /// The plan's quality-gate record (`[lineage].gate`): where the measured record goes.
    pub out: PathBuf,
    /// The deployment record.
    pub deployment: Deployment,
    /// The float-baseline record.
    pub baseline: FloatBaseline,
    /// The quantized model's server.
    pub quantized: TargetSpec,
    /// The float model's server.
    pub float: TargetSpec,
    plan: RunPlan,
}

/// Reads the plan and its `[gate]` section; names the field when something is missing.
pub fn from_plan(path: &Path) -> Result<PlanGate, String> {
    let plan = load_plan(path, &Overrides::default()).map_err(|e| e.to_string())?;
    let shown = path.display();
    let no_eval =
        || format!("{shown}: no [gate] section: expected at least `eval` (the evaluation set)");
    let section = plan.raw.plan.gate.clone().ok_or_else(no_eval)?;
    let eval = section.eval.clone().ok_or_else(no_eval)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut targets = crate::load::runner::targets(&plan);
    let names: Vec<String> = plan.candidates.iter().map(|c| c.name.clone()).collect();
    let wanted = section.candidate.clone().or_else(|| names.first().cloned());
    let pick = |targets: &mut Vec<TargetSpec>, role: Role, name: Option<&str>| {
        let at = targets
            .iter()
            .position(|t| t.role == role && name.is_none_or(|n| t.name == n))?;
        Some(targets.remove(at))
    };
    let quantized = pick(&mut targets, Role::Candidate, wanted.as_deref()).ok_or_else(|| {
        format!(
            "{shown}: gate.candidate {:?}: not a candidate of the plan (candidates: {})",
            wanted.unwrap_or_default(),
            names.join(", ")
        )
    })?;
    let float = pick(&mut targets, Role::Baseline, None).ok_or_else(|| {
        format!("{shown}: [gate] needs a [baseline]: the float model's server configuration")
    })?;
    Ok(PlanGate {
        eval: dir.join(eval),
        out: dir.join(&plan.raw.lineage.gate),
        deployment: plan.deployment.clone(),
        baseline: plan.baseline_record.clone(),
        section,
        quantized,
        float,
        plan,
    })
}

/// A server reached for the gate; stopped when dropped through [`Reached::stop`].
pub struct Reached {
    /// Its base URL.
    pub url: String,
    launched: Option<Launched>,
}

impl Reached {
    /// Stops the server if sloscope started it.
    pub async fn stop(self) {
        if let Some(l) = self.launched {
            let _ = l.stop().await;
        }
    }
}

impl PlanGate {
    /// The base URL of `t`'s server, launching it when the plan has a command (its log in
    /// `logs`).
    pub async fn reach(&self, t: &TargetSpec, logs: &Path) -> Result<Reached, String> {
        if t.command.is_none() {
            let url = t
                .endpoint
                .clone()
                .ok_or_else(|| format!("target {}: no endpoint and no server command", t.name))?;
            return Ok(Reached {
                url,
                launched: None,
            });
        }
        std::fs::create_dir_all(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let log = logs.join(format!("gate-{}.log", t.name));
        let (all, one) = (Cancel::default(), Cancel::default());
        let Some(launched) = target::launch(&self.plan, t, &log, None, &all, &one).await else {
            return Err(format!("target {}: no server command", t.name));
        };
        match launched {
            Ok(l) => Ok(Reached {
                url: l.base_url.clone(),
                launched: Some(l),
            }),
            Err(LaunchError::Cancelled) => Err(format!("the server for {} was cancelled", t.name)),
            Err(LaunchError::Failed(e)) => Err(format!(
                "the server for {} did not start: {e} (log: {})",
                t.name,
                log.display()
            )),
        }
    }
}
