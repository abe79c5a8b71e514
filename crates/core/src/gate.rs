//! The quality gate's front door: what `sloscope gate` measured (the per-position columns of
//! both servers and the float server's noise floor) in, the quality-gate record and what to
//! say about it out. The figures, intervals and decision are [`crate::check::gate`]'s, the
//! default limits are here, and the sentence the record carries is worded once, here; the
//! collector only scores and writes, the CLI only prints and exits.

use std::collections::BTreeMap;

use crate::check::gate::{decide, insufficient, intervals};

pub use crate::check::gate::figures;
use crate::schema::{
    ArtifactIdentity, Decision, Deployment, EvalSet, FloatBaseline, GateArtifact, GateDecision,
    GateEvidence, GateFigures, GateThresholds, Kind, PositionColumns, QualityGate, SCHEMA_VERSION,
};

pub use crate::check::gate::threshold_problem;
pub use crate::show::view::gate_label;

/// The limits a gate is held to when neither a flag nor the plan states one. Heuristics, not
/// standards: the guide's quality-gate page says where each comes from.
pub const DEFAULT_THRESHOLDS: GateThresholds = GateThresholds {
    kld_mean_max: 0.05,
    top1_min: 0.90,
    ppl_ratio_max: 1.05,
};
/// Log-probabilities listed per position and side when none is stated.
pub const DEFAULT_TOP_K: u32 = 20;
/// Tokens each text is cut to when none is stated.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// What was scored: both servers' columns, the float server's second pass (the noise floor)
/// and, when a server failed part-way, why.
#[derive(Debug, Clone, Default)]
pub struct Scored {
    /// Per position, quantized against float.
    pub positions: PositionColumns,
    /// Per position, float against itself without its prompt cache.
    pub noise: PositionColumns,
    /// Why the scoring stopped early, if it did.
    pub partial: Option<String>,
}

/// How it was scored and against what.
#[derive(Debug, Clone)]
pub struct Setup<'a> {
    /// The deployment record of the quantized artifact (its identity becomes the gate's).
    pub deployment: &'a Deployment,
    /// The float-baseline record.
    pub baseline: &'a FloatBaseline,
    /// The evaluation set: its file name, sha256 and number of texts.
    pub eval_set: EvalSet,
    /// The quantized and float servers' URLs, credentials already removed.
    pub urls: (String, String),
    /// `llama`, `vllm` or `sglang`.
    pub backend: &'a str,
    /// Log-probabilities per position and side.
    pub top_k: u32,
    /// llama-perplexity's chunk size, when scored in chunks.
    pub chunk: Option<usize>,
    /// The limits.
    pub thresholds: GateThresholds,
    /// The user's notes for the record; the summary sentence is appended.
    pub notes: Option<String>,
}

/// What the gate says: its record, the sentence that sums it up, and how it ends.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The record to write.
    pub record: QualityGate,
    /// `ACCEPT — measured by sloscope gate over N positions …`.
    pub summary: String,
    /// How the command ends.
    pub end: End,
}

/// How a gate ends, which decides its exit code.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Every figure's bound within its limit.
    Accept,
    /// A figure past its limit.
    Reject,
    /// A server failed part-way: what was scored is kept, and rejected.
    Partial(String),
    /// Every figure within its limit, not every bound: what would decide each.
    NotEnoughEvidence(Vec<String>),
}

/// The record, its summary and its end, from what was scored.
pub fn outcome(setup: Setup<'_>, scored: Scored) -> Outcome {
    let f = figures(&scored.positions);
    let iv = intervals(&scored.positions);
    let t = setup.thresholds;
    let decision = decide(&f, iv.as_ref(), &t, scored.partial.is_some());
    let end = match (&scored.partial, decision) {
        (Some(p), _) => End::Partial(p.clone()),
        (None, GateDecision::Accept) => End::Accept,
        (None, GateDecision::Reject) => End::Reject,
        (None, GateDecision::NotEnoughEvidence) => {
            End::NotEnoughEvidence(insufficient(&f, iv.as_ref(), &t))
        }
    };
    let evidence = GateEvidence {
        method: "teacher_forced_next_token".into(),
        top_k: setup.top_k,
        chunk_tokens: setup.chunk.map(|n| n as u32),
        eval_set: setup.eval_set,
        quantized: artifact(&setup.deployment.artifact, setup.urls.0),
        float: artifact(&setup.baseline.artifact, setup.urls.1),
        backend: setup.backend.into(),
        backend_version: setup.deployment.artifact.backend_version.clone(),
        thresholds: t,
        figures: f,
        noise_floor: Some(figures(&scored.noise)),
        intervals: iv,
        decision,
        partial: scored.partial,
        positions: scored.positions,
        noise_positions: Some(scored.noise),
    };
    let sentence = sentence(&evidence.figures, evidence.top_k);
    let record = QualityGate {
        kind: Kind::QualityGate,
        schema_version: SCHEMA_VERSION.into(),
        artifact: setup.deployment.artifact.clone(),
        quality: quality(&evidence.figures),
        decision: match decision {
            GateDecision::Accept => Decision::Accept,
            GateDecision::Reject => Decision::Reject,
            GateDecision::NotEnoughEvidence => Decision::Tune,
        },
        notes: Some(match &setup.notes {
            Some(n) => format!("{n} — {sentence}"),
            None => sentence.clone(),
        }),
        evidence: Some(Box::new(evidence)),
    };
    Outcome {
        summary: format!("{} — {sentence}", gate_label(decision)),
        record,
        end,
    }
}

fn artifact(a: &ArtifactIdentity, url: String) -> GateArtifact {
    GateArtifact {
        artifact_id: a.artifact_id.clone(),
        artifact_sha256: a.artifact_sha256.clone(),
        endpoint: Some(url),
    }
}

fn sentence(f: &GateFigures, top_k: u32) -> String {
    let fmt = |v: Option<f64>| v.map_or_else(|| "null".into(), |v| format!("{v:.4}"));
    format!(
        "measured by sloscope gate over {} positions (top-{top_k}): KL divergence mean {} (lower bound), top-1 agreement {}, perplexity ratio {}",
        f.positions,
        fmt(f.kld_mean),
        fmt(f.top1_agreement),
        fmt(f.ppl_ratio)
    )
}

/// The record's `quality` map: the figures a reader of the record's summary looks for.
fn quality(f: &GateFigures) -> BTreeMap<String, f64> {
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
