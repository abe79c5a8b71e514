//! `sloscope gate`: measures the quantized artifact against its float baseline through two
//! running servers and writes the quality-gate record with its evidence, bound to both
//! artifacts as the deployment and float-baseline records name them.
//!
//! Exit codes: 0 accept · 1 reject · 2 bad input (nothing scored) · 3 partial (a server died or
//! erred part-way: what was scored is written, and rejected) · 4 the record could not be written.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sloscope_collector::gate::{self, shapes::Backend, Job, Server};
use sloscope_core::check::gate::{decide, figures};
use sloscope_core::schema::{
    Decision, Deployment, EvalSet, FloatBaseline, GateArtifact, GateDecision, GateEvidence,
    GateThresholds, Kind, QualityGate, SCHEMA_VERSION,
};
use sloscope_core::Document;

/// The backend, as typed.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum BackendArg {
    /// llama.cpp's llama-server (`/completion` with `n_probs`).
    Llama,
    /// vLLM (`/v1/completions` with `prompt_logprobs`; start it with `--max-logprobs K`).
    Vllm,
    /// SGLang (`/generate` with `return_logprob`).
    Sglang,
}

/// Arguments of `sloscope gate`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit codes: 0 accept · 1 reject · 2 bad input (nothing scored) · 3 partial \
(a server died or erred part-way: what was scored is written, rejected) · 4 the record could not be written"
)]
pub struct Args {
    /// The quantized model's server.
    #[arg(long, value_name = "URL")]
    quantized: String,
    /// The float model's server.
    #[arg(long, value_name = "URL")]
    float: String,
    /// The backend both run.
    #[arg(long, value_enum, default_value = "llama")]
    backend: BackendArg,
    /// `model` of the quantized server's requests (vLLM).
    #[arg(long, default_value = "default")]
    quantized_model: String,
    /// `model` of the float server's requests (vLLM).
    #[arg(long, default_value = "default")]
    float_model: String,
    /// The evaluation set: plain text (texts separated by blank lines) or JSON Lines with
    /// `"text"`.
    #[arg(long, value_name = "FILE")]
    eval: PathBuf,
    /// The deployment record of the quantized artifact (its identity becomes the gate's).
    #[arg(long, value_name = "FILE")]
    deployment: PathBuf,
    /// The float-baseline record.
    #[arg(long, value_name = "FILE")]
    baseline: PathBuf,
    /// Log-probabilities per position and side.
    #[arg(long, default_value_t = 20)]
    top_k: u32,
    /// Each text is cut to this many tokens.
    #[arg(long, default_value_t = 256)]
    max_tokens: usize,
    /// Largest mean KL divergence float → quantized (nats). A heuristic: see the README.
    #[arg(long, default_value_t = 0.05)]
    kld_mean_max: f64,
    /// Smallest top-1 agreement.
    #[arg(long, default_value_t = 0.90)]
    top1_min: f64,
    /// Largest perplexity ratio quantized ÷ float.
    #[arg(long, default_value_t = 1.05)]
    ppl_ratio_max: f64,
    /// Per request, seconds.
    #[arg(long, default_value_t = 120.0)]
    timeout_s: f64,
    /// Where to write the quality-gate record.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Exit codes.
mod exit {
    pub const REJECT: u8 = 1;
    pub const BAD: u8 = 2;
    pub const PARTIAL: u8 = 3;
    pub const OUTPUT: u8 = 4;
}

fn thresholds(a: &Args) -> Result<GateThresholds, String> {
    let t = GateThresholds {
        kld_mean_max: a.kld_mean_max,
        top1_min: a.top1_min,
        ppl_ratio_max: a.ppl_ratio_max,
    };
    if !(t.kld_mean_max.is_finite() && t.kld_mean_max >= 0.0) {
        return Err(format!(
            "--kld-mean-max {}: expected a number ≥ 0 (nats)",
            t.kld_mean_max
        ));
    }
    if !(0.0..=1.0).contains(&t.top1_min) {
        return Err(format!(
            "--top1-min {}: expected a share in [0, 1]",
            t.top1_min
        ));
    }
    if !(t.ppl_ratio_max.is_finite() && t.ppl_ratio_max >= 1.0) {
        return Err(format!(
            "--ppl-ratio-max {}: expected a ratio ≥ 1",
            t.ppl_ratio_max
        ));
    }
    let timeout_ok = a.timeout_s.is_finite() && a.timeout_s > 0.0;
    if a.top_k == 0 || a.top_k > 1000 || a.max_tokens < 2 || !timeout_ok {
        return Err(
            "--top-k: expected 1 to 1000; --max-tokens: at least 2; --timeout-s: above 0".into(),
        );
    }
    Ok(t)
}

fn record<T>(path: &PathBuf, pick: fn(Document) -> Option<T>, what: &str) -> Result<T, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let doc = sloscope_core::read_document(&name, bytes).map_err(|e| e.to_string())?;
    pick(doc).ok_or_else(|| format!("{name}: expected a {what} record"))
}

fn artifact(a: &sloscope_core::schema::ArtifactIdentity, url: &str) -> GateArtifact {
    GateArtifact {
        artifact_id: a.artifact_id.clone(),
        artifact_sha256: a.artifact_sha256.clone(),
        endpoint: Some(sloscope_collector::secret::redact_url(url)),
    }
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let bad = |e: String| {
        eprintln!("sloscope: gate: {e}");
        Ok(ExitCode::from(exit::BAD))
    };
    let t = match thresholds(&a) {
        Ok(t) => t,
        Err(e) => return bad(e),
    };
    let dep: Deployment = match record(
        &a.deployment,
        |d| match d {
            Document::Deployment(d) => Some(d),
            _ => None,
        },
        "deployment",
    ) {
        Ok(d) => d,
        Err(e) => return bad(e),
    };
    let base: FloatBaseline = match record(
        &a.baseline,
        |d| match d {
            Document::FloatBaseline(b) => Some(b),
            _ => None,
        },
        "float_baseline",
    ) {
        Ok(b) => b,
        Err(e) => return bad(e),
    };
    let (texts, sha) = match gate::read_eval_set(&a.eval) {
        Ok(x) => x,
        Err(e) => return bad(e),
    };
    let job = Job {
        backend: match a.backend {
            BackendArg::Llama => Backend::Llama,
            BackendArg::Vllm => Backend::Vllm,
            BackendArg::Sglang => Backend::Sglang,
        },
        quantized: Server {
            url: a.quantized.trim_end_matches('/').into(),
            model: a.quantized_model.clone(),
        },
        float: Server {
            url: a.float.trim_end_matches('/').into(),
            model: a.float_model.clone(),
        },
        top_k: a.top_k,
        max_tokens: a.max_tokens,
        timeout: Duration::from_secs_f64(a.timeout_s),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let scored = match rt.block_on(gate::run(&job, &texts)) {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    let f = figures(&scored.positions);
    let decision = decide(&f, &t, scored.partial.is_some());
    let name = a
        .eval
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let evidence = GateEvidence {
        method: "teacher_forced_next_token".into(),
        top_k: a.top_k,
        eval_set: EvalSet {
            name,
            sha256: sha,
            texts: texts.len() as u32,
        },
        quantized: artifact(&dep.artifact, &a.quantized),
        float: artifact(&base.artifact, &a.float),
        backend: job.backend.name().into(),
        backend_version: dep.artifact.backend_version.clone(),
        thresholds: t,
        figures: f,
        noise_floor: Some(figures(&scored.noise)),
        decision,
        partial: scored.partial.clone(),
        positions: scored.positions,
        noise_positions: Some(scored.noise),
    };
    write(&a, dep, evidence)
}

fn quality(e: &GateEvidence) -> BTreeMap<String, f64> {
    let f = &e.figures;
    [
        ("kld_mean", f.kld_mean),
        ("kld_p99", f.kld_p99),
        ("top1_agreement", f.top1_agreement),
        ("ppl_ratio", f.ppl_ratio),
        ("delta_p_rms", f.delta_p_rms),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect()
}

fn write(a: &Args, dep: Deployment, e: GateEvidence) -> anyhow::Result<ExitCode> {
    let accepted = e.decision == GateDecision::Accept;
    let f = e.figures;
    let fmt = |v: Option<f64>| v.map_or_else(|| "null".into(), |v| format!("{v:.4}"));
    let summary = format!(
        "measured by sloscope gate over {} positions (top-{}): KL divergence mean {} (lower bound), top-1 agreement {}, perplexity ratio {}",
        f.positions, e.top_k, fmt(f.kld_mean), fmt(f.top1_agreement), fmt(f.ppl_ratio)
    );
    let partial = e.partial.clone();
    let gate = QualityGate {
        kind: Kind::QualityGate,
        schema_version: SCHEMA_VERSION.into(),
        artifact: dep.artifact,
        quality: quality(&e),
        decision: if accepted {
            Decision::Accept
        } else {
            Decision::Reject
        },
        notes: Some(summary.clone()),
        evidence: Some(Box::new(e)),
    };
    if let Err(err) = sloscope_collector::write::json(&a.out, &gate) {
        eprintln!("sloscope: gate: {}: cannot write: {err}", a.out.display());
        return Ok(ExitCode::from(exit::OUTPUT));
    }
    eprintln!(
        "sloscope: gate: {} — {summary}",
        if accepted { "ACCEPT" } else { "REJECT" }
    );
    if let Some(p) = partial {
        eprintln!("sloscope: gate: partial, so rejected: {p}");
        return Ok(ExitCode::from(exit::PARTIAL));
    }
    Ok(if accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::REJECT)
    })
}
