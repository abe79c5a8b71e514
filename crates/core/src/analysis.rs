//! Door: runs in, one [`Analysis`] out: summaries recomputed from raw requests, intervals,
//! verdicts, the capacity search, the calibration the coverage studies check, and the shards'
//! assignment of a plan's cells.

pub use crate::analyse::calibrate::{
    change as calibrated_change, proportion_interval, values_decision, values_interval,
};
pub use crate::analyse::capacity::{
    evaluate_trial, load_text, needs_more_requests, next_load, trial_requests, CapacityReport,
    LoadAxis, Search, TrialReport,
};
pub use crate::analyse::evidence::SloOutcome;
pub use crate::analyse::report::{Analysis, Code, ProfileReport};
pub use crate::analyse::shard::assign::{assign as assign_shards, cells as shard_cells};
pub use crate::analyse::subject::content_sha256 as plan_content_sha256;
pub use crate::analyse::summary::Curves;
pub use crate::analyse::verdict::ProfileDecision;
pub use crate::analyse::{analyze, analyze_all, analyze_with, AnalyzeOptions};
