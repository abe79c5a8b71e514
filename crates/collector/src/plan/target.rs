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
    /// Set for one trial of a profile's configuration search.
    pub search: Option<SearchTarget>,
}

/// One trial of a configuration search: the profile searched, the step, the knobs' values.
#[derive(Clone)]
pub struct SearchTarget {
    /// The profile searched.
    pub profile: String,
    /// Where it stands in the search and what it measures.
    pub step: sloscope_core::schema::SearchStep,
}

impl TargetSpec {
    /// The placeholders of its server command: the plan's `vars`, then `{value}`, `{KNOB}`,
    /// `{name}` and `{model_path}` (`{port}` is added at launch).
    pub fn command_vars(
        &self,
        knob: &str,
        plan_vars: &std::collections::BTreeMap<String, String>,
    ) -> std::collections::BTreeMap<String, String> {
        let mut vars = plan_vars.clone();
        vars.insert("value".into(), self.value.to_string());
        vars.insert(knob.to_string(), self.value.to_string());
        vars.insert("name".into(), self.name.clone());
        if let Some(m) = &self.model_path {
            vars.insert("model_path".into(), m.clone());
        }
        if let Some(s) = &self.search {
            for (k, v) in &s.step.config {
                vars.insert(k.clone(), v.to_string());
            }
        }
        vars
    }
}
