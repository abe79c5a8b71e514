//! The search's part of the profile contract.

use super::{LoadAxis, RankBy, Search, DEFAULT_MAX_REPEATS_PER_TRIAL, DEFAULT_MAX_TRIALS};
use crate::problem::{Problem, ProblemCode};
use crate::schema::{SearchSpec, WorkloadSpec};

/// Checks `spec.search` against the workload; problems go to `issues` with `search.*` fields.
pub(crate) fn validate_search(
    spec: &SearchSpec,
    workload: &WorkloadSpec,
    issues: &mut Vec<Problem>,
) -> Option<Search> {
    let before = issues.len();
    let bad = |field: &str, message: String| {
        Problem::new(ProblemCode::OutOfRange, format!("search.{field}"), message)
    };
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
    let tolerance = match (spec.tolerance, over) {
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
    };
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
    let rank_by = match spec.rank_by.as_deref() {
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
    };
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
