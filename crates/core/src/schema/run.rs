//! The run file: one candidate under one profile, with the raw per-request data of every repeat.
//!
//! Requests are stored column-wise (one array per field, index = request in send order) with
//! integer microseconds, so a run of a million requests stays compact and parses quickly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    Gaps, HistogramDelta, Kind, KnobValue, MemorySample, MetricSample, ProfileSpec, ServerInfo,
};

/// How much a run's numbers can be trusted for a serving decision (the seed's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EvidenceLevel {
    /// Measured against the real serving backend. The only level that can yield `accept`.
    RealBackendProfile,
    /// Measured against a simulation (scripted server, CPU stand-in). Never `accept`.
    CpuProfileSimulation,
    /// The backend failed; the run holds what was collected before.
    FailedBackendProfile,
}

impl EvidenceLevel {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceLevel::RealBackendProfile => "real_backend_profile",
            EvidenceLevel::CpuProfileSimulation => "cpu_profile_simulation",
            EvidenceLevel::FailedBackendProfile => "failed_backend_profile",
        }
    }
}

/// Whether the collection finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every planned request was sent and accounted for.
    Ok,
    /// Interrupted (Ctrl-C, server crash, full disk): holds every request that finished.
    Partial,
    /// The run could not be carried out; `failure` says why.
    Failed,
}

impl RunStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
        }
    }
}

/// Whether a run is the quantized candidate or the float reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A serving configuration of the quantized artifact.
    #[default]
    Candidate,
    /// The float baseline under the same profile and workload.
    Baseline,
}

/// Where the numbers came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunSource {
    /// Measured by sloscope's collector; summaries are recomputed from `repeats`.
    #[default]
    Measured,
    /// Converted from another tool's result file.
    Imported,
}

/// Where a token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The server's `usage` object.
    Usage,
    /// Counted stream events (one event may carry several tokens).
    Events,
    /// A local tokenizer.
    Tokenizer,
    /// The requested length, not verified.
    Requested,
}

impl TokenSource {
    /// Every source, in declaration order.
    pub const ALL: [TokenSource; 4] = [
        TokenSource::Usage,
        TokenSource::Events,
        TokenSource::Tokenizer,
        TokenSource::Requested,
    ];

    /// The name a run file writes (serde's snake_case name).
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenSource::Usage => "usage",
            TokenSource::Events => "events",
            TokenSource::Tokenizer => "tokenizer",
            TokenSource::Requested => "requested",
        }
    }
}

/// The program that wrote the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolInfo {
    /// e.g. `sloscope`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// Which candidate this run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CandidateRef {
    /// Candidate name from the plan.
    pub name: String,
    /// The serving knob the candidates vary.
    #[serde(default)]
    pub knob: Option<String>,
    /// This candidate's value of the knob.
    #[serde(default)]
    pub value: Option<KnobValue>,
}

/// The endpoint that was measured. Never holds credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EndpointInfo {
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// `completions` or `chat`.
    pub api: String,
    /// Model name sent in requests.
    #[serde(default)]
    pub model: Option<String>,
    /// Whether each request asked the server to ignore end-of-sequence (`ignore_eos`), so that
    /// it generates its whole output cap; `null` where not recorded (older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_eos: Option<bool>,
    /// What the server said it is (its version, its models), where the collector asked;
    /// `null` where not asked (older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<super::ServerReport>,
}

/// Per-request data of one repeat, column-wise: entry `i` of every column is request `i`,
/// in the order the requests were sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RequestColumns {
    /// When the request was sent, µs since the repeat started. Non-decreasing.
    #[serde(deserialize_with = "super::column::read")]
    pub send_offset_us: Vec<u64>,
    /// Open loop only: when it should have been sent. `send − intended` is client queue wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_offset_us: Option<Vec<u64>>,
    /// Time to the first non-empty content, µs; `null` if none arrived.
    #[serde(deserialize_with = "super::column::read")]
    pub ttft_us: Vec<Option<u64>>,
    /// Send to end of stream, µs; `null` if the request never completed.
    #[serde(deserialize_with = "super::column::read")]
    pub e2e_us: Vec<Option<u64>>,
    /// Prompt tokens (`usage.prompt_tokens` where the server sends it).
    #[serde(deserialize_with = "super::column::read")]
    pub prompt_tokens: Vec<Option<u32>>,
    /// Where each prompt count came from.
    #[serde(deserialize_with = "super::column::read")]
    pub prompt_tokens_source: Vec<Option<TokenSource>>,
    /// Output tokens (`usage.completion_tokens` where the server sends it).
    #[serde(deserialize_with = "super::column::read")]
    pub output_tokens: Vec<Option<u32>>,
    /// Where each output count came from.
    #[serde(deserialize_with = "super::column::read")]
    pub output_tokens_source: Vec<Option<TokenSource>>,
    /// Server-side queue wait per request, µs, where the server tells it; else `null`.
    #[serde(deserialize_with = "super::column::read")]
    pub server_queue_us: Vec<Option<u64>>,
    /// `null` for a successful request, else why it failed.
    #[serde(deserialize_with = "super::column::read")]
    pub error: Vec<Option<String>>,
    /// Per request, the gaps between consecutive content events after the first, µs.
    pub itl_us: Gaps,
    /// The output cap (`max_tokens`) each request was sent with, where the collector recorded
    /// it: no success may produce more output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<Vec<Option<u32>>>,
    /// Content events each request streamed, where the collector recorded them: each event
    /// carries at least one token, so `output_tokens` is at least this (the stream's proof).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_events: Option<Vec<Option<u32>>>,
    /// Requests sent a second time after the server closed a reused connection as they went
    /// out (present when any was): the server may have received them twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resent: Option<Vec<bool>>,
    /// Prompt tokens the server served from its prefix cache, as it reports them
    /// (`usage.prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`); present
    /// when any request reported it, `null` for one that did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<Vec<Option<u32>>>,
    /// Speculative decoding: tokens the draft model proposed (llama-server's
    /// `timings.draft_n`); present when any request reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_tokens: Option<Vec<Option<u32>>>,
    /// … and how many of them the target model accepted (`timings.draft_n_accepted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_accepted_tokens: Option<Vec<Option<u32>>>,
    /// Multi-turn sessions: the session each request belongs to, numbered within the repeat
    /// (present with `turn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Vec<Option<u32>>>,
    /// … and its turn within the session, from 1: turn k+1 carries turn k's prompt and answer,
    /// and is sent after turn k ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Vec<Option<u32>>>,
}

impl RequestColumns {
    /// Number of requests (the length of `send_offset_us`).
    pub fn len(&self) -> usize {
        self.send_offset_us.len()
    }

    /// True when no request was recorded.
    pub fn is_empty(&self) -> bool {
        self.send_offset_us.is_empty()
    }
}

/// One repetition of the measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Repeat {
    /// 0-based.
    pub index: u32,
    /// Wall-clock start, RFC 3339, for the record only.
    #[serde(default)]
    pub started_at: Option<String>,
    /// Warm-up requests sent before the measured ones (not in `requests`).
    #[serde(default)]
    pub warmup_requests: u32,
    /// The measured requests.
    pub requests: RequestColumns,
    /// `/metrics` scrapes during the repeat.
    #[serde(default)]
    pub server_metrics: Vec<MetricSample>,
    /// Server-side queue-time histogram delta over the repeat, where the server has one.
    #[serde(default)]
    pub server_queue_histogram: Option<HistogramDelta>,
    /// Memory samples during the repeat.
    #[serde(default)]
    pub memory: Vec<MemorySample>,
    /// Energy the GPUs used during the repeat, joules: NVML's total-energy counter read at its
    /// start and end, summed over devices; `null` where it could not be read (no NVML, a GPU
    /// without the counter, a counter that went backwards) — the run's notes say why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_energy_j: Option<f64>,
    /// Set for an import from a tool that records no send times (SGLang, llmperf): every
    /// `send_offset_us` is then 0 and means "unknown", and throughput is computed over
    /// `reported_window_us` (or not at all), never over a window made up from the latencies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub send_times_unknown: bool,
    /// The measured window the importing tool reported (µs), used only when send times are
    /// unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_window_us: Option<u64>,
}

/// One candidate under one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Run {
    /// Always `run`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// The program that wrote it.
    pub tool: ToolInfo,
    /// The artifact served (the deployment's, or the float baseline's for `role: baseline`).
    pub artifact_id: String,
    /// Candidate of the quantized artifact, or the float baseline reference.
    #[serde(default)]
    pub role: Role,
    /// Profile name.
    pub profile: String,
    /// Workload id of the profile.
    pub workload_id: String,
    /// The profile as it was run (workload, primary metric, SLOs).
    #[serde(default)]
    pub profile_spec: Option<ProfileSpec>,
    /// The candidate measured.
    pub candidate: CandidateRef,
    /// Backend name.
    pub backend: String,
    /// Backend version.
    pub backend_version: String,
    /// Hardware.
    pub hardware: String,
    /// The endpoint measured.
    #[serde(default)]
    pub endpoint: Option<EndpointInfo>,
    /// Whether collection finished.
    pub status: RunStatus,
    /// Why the run failed or stopped early.
    #[serde(default)]
    pub failure: Option<String>,
    /// How far the numbers can be trusted.
    pub evidence_level: EvidenceLevel,
    /// Measured here or imported from another tool.
    #[serde(default)]
    pub source: RunSource,
    /// For imported runs: the original file and its format.
    #[serde(default)]
    pub imported_from: Option<String>,
    /// For imported runs: the source tool, its version, the file's name and sha256, and the
    /// workload as the tool described it (checked against the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<ImportSource>,
    /// Wall-clock start, RFC 3339.
    #[serde(default)]
    pub started_at: Option<String>,
    /// Wall-clock end, RFC 3339.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The server the collector launched, if any.
    #[serde(default)]
    pub server: Option<ServerInfo>,
    /// Notes the collector wants a reviewer to see (e.g. "no GPU: memory is RSS only").
    #[serde(default)]
    pub notes: Vec<String>,
    /// The measured repeats with raw per-request data.
    #[serde(default)]
    pub repeats: Vec<Repeat>,
    /// Summaries as reported by another tool (metric name → value). Used as reported, and
    /// labelled so, only when there are no raw requests; otherwise compared with the
    /// recomputed ones.
    #[serde(default, deserialize_with = "super::unique::opt_map")]
    pub reported: Option<BTreeMap<String, Option<f64>>>,
    /// Set when this run is one trial of a capacity search (the profile's `search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<Trial>,
    /// Set when this run is one trial of the profile's configuration search (the plan's
    /// `[space]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<super::SearchStep>,
    /// Set when the run was collected by one shard of a plan split over several processes
    /// (`sloscope run --shard`): which plan, shard and attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRef>,
    /// sha256 of the content of the plan the run was collected under (its canonical JSON, as
    /// the analysis hashes a loaded plan: `subject.plan_content_sha256`), lower-case hex. A run
    /// whose plan is not the one loaded is said so in the header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_content_sha256: Option<String>,
}

/// Where an imported run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportSource {
    /// The tool, e.g. `vLLM`, `SGLang`, `GuideLLM`, `AIPerf`, `llmperf`.
    pub tool: String,
    /// The file format, e.g. `vllm bench serve --save-result`.
    pub format: String,
    /// The tool's version, when the file states it.
    #[serde(default)]
    pub tool_version: Option<String>,
    /// The original file's name (without its directory).
    pub file: String,
    /// sha256 of the original file's bytes, lowercase hex.
    pub sha256: String,
    /// 0-based position of this benchmark in a file that holds several (GuideLLM, SGLang's
    /// appended JSON Lines); absent when the file holds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<u32>,
    /// The model the file itself names, where it was given a place in a plan (`sloscope import
    /// --plan`, or the page) and so judged as the deployment's artifact: kept, so the analysis
    /// can say that the file names another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_model: Option<String>,
    /// The workload as the tool described it.
    pub workload: ForeignWorkload,
}

/// Another tool's description of the load it generated. Absent fields were not stated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ForeignWorkload {
    /// Requests in flight at most (closed loop, or the cap under a rate).
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// Arrival rate in requests per second; absent for closed loop or "as fast as possible".
    #[serde(default)]
    pub request_rate_rps: Option<f64>,
    /// The requested prompt length in tokens (a synthetic workload's input length).
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    /// The requested output length (`max_tokens`).
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    /// Requests the tool was asked to send (or sent, when it does not say).
    #[serde(default)]
    pub requests: Option<u64>,
    /// The tool's own words for the rest (dataset, strategy, ranges), for a reviewer.
    #[serde(default)]
    pub description: Option<String>,
}

/// One trial of a capacity search: the load it ran at. Everything else about it is an ordinary
/// run, recomputed like any other. Its `profile_spec` is the profile as planned; the workload
/// it ran is that one with `over` set to `load` (and as many repeats as `repeats` holds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// `concurrency` or `request_rate_rps`.
    pub over: String,
    /// The load (streams, or requests per second).
    pub load: f64,
    /// 0-based position in the candidate's search.
    pub index: u32,
}

/// Which attempt of which shard of which plan a file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ShardRef {
    /// sha256 of the plan as run (the `plan.json` copy every attempt writes), lower-case hex.
    pub plan_sha256: String,
    /// This shard's index, `0 ≤ index < count` (Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// How many shards the plan was split into.
    pub count: u32,
    /// This attempt's id: unique per process that ran the shard (a retried pod is another
    /// attempt).
    pub attempt: String,
}

impl ShardRef {
    /// `shard K of N, attempt A` for messages.
    pub fn describe(&self) -> String {
        format!(
            "shard {} of {} (attempt {})",
            self.index, self.count, self.attempt
        )
    }
}
