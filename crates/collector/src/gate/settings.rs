//! What a gate is measured with: each value given on the command line, else the plan's `[gate]`
//! field, else the core's default ([`sloscope_core::gate`]); every value checked.

use std::path::PathBuf;
use std::time::Duration;

use sloscope_core::gate::{
    threshold_problem, DEFAULT_MAX_TOKENS, DEFAULT_THRESHOLDS, DEFAULT_TOP_K,
};
use sloscope_core::schema::{GateThresholds, PlanGateLimits};

use super::shapes::Backend;

/// The values given on the command line; `None` where not given.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// The backend.
    pub backend: Option<Backend>,
    /// Log-probabilities per position and side.
    pub top_k: Option<u32>,
    /// Each text is cut to this many tokens.
    pub max_tokens: Option<usize>,
    /// llama-perplexity's chunk size.
    pub chunk: Option<usize>,
    /// Largest mean KL divergence, nats.
    pub kld_mean_max: Option<f64>,
    /// Smallest top-1 agreement.
    pub top1_min: Option<f64>,
    /// Largest perplexity ratio.
    pub ppl_ratio_max: Option<f64>,
    /// Per request, seconds.
    pub timeout_s: f64,
    /// Notes for the record.
    pub notes: Option<String>,
    /// The evaluation set.
    pub eval: Option<PathBuf>,
    /// Where the record goes.
    pub out: Option<PathBuf>,
}

/// Everything resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The backend both servers run.
    pub backend: Backend,
    /// Log-probabilities per position and side.
    pub top_k: u32,
    /// Each text is cut to this many tokens.
    pub max_tokens: usize,
    /// llama-perplexity's chunk size.
    pub chunk: Option<usize>,
    /// The limits.
    pub thresholds: GateThresholds,
    /// Per request.
    pub timeout: Duration,
    /// Notes for the record.
    pub notes: Option<String>,
    /// The evaluation set.
    pub eval: PathBuf,
    /// Where the record goes.
    pub out: PathBuf,
}

fn backend(given: Option<Backend>, s: Option<&PlanGateLimits>) -> Result<Backend, String> {
    if let Some(b) = given {
        return Ok(b);
    }
    match s.and_then(|s| s.backend.as_deref()) {
        None | Some("llama") => Ok(Backend::Llama),
        Some("vllm") => Ok(Backend::Vllm),
        Some("sglang") => Ok(Backend::Sglang),
        Some(other) => Err(format!(
            "gate.backend {other:?}: expected \"llama\", \"vllm\" or \"sglang\""
        )),
    }
}

/// Each given value, else the plan's field, else the default; every value checked. `eval` and
/// `out` are the plan's, resolved against its folder, when a plan is used.
pub fn resolve(
    g: &Given,
    s: Option<&PlanGateLimits>,
    eval: Option<PathBuf>,
    out: Option<PathBuf>,
) -> Result<Settings, String> {
    let d = DEFAULT_THRESHOLDS;
    let t = GateThresholds {
        kld_mean_max: g
            .kld_mean_max
            .or(s.and_then(|s| s.kld_mean_max))
            .unwrap_or(d.kld_mean_max),
        top1_min: g
            .top1_min
            .or(s.and_then(|s| s.top1_min))
            .unwrap_or(d.top1_min),
        ppl_ratio_max: g
            .ppl_ratio_max
            .or(s.and_then(|s| s.ppl_ratio_max))
            .unwrap_or(d.ppl_ratio_max),
    };
    let out = Settings {
        backend: backend(g.backend, s)?,
        top_k: g.top_k.or(s.and_then(|s| s.top_k)).unwrap_or(DEFAULT_TOP_K),
        max_tokens: g
            .max_tokens
            .or(s.and_then(|s| s.max_tokens))
            .unwrap_or(DEFAULT_MAX_TOKENS),
        chunk: g.chunk.or(s.and_then(|s| s.chunk)),
        thresholds: t,
        timeout: Duration::from_secs_f64(g.timeout_s.clamp(0.001, 1e6)),
        notes: g.notes.clone().or(s.and_then(|s| s.notes.clone())),
        eval: g
            .eval
            .clone()
            .or(eval)
            .ok_or("--eval: expected the evaluation set (or --plan)")?,
        out: g
            .out
            .clone()
            .or(out)
            .ok_or("--out: expected where to write the record (or --plan)")?,
    };
    check(&out, g.timeout_s)?;
    Ok(out)
}

fn check(s: &Settings, timeout_s: f64) -> Result<(), String> {
    if let Some(p) = threshold_problem(&s.thresholds) {
        return Err(p);
    }
    if let Some(n) = s.chunk.filter(|&n| n < 4 || n > s.max_tokens) {
        return Err(format!(
            "chunk {n}: expected 4 to max_tokens ({}) tokens",
            s.max_tokens
        ));
    }
    let timeout_ok = timeout_s.is_finite() && timeout_s > 0.0;
    if s.top_k == 0 || s.top_k > 1000 || s.max_tokens < 2 || !timeout_ok {
        return Err(
            "top_k: expected 1 to 1000; max_tokens: at least 2; --timeout-s: above 0".into(),
        );
    }
    Ok(())
}
