//! Problems with the records themselves — a lineage record set or a profile definition — with a
//! stable code per kind, the field concerned and the problem spelled out. (What concerns one
//! run of a comparison is a [`crate::analyse::report::Code`] on an exclusion or a flag instead.)

use serde::{Deserialize, Serialize};

/// Kind of problem. Serialized in snake_case; codes are stable across releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProblemCode {
    /// Lineage: no record of a kind was loaded.
    MissingRecord,
    /// Lineage: more than one record of a kind was loaded.
    DuplicateRecords,
    /// Lineage: a field differs between records where it must be equal, or is equal where it
    /// must differ (the float baseline's artifact).
    FieldMismatch,
    /// Lineage: a field is recorded in no record, so it could not be checked (a warning).
    NotRecorded,
    /// Lineage: the gate's decision rests on no measurement by `sloscope gate` (no `evidence`):
    /// asserted, not evaluated (a warning).
    GateWithoutEvidence,
    /// Lineage: a measured gate claims what its own per-position data does not give (figures,
    /// decision), or its scoring is partial.
    GateEvidenceContradicted,
    /// Lineage: a measured gate says accept, but its per-position data is not enough evidence
    /// to accept on (too few positions, a bound past a threshold, a KL divergence the top-K
    /// lists cannot bound): no verdict rests on it.
    GateNotEnoughEvidence,
    /// Lineage: a measured gate compared other artifacts (id or sha256) than the deployment and
    /// float-baseline records name.
    GateArtifactMismatch,
    /// Lineage: a run's backend, version or hardware differs from the deployment's.
    RunDeploymentMismatch,
    /// Profile: a required field is missing or empty.
    MissingField,
    /// Profile: a name or metric sloscope does not know.
    UnsupportedValue,
    /// Profile: a number outside its valid range (a count ≤ 0, a limit ≤ 0, not finite, a
    /// failure rate outside [0, 1]).
    OutOfRange,
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Problem {
    /// Kind.
    pub code: ProblemCode,
    /// The field (`slo.ttft_p95_ms`, `artifact_sha256`) or record kind concerned.
    pub field: String,
    /// The problem spelled out, with what was expected.
    pub message: String,
}

impl Problem {
    /// A problem of kind `code` with `field` and its message.
    pub fn new(code: ProblemCode, field: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            code,
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
