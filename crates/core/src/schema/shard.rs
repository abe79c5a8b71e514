//! One shard of a plan run over several processes (a Kubernetes Indexed Job): the record each
//! attempt writes first and rewrites at its end (`shard.json`), the marker it writes last,
//! atomically (`done.json`), and the reference every run file of the attempt carries.
//!
//! The analysis finds an attempt's files by these references, never by where they lie, so a
//! results tree can be copied, flattened or dropped on the page as loose files.

use serde::{Deserialize, Serialize};

use super::{Kind, Role, ShardRef};

/// A unit of work that needs one server launch: a candidate with every profile, or the float
/// baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// Stable id from the cell's content (role, name, knob value and the profiles it runs):
    /// the same plan gives the same ids on every host.
    pub id: String,
    /// Candidate or baseline.
    pub role: Role,
    /// The candidate's (or baseline's) name.
    pub name: String,
    /// Estimated cost in decode steps (requests × output tokens ÷ concurrency, summed over the
    /// profiles' repeats and a capacity search's typical trials): only for balancing.
    pub estimated_steps: f64,
    /// The shard that runs it.
    pub shard: u32,
}

/// A wall-clock reading and the monotonic clock read beside it: two anchors bound how far the
/// host's wall clock moved against its monotonic clock during the shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClockAnchor {
    /// Wall clock, RFC 3339 UTC.
    pub wall: String,
    /// Wall clock, nanoseconds since 1970.
    pub wall_unix_ns: i64,
    /// CLOCK_MONOTONIC in nanoseconds (since the host's boot; comparable within one host only).
    pub monotonic_ns: u64,
}

/// The kernel's clock-discipline state (`ntp_adjtime`), as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NtpState {
    /// Whether the kernel says the clock is synchronised (`TIME_ERROR` and `STA_UNSYNC` not
    /// set); `null` when it could not be read.
    pub synchronized: Option<bool>,
    /// The kernel's estimated error, microseconds.
    pub est_error_us: Option<i64>,
    /// The kernel's maximum error, microseconds.
    pub max_error_us: Option<i64>,
    /// Why a value is `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ShardOutcome {
    /// Every run of its cells finished.
    Ok,
    /// A run is partial or failed, or was not run.
    Incomplete,
}

/// Where and what an attempt ran (`shard.json`). Written when the attempt starts and
/// rewritten, with the end fields, when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ShardRecord {
    /// Always `shard`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// This attempt.
    pub shard: ShardRef,
    /// Every cell of the plan with the shard that runs it (the whole assignment, so any one
    /// record names what a missing shard should have run).
    pub cells: Vec<Cell>,
    /// sloscope's version.
    pub sloscope_version: String,
    /// The node (Kubernetes `spec.nodeName` through `NODE_NAME`), else the host name.
    pub node: Option<String>,
    /// The pod (`POD_NAME`), when run in one.
    #[serde(default)]
    pub pod: Option<String>,
    /// The GPUs as NVML names them, or `null`.
    pub hardware: Option<String>,
    /// Clocks when the attempt started.
    pub start: ClockAnchor,
    /// The kernel's NTP state when it started.
    pub ntp_start: NtpState,
    /// Clocks when it ended (`null` while running).
    #[serde(default)]
    pub end: Option<ClockAnchor>,
    /// The kernel's NTP state when it ended.
    #[serde(default)]
    pub ntp_end: Option<NtpState>,
    /// How it ended (`null` while running).
    #[serde(default)]
    pub outcome: Option<ShardOutcome>,
    /// Runs that did not finish or were not run, as `sloscope run` names them.
    #[serde(default)]
    pub incomplete: Vec<String>,
}

/// The completion marker (`done.json`), written last and atomically: an attempt without it
/// did not finish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ShardDone {
    /// Always `shard_done`.
    pub kind: Kind,
    /// `MAJOR.MINOR`.
    pub schema_version: String,
    /// The attempt that finished.
    pub shard: ShardRef,
    /// When, RFC 3339 UTC.
    pub finished_at: String,
    /// How.
    pub outcome: ShardOutcome,
}
