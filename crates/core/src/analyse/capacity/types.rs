//! The capacity search's result types: each trial's report, each candidate's capacity and the
//! profile's comparison. Data only; derived in `trial` and `report`.

use serde::{Deserialize, Serialize};

use crate::base::metric::Metric;

use crate::base::stats::Interval;
use crate::check::contract::search::{LoadAxis, RankBy};
use crate::schema::EvidenceLevel;

/// One SLO checked in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrialCheck {
    /// Metric name.
    pub metric: Metric,
    /// The limit.
    pub limit: f64,
    /// The trial's value (`null`: not measured, which fails).
    pub value: Option<f64>,
    /// The value's 95% interval (`null` for a figure with no sampling bound).
    pub interval: Option<Interval>,
    /// Met by the value.
    pub pass: bool,
    /// The data cannot decide the limit (its one-sided 95% bounds leave it open): more
    /// requests could change the answer.
    pub unsure: bool,
}

/// One trial of a candidate's search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrialReport {
    /// Run file.
    pub file: String,
    /// Position in the search.
    pub index: u32,
    /// The load.
    pub load: f64,
    /// Every SLO held (by its interval, or by its value when marginal).
    pub pass: bool,
    /// Decided by a point estimate whose interval straddles the limit.
    pub marginal: bool,
    /// Measured requests (sent) and how many succeeded.
    pub requests_sent: u64,
    /// Successful requests.
    pub requests_ok: u64,
    /// Output tokens per second over the trial.
    pub throughput_tps: Option<f64>,
    /// Every SLO check.
    pub checks: Vec<TrialCheck>,
    /// The check that decided a failure (the largest relative miss), or the tightest pass.
    pub binding: Option<Metric>,
    /// Evidence level of the run.
    pub evidence_level: EvidenceLevel,
}

/// How far a candidate's search got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CapacityStatus {
    /// Bracketed within the tolerance.
    Found,
    /// Every load up to `max` passed: the capacity is at least `max`.
    AtLeastMax,
    /// `min` already failed: the capacity is below the range.
    BelowMin,
    /// The bracket is still wider than the tolerance (trial or time budget spent, or stopped).
    Open,
    /// No usable trial.
    NoTrials,
}

/// One candidate's capacity, derived from its trial files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CandidateCapacity {
    /// Candidate name.
    pub name: String,
    /// The usable trials, by load.
    pub trials: Vec<TrialReport>,
    /// Trial runs left out (failed, partial, another workload), with the reason.
    pub excluded: Vec<String>,
    /// The highest passing load below the first failing one.
    pub last_pass: Option<f64>,
    /// The lowest failing load.
    pub first_fail: Option<f64>,
    /// The SLO that failed at `first_fail`, with its value and limit.
    pub binding_at_fail: Option<String>,
    /// How far the search got.
    pub status: CapacityStatus,
    /// Passing trials above the first fail (not used for the capacity; flagged).
    pub passes_above_fail: Vec<f64>,
    /// Trials whose decision rests on a straddling interval.
    pub marginal_loads: Vec<f64>,
    /// Closed-loop trials with fewer than `MIN_REQUESTS_PER_STREAM` requests per stream: the
    /// queue may not have reached its steady state, so a pass there is weak evidence.
    #[serde(default)]
    pub short_loads: Vec<f64>,
    /// Every trial's evidence is real.
    pub real_evidence: bool,
    /// The highest output throughput (tokens/s) of a passing trial at or below `last_pass`.
    pub goodput_tps: Option<f64>,
    /// The load of that trial.
    pub goodput_load: Option<f64>,
    /// The capacity in words, e.g. `11–12 streams`.
    pub text: String,
}

/// The capacities of a profile's candidates, and what they say together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CapacityReport {
    /// The axis searched.
    pub over: LoadAxis,
    /// Range and tolerance, as declared.
    pub min: f64,
    /// Highest load.
    pub max: f64,
    /// Bracket width at which a search stops.
    pub tolerance: f64,
    /// How the profile ranks candidates.
    pub rank_by: RankBy,
    /// The load the fixed-load verdict is measured at.
    pub nominal_load: Option<f64>,
    /// One entry per candidate with trials, in plan order.
    pub candidates: Vec<CandidateCapacity>,
    /// Trials a grid over the same range at the same tolerance would need.
    pub grid_trials: u32,
    /// The comparison in words: who sustains most, by what margin, and whether it is distinct.
    pub statement: String,
    /// The candidate that sustains the highest load (none when none passed any trial).
    pub best: Option<String>,
}
