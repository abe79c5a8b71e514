//! The arguments of `sloscope gate` and what they resolve to: each flag, else the plan's
//! `[gate]` field, else the documented default.

use std::path::PathBuf;
use std::time::Duration;

use sloscope_collector::gate::shapes::Backend;
use sloscope_collector::plan::config::GateSection;
use sloscope_core::schema::GateThresholds;

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
    after_help = format!("Either --plan (its [gate] section, lineage records and servers: the quantized \
model on a candidate's configuration, the float model on the baseline's, launched as `run` \
launches them; the record replaces the plan's gate record), or --quantized, --float, --eval, \
--deployment, --baseline and --out. Flags override the plan.\n\n{}",
    crate::exit::Gate::help()
))]
pub struct Args {
    /// A plan with a `[gate]` section.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// The quantized model's server.
    #[arg(long, value_name = "URL")]
    pub quantized: Option<String>,
    /// The float model's server.
    #[arg(long, value_name = "URL")]
    pub float: Option<String>,
    /// The backend both run [default: llama].
    #[arg(long, value_enum)]
    pub backend: Option<BackendArg>,
    /// `model` of the quantized server's requests (vLLM).
    #[arg(long, default_value = "default")]
    pub quantized_model: String,
    /// `model` of the float server's requests (vLLM).
    #[arg(long, default_value = "default")]
    pub float_model: String,
    /// The evaluation set: plain text (texts separated by blank lines) or JSON Lines with
    /// `"text"`.
    #[arg(long, value_name = "FILE")]
    pub eval: Option<PathBuf>,
    /// The deployment record of the quantized artifact (its identity becomes the gate's).
    #[arg(long, value_name = "FILE")]
    pub deployment: Option<PathBuf>,
    /// The float-baseline record.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Log-probabilities per position and side [default: 20].
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Each text is cut to this many tokens [default: 256].
    #[arg(long)]
    pub max_tokens: Option<usize>,
    /// Score as `llama-perplexity` does, to compare with its figures: each text cut into chunks
    /// of N tokens (a shorter remainder dropped), each chunk scored from its own start and only
    /// its second half counted (llama-perplexity's `-c N`).
    #[arg(long, value_name = "N")]
    pub chunk: Option<usize>,
    /// Largest mean KL divergence float → quantized, nats [default: 0.05]. A heuristic: see the
    /// guide's docs/src/concepts/quality-gate.md.
    #[arg(long)]
    pub kld_mean_max: Option<f64>,
    /// Smallest top-1 agreement [default: 0.90].
    #[arg(long)]
    pub top1_min: Option<f64>,
    /// Largest perplexity ratio quantized ÷ float [default: 1.05].
    #[arg(long)]
    pub ppl_ratio_max: Option<f64>,
    /// Per request, seconds.
    #[arg(long, default_value_t = 120.0)]
    pub timeout_s: f64,
    /// Notes for the record (the artifacts' provenance, say); the figures are appended.
    #[arg(long, value_name = "TEXT")]
    pub notes: Option<String>,
    /// Where to write the quality-gate record (with --plan: the plan's gate record).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Everything resolved.
pub struct Settings {
    pub backend: Backend,
    pub top_k: u32,
    pub max_tokens: usize,
    pub chunk: Option<usize>,
    pub thresholds: GateThresholds,
    pub timeout: Duration,
    pub notes: Option<String>,
    pub eval: PathBuf,
    pub out: PathBuf,
}

fn backend(a: &Args, s: Option<&GateSection>) -> Result<Backend, String> {
    match (a.backend, s.and_then(|s| s.backend.as_deref())) {
        (Some(BackendArg::Llama), _) | (None, None | Some("llama")) => Ok(Backend::Llama),
        (Some(BackendArg::Vllm), _) | (None, Some("vllm")) => Ok(Backend::Vllm),
        (Some(BackendArg::Sglang), _) | (None, Some("sglang")) => Ok(Backend::Sglang),
        (None, Some(other)) => Err(format!(
            "gate.backend {other:?}: expected \"llama\", \"vllm\" or \"sglang\""
        )),
    }
}

/// Each flag, else the plan's field, else the default; every value checked.
pub fn resolve(
    a: &Args,
    s: Option<&GateSection>,
    eval: Option<PathBuf>,
    out: Option<PathBuf>,
) -> Result<Settings, String> {
    let t = GateThresholds {
        kld_mean_max: a
            .kld_mean_max
            .or(s.and_then(|s| s.kld_mean_max))
            .unwrap_or(0.05),
        top1_min: a.top1_min.or(s.and_then(|s| s.top1_min)).unwrap_or(0.90),
        ppl_ratio_max: a
            .ppl_ratio_max
            .or(s.and_then(|s| s.ppl_ratio_max))
            .unwrap_or(1.05),
    };
    let out = Settings {
        backend: backend(a, s)?,
        top_k: a.top_k.or(s.and_then(|s| s.top_k)).unwrap_or(20),
        max_tokens: a.max_tokens.or(s.and_then(|s| s.max_tokens)).unwrap_or(256),
        chunk: a.chunk.or(s.and_then(|s| s.chunk)),
        thresholds: t,
        timeout: Duration::from_secs_f64(a.timeout_s.clamp(0.001, 1e6)),
        notes: a.notes.clone().or(s.and_then(|s| s.notes.clone())),
        eval: a
            .eval
            .clone()
            .or(eval)
            .ok_or("--eval: expected the evaluation set (or --plan)")?,
        out: a
            .out
            .clone()
            .or(out)
            .ok_or("--out: expected where to write the record (or --plan)")?,
    };
    check(&out, a.timeout_s)?;
    Ok(out)
}

fn check(s: &Settings, timeout_s: f64) -> Result<(), String> {
    if let Some(p) = sloscope_core::check::gate::threshold_problem(&s.thresholds) {
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
