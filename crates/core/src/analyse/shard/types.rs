//! What the merge of a sharded results tree found: per shard, its attempts and the one that
//! counts; and every problem that keeps the merged analysis from a verdict.

use serde::{Deserialize, Serialize};

use crate::schema::ShardOutcome;

/// Where one shard stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ShardStatus {
    /// Its counted attempt finished and every run of its cells did.
    Done,
    /// Its counted attempt finished, but a run is partial, failed or was not run.
    Failed,
    /// No attempt finished (no completion marker): the latest attempt's runs are read as they
    /// are.
    Partial,
    /// No file of this shard was loaded.
    Missing,
}

impl ShardStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ShardStatus::Done => "done",
            ShardStatus::Failed => "failed",
            ShardStatus::Partial => "partial",
            ShardStatus::Missing => "missing",
        }
    }
}

/// One attempt of a shard, as its files show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttemptState {
    /// The attempt's id.
    pub attempt: String,
    /// The node it ran on, when its record was loaded.
    pub node: Option<String>,
    /// When it started (its record's wall clock), RFC 3339.
    pub started_at: Option<String>,
    /// When its completion marker says it finished; `null` without a marker.
    pub finished_at: Option<String>,
    /// How it ended, by its marker.
    pub outcome: Option<ShardOutcome>,
    /// Run files (and recovered journals) of this attempt that were loaded.
    pub runs: usize,
    /// Whether its runs are the ones analysed.
    pub counted: bool,
}

/// One shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardState {
    /// Its index, from 0.
    pub index: u32,
    /// Where it stands.
    pub status: ShardStatus,
    /// The cells it was assigned (`role name`).
    pub cells: Vec<String>,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptState>,
}

/// The merge of a sharded results tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardReport {
    /// The plan's sha256 every shard names (the first seen, when they disagree).
    pub plan_sha256: String,
    /// How many shards the plan was split into.
    pub count: u32,
    /// Every shard, by index.
    pub shards: Vec<ShardState>,
    /// What keeps the merge from standing for the whole plan, each naming the shard or file.
    pub problems: Vec<String>,
    /// Attempts whose runs were left out (superseded by a later finished attempt), and why.
    pub left_out: Vec<String>,
    /// Every shard done, every cell covered once, one plan, one lineage: the merged analysis
    /// is what one host running the plan would have given.
    pub complete: bool,
}
