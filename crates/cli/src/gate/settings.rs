//! The arguments of `sloscope gate`, handed to the collector as [`Given`] (each flag, else the
//! plan's `[gate]` field, else the core's default: the collector resolves them).

use std::path::PathBuf;

use sloscope_collector::gate::settings::Given;
use sloscope_collector::gate::shapes::Backend;

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

impl Args {
    /// The values given on the command line, for the collector to resolve.
    pub fn given(&self) -> Given {
        Given {
            backend: self.backend.map(|b| match b {
                BackendArg::Llama => Backend::Llama,
                BackendArg::Vllm => Backend::Vllm,
                BackendArg::Sglang => Backend::Sglang,
            }),
            top_k: self.top_k,
            max_tokens: self.max_tokens,
            chunk: self.chunk,
            kld_mean_max: self.kld_mean_max,
            top1_min: self.top1_min,
            ppl_ratio_max: self.ppl_ratio_max,
            timeout_s: self.timeout_s,
            notes: self.notes.clone(),
            eval: self.eval.clone(),
            out: self.out.clone(),
        }
    }
}
