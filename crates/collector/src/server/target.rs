//! A plan target's server, launched the one way `run` and `gate` both use: its command
//! template filled with the target's placeholders (the plan's vars, `{value}`, the knob,
//! `{name}`, `{model_path}`, `{api_key}` when a key is given), the plan's health path and
//! timeout.

use std::path::Path;
use std::time::Duration;

use crate::cancel::Cancel;
use crate::plan::config::RunPlan;
use crate::plan::target::TargetSpec;
use crate::server::process::{self, LaunchError, Launched};
use crate::wire::secret::Secret;

/// Launches `t`'s server with its log at `log`; `None` when the target has no command (an
/// endpoint to reach instead).
pub async fn launch(
    plan: &RunPlan,
    t: &TargetSpec,
    log: &Path,
    api_key: Option<&Secret>,
    cancel: &Cancel,
    target: &Cancel,
) -> Option<Result<Launched, LaunchError>> {
    let template = t.command.as_deref()?;
    let mut vars = t.command_vars(&plan.raw.plan.knob, &plan.raw.vars);
    if let Some(k) = api_key {
        vars.insert("api_key".into(), k.expose().to_string());
    }
    let tgt = &plan.raw.target;
    let spec = process::LaunchSpec {
        template,
        vars: &vars,
        log_path: log,
        health_path: &tgt.health_path,
        health_timeout: Duration::from_secs_f64(tgt.health_timeout_s),
        api_key,
    };
    Some(process::launch(&spec, cancel, target).await)
}
