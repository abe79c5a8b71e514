//! The plan: which profiles to run and which candidates (values of one serving knob) to compare.
//!
//! Profiles are stored raw (`ProfileSpec`, every field optional) so that a malformed profile can
//! be reported field by field by the profile contract (`crate::check::contract`) instead of failing the
//! whole file at the first missing key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::knob::KnobValue;
use super::Kind;

/// One serving configuration under comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// Short name shown in reports, e.g. `np4`.
    pub name: String,
    /// The knob's value for this candidate.
    pub value: KnobValue,
}

/// A workload as written in a file. Checked by the profile contract.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Name of the workload; runs are comparable only under the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Requests in flight at once (closed loop), or the cap under an arrival rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<i64>,
    /// Prompt length in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    /// `max_tokens` of every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    /// Independent repetitions of the measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<i64>,
    /// Measured requests per repeat (warm-up excluded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_repeat: Option<i64>,
    /// Requests sent before each repeat and not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<i64>,
    /// Open-loop Poisson arrival rate in requests per second; absent means closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate_rps: Option<f64>,
    /// How requests arrive under `request_rate_rps` (default Poisson; gamma with a burstiness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<crate::base::traffic::Arrival>,
    /// Prompt lengths drawn per request; absent: every prompt `prompt_tokens` long (which
    /// stays the calibration target, and should be near this distribution's mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_length: Option<crate::base::traffic::LengthDist>,
    /// Output caps (`max_tokens`) drawn per request; absent: `max_output_tokens` for every one.
    /// Lengths are only enforced where the server honours `ignore_eos` (the target's
    /// `ignore_eos`, on by default); the tokens each request got are recorded either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_length: Option<crate::base::traffic::LengthDist>,
    /// Prompts read from a file (JSON Lines or ShareGPT), sampled per request from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<super::replay::Dataset>,
    /// Requests replayed at a trace's times with its prompt and output lengths (Mooncake JSONL
    /// or Azure CSV); `concurrency` caps the requests in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<super::replay::Trace>,
    /// Shared prefix groups in front of each synthetic prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<super::replay::SharedPrefix>,
    /// Multi-turn sessions: turns resend the conversation so far; `concurrency` counts
    /// sessions in flight and `requests_per_repeat` turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<super::replay::Sessions>,
}

/// A serving profile as written in a file. Checked by the profile contract.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    /// `latency`, `balanced` or `throughput`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The traffic shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// The metric candidates are ranked by, e.g. `ttft_p95_ms` or `throughput_tps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_metric: Option<String>,
    /// Limits: metric name → ceiling (lower-is-better metrics) or floor (higher-is-better).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::unique::opt_map"
    )]
    pub slo: Option<BTreeMap<String, f64>>,
    /// A capacity search: the highest load on one axis at which every SLO still holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSpec>,
}

/// A capacity search as written in a plan. Checked by the profile contract.
///
/// ```toml
/// search = { over = "concurrency", min = 1, max = 64 }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SearchSpec {
    /// The load axis: `concurrency` (closed loop) or `request_rate_rps` (open loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over: Option<String>,
    /// Lowest load tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Highest load tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// The search stops when the first failing load is within this of the last passing one
    /// (in the axis' unit; default 1 for concurrency, required for a rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Most trials per candidate (default 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_trials: Option<i64>,
    /// A trial whose SLO metric's 95% interval straddles the limit gets more repeats of
    /// `requests_per_repeat` requests, up to this many measured requests (default 4 repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests_per_trial: Option<i64>,
    /// Wall-clock budget of one candidate's search in seconds; no new trial starts after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget_s: Option<f64>,
    /// `fixed_load` (default: the seed's verdict at the workload's load) or `capacity`
    /// (the candidate that sustains the highest load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_by: Option<String>,
}

/// Profiles and candidates to run; the collector's input and the analysis' reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plan {
    /// Always `plan`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// Optional title.
    #[serde(default)]
    pub name: Option<String>,
    /// The ONE serving knob the candidates vary, e.g. `parallel`, `max_num_seqs`, `kv_cache_mb`.
    pub knob: String,
    /// The candidates (values of `knob`).
    pub candidates: Vec<Candidate>,
    /// The profiles to run.
    pub profiles: Vec<ProfileSpec>,
    /// Price of one GPU-hour, US dollars: with it, each candidate's cost per million output
    /// tokens (its server's GPUs × price ÷ its output throughput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_hour_usd: Option<f64>,
    /// GPUs one server uses (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_server: Option<u32>,
    /// The float baseline the plan runs, when it runs one: every profile then expects its
    /// run. (The collector's `[baseline]` table also holds how to launch it; only its name is
    /// read here.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<PlannedBaseline>,
    /// The quality gate's limits as planned (`sloscope gate --plan` measures against them): the
    /// gate record's evidence is held to the stricter of these and its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<PlanGateLimits>,
    /// A configuration search: the server knobs to search per profile instead of (or beside)
    /// the listed candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Box<super::space::SpaceSpec>>,
    /// What the collector left out of this plan when it ran it (`--profiles`, `--candidates`,
    /// `--no-baseline`): written into the copy the run keeps, so that the analysis says what
    /// was never measured rather than show a smaller plan as the whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<Box<LeftOut>>,
    /// The sha256 of the bytes the plan was read from (set by the reader): what a sharded
    /// run's references name.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub file_sha256: FileStamp,
}

/// The sha256 of the bytes a document was read from. Not part of what the document says: two
/// copies with the same content are one plan whatever their bytes, so it always compares
/// equal.
#[derive(Debug, Clone, Default)]
pub struct FileStamp(pub Option<String>);

impl PartialEq for FileStamp {
    fn eq(&self, _: &FileStamp) -> bool {
        true
    }
}

/// The parts of a plan a run left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// Profiles not run.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Candidates not run.
    #[serde(default)]
    pub candidates: Vec<String>,
    /// The float baseline, when it was not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// The content sha256 of the whole plan this one was narrowed from: what its runs record
    /// (`plan_content_sha256`), and what tells two narrowed copies of one plan from two plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_content_sha256: Option<String>,
}

/// The float baseline a plan runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlannedBaseline {
    /// Its name in the run files (`candidate.name` of the baseline's runs).
    pub name: String,
}

/// The plan's `[gate]` table, declared once: the limits a gate record is held to, the
/// evaluation set it names and how many tokens per position it lists, and how `sloscope gate
/// --plan` measures it (the candidate, backend, cut and chunk, notes). Flags override each
/// field; a field left out takes the default `sloscope gate --help` states.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlanGateLimits {
    /// The evaluation set the gate scores (a path; its file name is held to the gate record's).
    #[serde(default)]
    pub eval: Option<String>,
    /// Largest mean KL divergence float → quantized allowed, nats.
    #[serde(default)]
    pub kld_mean_max: Option<f64>,
    /// Smallest share of positions where both models' most likely token agree.
    #[serde(default)]
    pub top1_min: Option<f64>,
    /// Largest perplexity ratio quantized ÷ float allowed.
    #[serde(default)]
    pub ppl_ratio_max: Option<f64>,
    /// Tokens listed per position (`--top-k`): a gate record that lists fewer is not the
    /// measurement the plan asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// The candidate whose configuration serves the quantized model (default: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// `llama` (default), `vllm` or `sglang`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Each text is cut to this many tokens (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    /// Score in llama-perplexity's chunks of this many tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<usize>,
    /// Notes for the record (the artifacts' provenance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// The plan's price, when it states a usable one: (US dollars per GPU-hour, GPUs per server),
/// or why not.
pub fn price(plan: &Plan) -> Result<Option<(f64, u32)>, String> {
    let Some(usd) = plan.gpu_hour_usd else {
        return Ok(None);
    };
    if !(usd.is_finite() && usd > 0.0) {
        return Err(format!("gpu_hour_usd {usd}: expected a price above 0"));
    }
    match plan.gpus_per_server.unwrap_or(1) {
        0 => Err("gpus_per_server 0: expected at least 1".into()),
        n => Ok(Some((usd, n))),
    }
}
