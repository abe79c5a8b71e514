//! The collector's sections of a plan file as written (`[target]`, `[baseline]`,
//! `[lineage]`, `vars`; the `[gate]` table is the core plan's), with their defaults; [`super::load_plan`] checks them into a
//! [`super::RunPlan`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sloscope_core::schema::{KnobValue, Plan};

use crate::wire::api::Api;

/// Paths of the lineage records, relative to the plan file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineagePaths {
    /// Quality-gate record.
    pub gate: PathBuf,
    /// Float-baseline record.
    pub baseline: PathBuf,
    /// Deployment record.
    pub deployment: PathBuf,
}

fn default_health() -> String {
    "/health".into()
}
fn default_metrics() -> String {
    "/metrics".into()
}
fn default_timeout() -> f64 {
    120.0
}
fn default_true() -> bool {
    true
}

/// Where and how to send requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// API flavour.
    #[serde(default)]
    pub api: Api,
    /// `model` field of requests (and of `/tokenize`).
    #[serde(default)]
    pub model: Option<String>,
    /// An already running endpoint, e.g. `http://127.0.0.1:8000`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// A command template started once per candidate instead: placeholders `{port}`,
    /// `{value}` (the knob value), `{<knob>}`, `{name}`, `{model_path}` and any of `vars`.
    #[serde(default)]
    pub server_command: Option<String>,
    /// Health path polled after launch.
    #[serde(default = "default_health")]
    pub health_path: String,
    /// Prometheus path scraped every second; an empty string turns scraping off.
    #[serde(default = "default_metrics")]
    pub metrics_path: String,
    /// Seconds to wait for a launched server to become healthy, or for an endpoint whose health
    /// path answers 502–504 (a server still loading its model) to answer 2xx.
    #[serde(default = "default_timeout")]
    pub health_timeout_s: f64,
    /// Seconds one request may take in all.
    #[serde(default = "default_timeout")]
    pub request_timeout_s: f64,
    /// Seconds without an event (bytes that carry none, such as keep-alive comments, do not
    /// count) before a stream counts as stalled.
    #[serde(default)]
    pub stall_timeout_s: Option<f64>,
    /// Send `ignore_eos: true` so every request generates exactly `max_output_tokens`
    /// (llama.cpp, vLLM and SGLang accept it).
    #[serde(default = "default_true")]
    pub ignore_eos: bool,
    /// Extra JSON fields merged into every request body.
    #[serde(default)]
    pub extra_body: BTreeMap<String, serde_json::Value>,
    /// Path of the model file the quantized server loads (`{model_path}`).
    #[serde(default)]
    pub model_path: Option<String>,
}

/// The float baseline's serving target (same profiles, one configuration).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineTarget {
    /// Name shown in reports.
    #[serde(default = "baseline_name")]
    pub name: String,
    /// Knob value the baseline is served with.
    pub value: KnobValue,
    /// A running endpoint for the float model.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Or a command template (same placeholders; `{model_path}` is this one's).
    #[serde(default)]
    pub server_command: Option<String>,
    /// Model file of the float baseline.
    #[serde(default)]
    pub model_path: Option<String>,
    /// `model` field of requests, if it differs.
    #[serde(default)]
    pub model: Option<String>,
}

fn baseline_name() -> String {
    "float-baseline".into()
}

/// The plan file as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CollectorPlan {
    /// Profiles, candidates, knob.
    #[serde(flatten)]
    pub plan: Plan,
    /// Lineage record paths.
    pub lineage: LineagePaths,
    /// Endpoint or server command.
    pub target: Target,
    /// Optional float baseline.
    #[serde(default)]
    pub baseline: Option<BaselineTarget>,
    /// Values for `{name}` placeholders in commands (environment variables are expanded:
    /// `"$LLAMA_SERVER"`).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Names of `vars` whose values are credentials: replaced by `***` in everything sloscope
    /// writes (the plan copy, run files, journals, server command lines and logs). The
    /// `--api-key-env` key, `{api_key}` in commands, is always treated so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_vars: Vec<String>,
}
