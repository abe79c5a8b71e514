//! The v1 file format: every type that the collector writes and the report reads.
//!
//! One owner for the schema: these types are both `Serialize` and `Deserialize`, the JSON
//! Schemas under `static/schema/` are generated from them, and every file starts with `kind`
//! and `schema_version`. Units live in field names; a missing value is `null`, never `0`.

pub(crate) mod column;
mod gaps;
mod gate;
pub mod journal;
mod knob;
mod lineage;
mod plan;
pub mod replay;
mod run;
mod server;
mod shard;
mod space;
mod unique;

pub use gaps::{
    parse_nested as gaps_parse_nested, parse_nested_prefix as gaps_parse_prefix, GapStream, Gaps,
};
pub use gate::{
    EvalSet, GateArtifact, GateDecision, GateEvidence, GateFigures, GateIntervals, GateThresholds,
    PositionColumns,
};
pub use journal::{JournalLine, RequestRow, ServerCounts, SessionTurn, JOURNAL_KIND};
pub use knob::KnobValue;
pub use lineage::{ArtifactIdentity, Decision, Deployment, FloatBaseline, QualityGate};
pub use plan::{
    price, Candidate, FileStamp, LeftOut, Plan, PlanGateLimits, ProfileSpec, SearchSpec,
    WorkloadSpec,
};
pub use replay::{
    Dataset, DatasetFormat, Sessions, SharedPrefix, Trace, TraceEntry, TraceFormat,
    MOONCAKE_BLOCK_TOKENS,
};
pub use run::{
    CandidateRef, EndpointInfo, EvidenceLevel, ForeignWorkload, ImportSource, Repeat,
    RequestColumns, Role, Run, RunSource, RunStatus, ShardRef, TokenSource, ToolInfo, Trial,
};
pub use server::{
    HistogramBucket, HistogramDelta, MemorySample, MetricSample, ServerInfo, ServerReport,
};
pub use shard::{Cell, ClockAnchor, NtpState, ShardDone, ShardOutcome, ShardRecord};
pub use space::{KnobSpec, Purpose, SearchStep, SpaceBudget, SpaceSpec};

use serde::{Deserialize, Serialize};

/// Major version of the schema this build reads and writes. A file with a newer major is
/// refused; a newer minor is read (unknown fields are ignored).
pub const SCHEMA_MAJOR: u32 = 1;
/// `schema_version` as written into every file.
pub const SCHEMA_VERSION: &str = "1.0";

/// What a file holds; the first field of every sloscope file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The quality-gate record of the quantized artifact.
    QualityGate,
    /// The float baseline record (same model, float weights).
    FloatBaseline,
    /// The deployment record of the quantized artifact on its backend.
    Deployment,
    /// Profiles and candidates to run.
    Plan,
    /// One candidate under one profile: raw per-request data.
    Run,
    /// One attempt of one shard of a plan run over several processes (`shard.json`).
    Shard,
    /// The marker a shard's attempt writes last (`done.json`).
    ShardDone,
}

impl Kind {
    /// All kinds, in the order they are listed in messages.
    pub const ALL: [Kind; 7] = [
        Kind::QualityGate,
        Kind::FloatBaseline,
        Kind::Deployment,
        Kind::Plan,
        Kind::Run,
        Kind::Shard,
        Kind::ShardDone,
    ];

    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::QualityGate => "quality_gate",
            Kind::FloatBaseline => "float_baseline",
            Kind::Deployment => "deployment",
            Kind::Plan => "plan",
            Kind::Run => "run",
            Kind::Shard => "shard",
            Kind::ShardDone => "shard_done",
        }
    }

    /// Parses a `kind` value.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The three serving profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProfileName {
    /// Concurrency 1, short prompts; TTFT first.
    Latency,
    /// Medium concurrency, mixed lengths; TPOT, throughput and tail.
    Balanced,
    /// High concurrency, long generation; output tokens/s under limits.
    Throughput,
}

impl ProfileName {
    /// All profiles in report order.
    pub const ALL: [ProfileName; 3] = [
        ProfileName::Latency,
        ProfileName::Balanced,
        ProfileName::Throughput,
    ];

    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileName::Latency => "latency",
            ProfileName::Balanced => "balanced",
            ProfileName::Throughput => "throughput",
        }
    }

    /// Parses a profile name.
    pub fn parse(s: &str) -> Option<ProfileName> {
        ProfileName::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The seed of the profile's request sequence: the same for every candidate, so they are
    /// measured on the same requests.
    pub fn request_salt(self) -> u64 {
        (self as u64 + 1).wrapping_mul(0x9E37_79B9)
    }
}

impl std::fmt::Display for ProfileName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
