//! Lineage records: the quality gate, the float baseline and the deployment of one artifact.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Kind;

/// accept / tune / reject, as used by upstream records and by sloscope's own verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Fit for use as measured.
    Accept,
    /// Not yet: change the configuration or collect better evidence.
    Tune,
    /// Not fit, or not comparable.
    Reject,
}

impl Decision {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Tune => "tune",
            Decision::Reject => "reject",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What identifies an artifact and the path it is served on. Shared by all lineage records.
///
/// The seed's required fields (`artifact_id`, `backend`, `backend_version`, `hardware`) are
/// required here too; the stricter ones (`revision`, `format`, tokenizer) are optional in the
/// file, and the lineage check compares them wherever any record states them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArtifactIdentity {
    /// Identifier of the weights as served, e.g. `smollm2-135m-instruct-q4_1`.
    pub artifact_id: String,
    /// Source model the artifact was made from, e.g. `HuggingFaceTB/SmolLM2-135M-Instruct`.
    #[serde(default)]
    pub model: Option<String>,
    /// Revision of the source model (commit or tag).
    #[serde(default)]
    pub revision: Option<String>,
    /// Weight format: `Q4_1`, `AWQ`, `GPTQ`, `FP8`, `F16` …
    #[serde(default)]
    pub format: Option<String>,
    /// sha256 of the artifact file(s), when known.
    #[serde(default)]
    pub artifact_sha256: Option<String>,
    /// Serving backend: `vllm`, `sglang`, `tgi`, `llama.cpp` …
    pub backend: String,
    /// Backend version or build.
    pub backend_version: String,
    /// Hardware the records were made on, e.g. `1x H200` or `cpu-2core-avx512`.
    pub hardware: String,
    /// Tokenizer identifier.
    #[serde(default)]
    pub tokenizer_id: Option<String>,
    /// sha256 of the tokenizer file.
    #[serde(default)]
    pub tokenizer_sha256: Option<String>,
}

/// The quality-gate record of the quantized artifact (the seed's chapter 82).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QualityGate {
    /// Always `quality_gate`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// Which artifact passed the gate.
    #[serde(flatten)]
    pub artifact: ArtifactIdentity,
    /// Quality figures of the gate, e.g. `{"mmlu_delta": -0.4}`.
    #[serde(default, deserialize_with = "super::unique::map")]
    pub quality: BTreeMap<String, f64>,
    /// The gate's decision; profiles are compared only after `accept`.
    pub decision: Decision,
    /// Free text.
    #[serde(default)]
    pub notes: Option<String>,
    /// What `sloscope gate` measured, when the decision rests on a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Box<super::GateEvidence>>,
}

/// The float baseline record (the seed's chapter 66): the same model in float weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FloatBaseline {
    /// Always `float_baseline`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// The float artifact.
    #[serde(flatten)]
    pub artifact: ArtifactIdentity,
    /// The baseline's own decision.
    pub decision: Decision,
    /// Free text.
    #[serde(default)]
    pub notes: Option<String>,
}

/// The deployment record of the quantized artifact (the seed's chapter 67).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Deployment {
    /// Always `deployment`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// The deployed artifact.
    #[serde(flatten)]
    pub artifact: ArtifactIdentity,
    /// The artifact id of the gate record this deployment refers to.
    pub gate_artifact_id: String,
    /// The deployment's decision.
    pub decision: Decision,
    /// Free text.
    #[serde(default)]
    pub notes: Option<String>,
}
