//! A quality gate with evidence (`sloscope gate`): the quantized model's next-token
//! distributions measured against the float model's on the same token contexts, through the
//! servers, per position, and the figures, thresholds and decision made of them.

use serde::{Deserialize, Serialize};

/// What a measured gate decides: the artifact passes, it does not, or the positions scored
/// cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    /// Every figure's one-sided 95% bound within its threshold (the KL divergence's with its
    /// unlisted tail counted), every position scored.
    Accept,
    /// A figure beyond its threshold, or the scoring incomplete.
    Reject,
    /// Every figure within its threshold, but a bound is not (or too few positions were scored
    /// to bound them, or the top-K lists leave too much mass unlisted to bound the KL
    /// divergence).
    NotEnoughEvidence,
}

impl GateDecision {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GateDecision::Accept => "accept",
            GateDecision::Reject => "reject",
            GateDecision::NotEnoughEvidence => "not_enough_evidence",
        }
    }
}

/// A gate's figures with their intervals over blocks of consecutive positions (neighbouring
/// positions of a text are not independent): each figure's per-block values, Student t over
/// the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateIntervals {
    /// Consecutive positions of one text per block (the last block of a text may hold fewer).
    pub block_positions: u32,
    /// Blocks.
    pub blocks: u32,
    /// Mean KL divergence over the shared top-K tokens (a lower bound of the true one), 95%.
    pub kld_mean: crate::base::stats::Interval,
    /// Upper end of the 95% interval of the mean KL divergence with each position's unlisted
    /// tail counted at most: assuming no unlisted token's log-probability changes more than
    /// twice the most any listed token's changes at that position (100-fold where that is not
    /// recorded).
    pub kld_mean_upper_with_tail: f64,
    /// The float model's mass outside the shared top-K tokens, averaged over positions.
    pub tail_float_mean: f64,
    /// Share of positions whose most likely token agrees, 95%.
    pub top1_agreement: crate::base::stats::Interval,
    /// Perplexity ratio quantized ÷ float, 95%.
    pub ppl_ratio: crate::base::stats::Interval,
}

/// The evaluation set scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EvalSet {
    /// Its name (the file name).
    pub name: String,
    /// sha256 of the file, lower-case hex.
    pub sha256: String,
    /// Texts in it.
    pub texts: u32,
}

/// One of the two artifacts compared, as the gate names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateArtifact {
    /// The artifact's id (as in the lineage records).
    pub artifact_id: String,
    /// sha256 of the artifact file(s), when known: must equal the lineage records'.
    pub artifact_sha256: Option<String>,
    /// The server that scored it (credentials removed).
    pub endpoint: Option<String>,
}

/// The limits the decision is made against. Defaults are heuristics (see the guide's docs/src/concepts/quality-gate.md), not a
/// standard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateThresholds {
    /// Largest mean KL divergence float → quantized allowed, nats.
    pub kld_mean_max: f64,
    /// Smallest share of positions where both models' most likely token agree.
    pub top1_min: f64,
    /// Largest perplexity ratio quantized ÷ float allowed.
    pub ppl_ratio_max: f64,
}

/// Per position, column-wise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PositionColumns {
    /// Which text of the set the position is in (from 0).
    pub text: Vec<u32>,
    /// KL divergence float → quantized over the shared top-K tokens and a tail bucket, nats:
    /// a lower bound of the true one, exact when both tails are 0.
    pub kld: Vec<f64>,
    /// Both models' most likely next token is the same.
    pub top1_match: Vec<bool>,
    /// The reference (next) token's log-probability under the float model.
    pub ref_logprob_float: Vec<f64>,
    /// … under the quantized model.
    pub ref_logprob_quant: Vec<f64>,
    /// The float model's probability mass outside the tokens both top-K lists hold.
    pub tail_float: Vec<f64>,
    /// The quantized model's.
    pub tail_quant: Vec<f64>,
    /// The largest change of log-probability, |ln q − ln p|, among the tokens both lists hold
    /// (absent in records written before it was kept: the tail is then bounded by a fixed
    /// 100-fold change).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_log_ratio_max: Vec<f64>,
}

/// The figures over every position (recomputed by the analysis from the columns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateFigures {
    /// Positions scored.
    pub positions: u64,
    /// Share of positions where both models' most likely token agree.
    pub top1_agreement: Option<f64>,
    /// KL divergence float → quantized (lower bound per position), nats: mean.
    pub kld_mean: Option<f64>,
    /// … 99th percentile.
    pub kld_p99: Option<f64>,
    /// … 99.9th percentile.
    pub kld_p999: Option<f64>,
    /// … largest.
    pub kld_max: Option<f64>,
    /// Perplexity of the texts under the float model.
    pub ppl_float: Option<f64>,
    /// … under the quantized model.
    pub ppl_quant: Option<f64>,
    /// `ppl_quant / ppl_float`.
    pub ppl_ratio: Option<f64>,
    /// Change in the reference token's probability, quantized − float: root mean square.
    pub delta_p_rms: Option<f64>,
    /// … 1st percentile.
    pub delta_p_p1: Option<f64>,
    /// … 99th percentile.
    pub delta_p_p99: Option<f64>,
    /// Largest tail mass on either side: 0 means the KL divergence is exact.
    pub tail_max: Option<f64>,
}

/// What `sloscope gate` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateEvidence {
    /// `teacher_forced_next_token`: each position's context is the text itself.
    pub method: String,
    /// Log-probabilities per position and side.
    pub top_k: u32,
    /// Scored as llama-perplexity does: each text cut into chunks of this many tokens, each
    /// chunk from its own start, only its second half counted; `null`: every position of each
    /// text from the second.
    #[serde(default)]
    pub chunk_tokens: Option<u32>,
    /// The texts.
    pub eval_set: EvalSet,
    /// The quantized artifact.
    pub quantized: GateArtifact,
    /// The float artifact.
    pub float: GateArtifact,
    /// The serving backend (`llama.cpp llama-server`, `vllm`, `sglang`) and its version.
    pub backend: String,
    /// Its version.
    pub backend_version: String,
    /// Limits.
    pub thresholds: GateThresholds,
    /// Figures as stated by the writer.
    pub figures: GateFigures,
    /// The float model against itself (a second scoring): no difference below it is real.
    pub noise_floor: Option<GateFigures>,
    /// The figures' intervals, as stated by the writer (recomputed by the analysis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<GateIntervals>,
    /// The decision the writer made of the figures.
    pub decision: GateDecision,
    /// Set when the scoring stopped early (a server died or erred): why. Never an accept.
    #[serde(default)]
    pub partial: Option<String>,
    /// Per position.
    pub positions: PositionColumns,
    /// Per position, the float model against itself.
    #[serde(default)]
    pub noise_positions: Option<PositionColumns>,
}
