//! Capacity under the SLO: the highest load on one axis (concurrency, or request rate) at which a
//! candidate still meets every SLO of its profile, found by a search over trials.
//!
//! Every trial is an ordinary run file with `trial` set (its workload is the profile's with the
//! axis set to the trial's load). Nothing here stores a capacity: it is derived from the trial
//! files each time, by the CLI and the page alike, so a reviewer can audit every trial.
//!
//! - **A trial passes** when every SLO holds. For latency statistics (bootstrap over requests)
//!   the check uses the 95% interval: wholly on the good side → pass, wholly on the bad side →
//!   fail, straddling → *unsure*. The collector gives an unsure trial more requests (up to
//!   `max_requests_per_trial`); an unsure trial at the cap (or interrupted) is decided by its
//!   point estimate and marked **marginal**. Metrics without a per-request interval are judged
//!   by their value.
//! - **The search** ([`next_load`]): start at `min`; while every trial passes, double the load
//!   (capped at `max`); once a load fails, bisect between the highest pass below it and the
//!   lowest fail, until they are within `tolerance` (integers for concurrency). It stops early
//!   at `max_trials`, when `min` fails, or when `max` passes.
//! - **The capacity** ([`derive`]): the lowest failing load (`first_fail`), the highest passing
//!   load below it (`last_pass`), the SLO that failed there, and the trials used. A pass above a
//!   fail (noise, or a non-monotone server) is kept and flagged, never hidden.

use serde::{Deserialize, Serialize};

use crate::fmt::format_number as fmt_num;
use crate::schema::WorkloadSpec;

mod contract;
mod report;
mod search;
mod trial;

pub(crate) use contract::validate_search;
pub use report::{
    capacity_report, decide, derive, distinct, CandidateCapacity, CapacityReport, CapacityStatus,
};
pub use search::next_load;
pub use trial::{
    evaluate_trial, needs_more_requests, observed_concurrency, TrialCheck, TrialReport,
};

/// Default number of trials per candidate.
pub const DEFAULT_MAX_TRIALS: u32 = 12;
/// Default cap on measured requests per trial, in repeats of `requests_per_repeat`.
pub const DEFAULT_MAX_REPEATS_PER_TRIAL: u32 = 4;

/// The load axis of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LoadAxis {
    /// Requests in flight at once (closed loop), whole numbers.
    Concurrency,
    /// Poisson arrivals per second (open loop).
    RequestRateRps,
}

impl LoadAxis {
    /// The field name, as in the plan.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadAxis::Concurrency => "concurrency",
            LoadAxis::RequestRateRps => "request_rate_rps",
        }
    }

    /// Parses the field name.
    pub fn parse(s: &str) -> Option<LoadAxis> {
        match s {
            "concurrency" => Some(LoadAxis::Concurrency),
            "request_rate_rps" => Some(LoadAxis::RequestRateRps),
            _ => None,
        }
    }

    /// The unit of a load on this axis, for reports.
    pub fn unit(self) -> &'static str {
        match self {
            LoadAxis::Concurrency => "streams",
            LoadAxis::RequestRateRps => "req/s",
        }
    }

    /// `workload` with this axis set to `load` (the rest unchanged).
    pub fn apply(self, workload: &WorkloadSpec, load: f64) -> WorkloadSpec {
        let mut w = workload.clone();
        match self {
            LoadAxis::Concurrency => w.concurrency = Some(load.round() as i64),
            LoadAxis::RequestRateRps => w.request_rate_rps = Some(load),
        }
        w
    }

    /// The workload's load on this axis.
    pub fn of(self, workload: &WorkloadSpec) -> Option<f64> {
        match self {
            LoadAxis::Concurrency => workload.concurrency.map(|c| c as f64),
            LoadAxis::RequestRateRps => workload.request_rate_rps,
        }
    }
}

/// How a profile with a search ranks its candidates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// The seed's verdict at the workload's load; capacities are reported beside it.
    #[default]
    FixedLoad,
    /// The candidate that sustains the highest load under every SLO (ties: the higher goodput).
    Capacity,
    /// The candidate with the highest output throughput in a trial that met every SLO (at or
    /// below its capacity): the most useful work the configuration delivers within the SLO.
    Goodput,
}

/// A search that passed the profile contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The axis.
    pub over: LoadAxis,
    /// Lowest load tried.
    pub min: f64,
    /// Highest load tried.
    pub max: f64,
    /// Bracket width at which the search stops.
    pub tolerance: f64,
    /// Most trials per candidate.
    pub max_trials: u32,
    /// Most measured requests in one trial.
    pub max_requests_per_trial: u32,
    /// Wall-clock budget per candidate, seconds.
    pub time_budget_s: Option<f64>,
    /// Ranking.
    pub rank_by: RankBy,
}

/// Requests each stream of a closed-loop trial sends at least, so the queue reaches its steady
/// state: with fewer, a trial just above the capacity is mostly its first, unqueued burst (at
/// N + 1 streams on N slots only one request of the first round waits).
pub const MIN_REQUESTS_PER_STREAM: i64 = 4;

/// Measured requests of one trial repeat: the workload's `requests_per_repeat`, and for a
/// concurrency search at least [`MIN_REQUESTS_PER_STREAM`] per stream.
pub fn trial_requests(over: LoadAxis, load: f64, requests_per_repeat: i64) -> i64 {
    match over {
        LoadAxis::Concurrency => {
            requests_per_repeat.max(MIN_REQUESTS_PER_STREAM * load.round() as i64)
        }
        LoadAxis::RequestRateRps => requests_per_repeat,
    }
}

/// A load with its unit: `1 stream`, `12 streams`, `2.5 req/s`.
pub fn load_text(axis: LoadAxis, v: f64) -> String {
    let unit = match axis {
        LoadAxis::Concurrency if v == 1.0 => "stream",
        _ => axis.unit(),
    };
    format!("{} {unit}", fmt_num(v))
}
