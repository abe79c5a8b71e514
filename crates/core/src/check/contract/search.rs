//! The capacity search as a profile declares it: its types (load axis, ranking, bounds) and
//! its part of the profile contract.

use serde::{Deserialize, Serialize};

use crate::base::fmt::format_number as fmt_num;
use crate::base::problem::{Problem, ProblemCode};
use crate::schema::{SearchSpec, WorkloadSpec};

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

fn bad(field: &str, message: String) -> Problem {
    Problem::new(ProblemCode::OutOfRange, format!("search.{field}"), message)
}

/// Checks `spec.search` against the workload; problems go to `issues` with `search.*` fields.
pub(crate) fn validate_search(
    spec: &SearchSpec,
    workload: &WorkloadSpec,
    issues: &mut Vec<Problem>,
) -> Option<Search> {
    let before = issues.len();
    let over = axis(spec, workload, issues);
    let (min, max) = range(spec, over, issues);
    let tolerance = tolerance(spec, over, issues);
    let count =
        |issues: &mut Vec<Problem>, field: &str, v: Option<i64>, default: u32, most: i64| match v {
            None => Some(default),
            Some(v) if v < 1 || v > most => {
                issues.push(bad(
                    field,
                    format!("search.{field} is {v}: expected 1 to {most}"),
                ));
                None
            }
            Some(v) => Some(v as u32),
        };
    let max_trials = count(
        issues,
        "max_trials",
        spec.max_trials,
        DEFAULT_MAX_TRIALS,
        100,
    );
    let per_repeat = workload.requests_per_repeat.unwrap_or(1).max(1);
    let max_requests = count(
        issues,
        "max_requests_per_trial",
        spec.max_requests_per_trial,
        (per_repeat as u32).saturating_mul(DEFAULT_MAX_REPEATS_PER_TRIAL),
        10_000_000,
    );
    if let Some(t) = spec.time_budget_s.filter(|t| !(t.is_finite() && *t > 0.0)) {
        issues.push(bad(
            "time_budget_s",
            format!("search.time_budget_s is {t}: expected a positive number of seconds"),
        ));
    }
    let rank_by = rank_by(spec, issues);
    if issues.len() > before {
        return None;
    }
    Some(Search {
        over: over?,
        min: min?,
        max: max?,
        tolerance: tolerance?,
        max_trials: max_trials?,
        max_requests_per_trial: max_requests?,
        time_budget_s: spec.time_budget_s,
        rank_by: rank_by?,
    })
}

fn axis(spec: &SearchSpec, workload: &WorkloadSpec, issues: &mut Vec<Problem>) -> Option<LoadAxis> {
    let over = match spec.over.as_deref() {
        None => {
            issues.push(Problem::new(
                ProblemCode::MissingField,
                "search.over",
                "missing search.over: expected concurrency or request_rate_rps",
            ));
            None
        }
        Some(s) => {
            let a = LoadAxis::parse(s);
            if a.is_none() {
                issues.push(Problem::new(
                    ProblemCode::UnsupportedValue,
                    "search.over",
                    format!(
                        "unsupported search.over {s:?}: expected concurrency or request_rate_rps"
                    ),
                ));
            }
            a
        }
    };
    if over == Some(LoadAxis::RequestRateRps) && workload.request_rate_rps.is_none() {
        issues.push(Problem::new(
            ProblemCode::MissingField,
            "workload.request_rate_rps",
            "search.over = request_rate_rps needs an open-loop workload: set workload.request_rate_rps (the fixed-load rate)",
        ));
    }
    over
}

/// `min` and `max`: positive loads, whole streams on the concurrency axis, `max` above `min`.
fn range(
    spec: &SearchSpec,
    over: Option<LoadAxis>,
    issues: &mut Vec<Problem>,
) -> (Option<f64>, Option<f64>) {
    let mut bound = |field: &str, v: Option<f64>| match v {
        None => {
            issues.push(Problem::new(
                ProblemCode::MissingField,
                format!("search.{field}"),
                format!("missing search.{field}: expected a positive load"),
            ));
            None
        }
        Some(v) if !(v.is_finite() && v > 0.0) => {
            issues.push(bad(
                field,
                format!("search.{field} is {v}: expected a positive load"),
            ));
            None
        }
        Some(v) if over == Some(LoadAxis::Concurrency) && v.fract() != 0.0 => {
            issues.push(bad(
                field,
                format!("search.{field} is {v}: expected a whole number of streams"),
            ));
            None
        }
        Some(v) => Some(v),
    };
    let min = bound("min", spec.min);
    let max = bound("max", spec.max);
    if let (Some(lo), Some(hi)) = (min, max) {
        if hi <= lo {
            issues.push(bad(
                "max",
                format!("search.max ({hi}) is not above search.min ({lo})"),
            ));
        }
        if over == Some(LoadAxis::Concurrency) && hi > 4096.0 {
            issues.push(bad(
                "max",
                format!("search.max is {hi}: expected at most 4096 streams"),
            ));
        }
    }
    (min, max)
}

fn tolerance(spec: &SearchSpec, over: Option<LoadAxis>, issues: &mut Vec<Problem>) -> Option<f64> {
    match (spec.tolerance, over) {
        (None, Some(LoadAxis::Concurrency)) => Some(1.0),
        (None, _) => {
            issues.push(Problem::new(
                ProblemCode::MissingField,
                "search.tolerance",
                "missing search.tolerance: expected the bracket width (req/s) at which the search stops",
            ));
            None
        }
        (Some(t), _) if !(t.is_finite() && t > 0.0) => {
            issues.push(bad(
                "tolerance",
                format!("search.tolerance is {t}: expected a positive width"),
            ));
            None
        }
        (Some(t), Some(LoadAxis::Concurrency)) if t.fract() != 0.0 => {
            issues.push(bad(
                "tolerance",
                format!("search.tolerance is {t}: expected a whole number of streams"),
            ));
            None
        }
        (Some(t), _) => Some(t),
    }
}

fn rank_by(spec: &SearchSpec, issues: &mut Vec<Problem>) -> Option<RankBy> {
    match spec.rank_by.as_deref() {
        None | Some("fixed_load") => Some(RankBy::FixedLoad),
        Some("capacity") => Some(RankBy::Capacity),
        Some("goodput") => Some(RankBy::Goodput),
        Some(s) => {
            issues.push(Problem::new(
                ProblemCode::UnsupportedValue,
                "search.rank_by",
                format!(
                    "unsupported search.rank_by {s:?}: expected fixed_load, capacity or goodput"
                ),
            ));
            None
        }
    }
}
