//! One server configuration to measure: a plan candidate or the float baseline, with its
//! artifact and how to reach or start its server.

use sloscope_core::schema::{ArtifactIdentity, KnobValue, Role};

/// One server configuration to measure.
pub struct TargetSpec {
    /// Candidate or baseline.
    pub role: Role,
    /// Its name.
    pub name: String,
    /// Its knob value.
    pub value: KnobValue,
    /// The artifact it serves.
    pub artifact: ArtifactIdentity,
    /// A running endpoint, when sloscope does not launch the server.
    pub endpoint: Option<String>,
    /// The server command template, when sloscope launches it.
    pub command: Option<String>,
    /// `{model_path}` for the command template.
    pub model_path: Option<String>,
    /// The `model` field of requests.
    pub model: Option<String>,
}
