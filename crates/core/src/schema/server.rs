//! What a run records of the server beside its requests: the server the collector launched,
//! what the server said it is, and the samples taken while it served (its `/metrics` scrapes,
//! memory, histogram deltas).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A server the collector launched for this candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerInfo {
    /// The command line, one element per argument.
    pub command: Vec<String>,
    /// Exit status once stopped (`null` while running or when killed by a signal).
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// Seconds from spawn to a healthy `/health`.
    #[serde(default)]
    pub startup_s: Option<f64>,
    /// The last lines of its log.
    #[serde(default)]
    pub log_tail: Option<String>,
}

/// One scrape of the server's Prometheus `/metrics`: raw series names and values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricSample {
    /// Microseconds since the repeat started.
    pub offset_us: u64,
    /// Series name (labels dropped, summed over label sets) → value.
    #[serde(deserialize_with = "super::unique::map")]
    pub values: BTreeMap<String, f64>,
}

/// One memory sample. A value that could not be read is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemorySample {
    /// Microseconds since the repeat started.
    pub offset_us: u64,
    /// GPU memory in use (NVML), all devices the server uses, in MB (10^6 bytes).
    #[serde(default)]
    pub gpu_used_mb: Option<f64>,
    /// Resident memory of the launched server process, in MB (10^6 bytes).
    #[serde(default)]
    pub server_rss_mb: Option<f64>,
}

/// One bucket of a histogram delta. `le_seconds: null` is the `+Inf` bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistogramBucket {
    /// Upper bound in seconds; `null` for `+Inf`.
    pub le_seconds: Option<f64>,
    /// Cumulative count of the delta.
    pub count: f64,
}

/// The change of a server-side histogram over one repeat (end scrape minus start scrape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistogramDelta {
    /// Metric family, e.g. `vllm:request_queue_time_seconds`.
    pub metric: String,
    /// Observations in the repeat.
    pub count: f64,
    /// Sum of observations, seconds.
    pub sum_seconds: f64,
    /// Cumulative buckets, ascending.
    pub buckets: Vec<HistogramBucket>,
}

/// What the server said it is, asked once per target from the backends' own endpoints. Empty
/// fields: it did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerReport {
    /// The version it gave (llama-server's `build_info`, vLLM's and SGLang's `version`, TGI's
    /// `version`).
    #[serde(default)]
    pub version: Option<String>,
    /// Where it gave it: `/props`, `/version`, `/get_server_info` or `/info`.
    #[serde(default)]
    pub version_from: Option<String>,
    /// The models it said it serves (`/v1/models` ids, llama-server's model path, TGI's
    /// `model_id`), at most 16.
    #[serde(default)]
    pub models: Vec<String>,
}
