//! The profile contract: a named workload with positive counts, a primary
//! metric that exists and at least one SLO limit, each on a known metric with a known direction.

pub mod search;

use serde::{Deserialize, Serialize};

use crate::base::metric::{Direction, Metric};
use crate::base::problem::{Problem, ProblemCode};
use crate::schema::{ProfileName, ProfileSpec, WorkloadSpec};

/// One SLO limit: a ceiling for lower-is-better metrics, a floor for higher-is-better ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloLimit {
    /// Metric name.
    pub metric: Metric,
    /// The limit.
    pub limit: f64,
    /// Which side of the limit passes.
    pub direction: Direction,
}

/// A profile that passed its contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Which profile.
    pub name: ProfileName,
    /// The workload as declared (every required count present and positive).
    pub workload: WorkloadSpec,
    /// Workload id.
    pub workload_id: String,
    /// The ranking metric.
    pub primary_metric: Metric,
    /// The limits, in name order.
    pub slo: Vec<(Metric, f64)>,
    /// The capacity search, when the profile declares one.
    pub search: Option<search::Search>,
}

impl Profile {
    /// SLO limits for reports.
    pub fn slo_limits(&self) -> Vec<SloLimit> {
        self.slo
            .iter()
            .map(|(m, l)| SloLimit {
                metric: *m,
                limit: *l,
                direction: m.direction(),
            })
            .collect()
    }
}

/// Checks a profile. `Err` lists every problem found, not only the first.
pub fn validate_profile(spec: &ProfileSpec) -> Result<Profile, Vec<Problem>> {
    let mut issues = Vec::new();
    let name = match spec.name.as_deref() {
        None => {
            issues.push(missing(
                "name",
                "missing name: expected latency, balanced or throughput",
            ));
            None
        }
        Some(n) => {
            let p = ProfileName::parse(n);
            if p.is_none() {
                issues.push(Problem::new(
                    ProblemCode::UnsupportedValue,
                    "name",
                    format!(
                        "unsupported profile name {n:?}: expected latency, balanced or throughput"
                    ),
                ));
            }
            p
        }
    };
    let workload = spec.workload.clone().unwrap_or_default();
    if spec.workload.is_none() {
        issues.push(missing("workload", "missing workload"));
    }
    let workload_id = match workload.id.as_deref() {
        Some(id) if !id.trim().is_empty() => Some(id.to_string()),
        Some(_) => {
            issues.push(missing(
                "workload.id",
                "workload.id is empty: expected a name",
            ));
            None
        }
        None => {
            issues.push(missing("workload.id", "missing workload.id"));
            None
        }
    };
    workload_problems(&workload, &mut issues);
    replay_problems(&workload, &mut issues);
    let primary = primary_metric(spec, &mut issues);
    let slo = slo_limits(spec, &mut issues);
    let search = spec
        .search
        .as_ref()
        .and_then(|s| search::validate_search(s, &workload, &mut issues));
    match (name, workload_id, primary) {
        (Some(name), Some(workload_id), Some(primary_metric)) if issues.is_empty() => Ok(Profile {
            name,
            workload,
            workload_id,
            primary_metric,
            slo,
            search,
        }),
        _ => Err(issues),
    }
}

/// The workload's counts, rate, length distributions and arrival process.
fn workload_problems(workload: &WorkloadSpec, issues: &mut Vec<Problem>) {
    let counts = [
        ("concurrency", workload.concurrency, true),
        ("prompt_tokens", workload.prompt_tokens, true),
        ("max_output_tokens", workload.max_output_tokens, true),
        ("repeats", workload.repeats, true),
        ("requests_per_repeat", workload.requests_per_repeat, false),
    ];
    for (field, value, required) in counts {
        match value {
            None if required => issues.push(missing(
                format!("workload.{field}"),
                format!("missing workload.{field}"),
            )),
            Some(v) if v <= 0 => issues.push(out_of_range(
                format!("workload.{field}"),
                format!("workload.{field} is {v}: expected a positive count"),
            )),
            _ => {}
        }
    }
    if let Some(w) = workload.warmup_requests {
        if w < 0 {
            issues.push(out_of_range(
                "workload.warmup_requests",
                format!("workload.warmup_requests is {w}: expected 0 or more"),
            ));
        }
    }
    if let Some(r) = workload.request_rate_rps {
        if !(r.is_finite() && r > 0.0) {
            issues.push(out_of_range(
                "workload.request_rate_rps",
                format!("workload.request_rate_rps is {r}: expected a positive rate"),
            ));
        }
    }
    for (field, dist) in [
        ("prompt_length", &workload.prompt_length),
        ("output_length", &workload.output_length),
    ] {
        if let Some(why) = dist.as_ref().and_then(|d| d.problem()) {
            issues.push(out_of_range(
                format!("workload.{field}"),
                format!("workload.{field}: {why}"),
            ));
        }
    }
    if let Some(a) = &workload.arrival {
        if let Some(why) = a.problem() {
            issues.push(out_of_range(
                "workload.arrival",
                format!("workload.arrival: {why}"),
            ));
        } else if workload.request_rate_rps.is_none()
            && *a != crate::base::traffic::Arrival::Poisson
        {
            issues.push(out_of_range(
                "workload.arrival",
                "workload.arrival is set but workload.request_rate_rps is not: arrivals need a rate (without one the load is closed-loop)",
            ));
        }
    }
}

/// Datasets, traces and shared prefixes: their parameters, and what they replace (a trace sets
/// the send times and both lengths; a dataset the prompts; a shared prefix goes in front of
/// synthetic prompts only).
fn replay_problems(workload: &WorkloadSpec, issues: &mut Vec<Problem>) {
    let checks: [(&str, Option<String>); 4] = [
        (
            "dataset",
            workload.dataset.as_ref().and_then(|d| d.problem()),
        ),
        ("trace", workload.trace.as_ref().and_then(|t| t.problem())),
        (
            "shared_prefix",
            workload.shared_prefix.as_ref().and_then(|p| p.problem()),
        ),
        ("sessions", sessions_problem(workload)),
    ];
    for (field, why) in checks {
        if let Some(why) = why {
            issues.push(out_of_range(
                format!("workload.{field}"),
                format!("workload.{field}: {why}"),
            ));
        }
    }
    let conflicts: [(&str, bool, &str, bool); 9] = [
        (
            "sessions",
            workload.sessions.is_some(),
            "trace",
            workload.trace.is_some(),
        ),
        (
            "sessions",
            workload.sessions.is_some(),
            "request_rate_rps",
            workload.request_rate_rps.is_some(),
        ),
        (
            "trace",
            workload.trace.is_some(),
            "request_rate_rps",
            workload.request_rate_rps.is_some(),
        ),
        (
            "trace",
            workload.trace.is_some(),
            "arrival",
            workload.arrival.is_some(),
        ),
        (
            "trace",
            workload.trace.is_some(),
            "prompt_length",
            workload.prompt_length.is_some(),
        ),
        (
            "trace",
            workload.trace.is_some(),
            "output_length",
            workload.output_length.is_some(),
        ),
        (
            "trace",
            workload.trace.is_some(),
            "dataset",
            workload.dataset.is_some(),
        ),
        (
            "dataset",
            workload.dataset.is_some(),
            "prompt_length",
            workload.prompt_length.is_some(),
        ),
        (
            "dataset",
            workload.dataset.is_some(),
            "shared_prefix",
            workload.shared_prefix.is_some(),
        ),
    ];
    for (a, has_a, b, has_b) in conflicts {
        if has_a && has_b {
            let what = match a {
                "trace" => "a trace sets the send times and both lengths",
                "sessions" => "sessions send each turn when the previous answer has ended (a closed loop of sessions)",
                _ => "a dataset sets the prompts",
            };
            issues.push(out_of_range(
                format!("workload.{b}"),
                format!("workload.{b} is set with workload.{a}: {what}; remove one"),
            ));
        }
    }
}

/// A session's parameters, and its turn count: drawn, or the dataset's conversations.
fn sessions_problem(workload: &WorkloadSpec) -> Option<String> {
    let s = workload.sessions.as_ref()?;
    if s.turns.is_none() && workload.dataset.is_none() {
        return Some(
            "turns is missing: expected a distribution of turns per session (or a dataset of conversations)".into(),
        );
    }
    s.problem()
}

fn primary_metric(spec: &ProfileSpec, issues: &mut Vec<Problem>) -> Option<Metric> {
    match spec.primary_metric.as_deref() {
        None | Some("") => {
            issues.push(missing("primary_metric", "missing primary_metric"));
            None
        }
        Some(m) => {
            let parsed = Metric::parse(m);
            if parsed.is_none() {
                issues.push(unknown_metric("primary_metric", m));
            }
            parsed
        }
    }
}

/// The SLO limits, each a known metric with a limit in its range: latency, memory and queue
/// ceilings above 0, throughput floors at 0 or more, ratios in [0, 1].
fn slo_limits(spec: &ProfileSpec, issues: &mut Vec<Problem>) -> Vec<(Metric, f64)> {
    let mut slo = Vec::new();
    let map = match &spec.slo {
        None => {
            issues.push(missing("slo", "missing slo: expected at least one limit"));
            return slo;
        }
        Some(map) if map.is_empty() => {
            issues.push(missing("slo", "slo is empty: expected at least one limit"));
            return slo;
        }
        Some(map) => map,
    };
    for (k, &v) in map {
        let Some(m) = Metric::parse(k) else {
            issues.push(unknown_metric(&format!("slo.{k}"), k));
            continue;
        };
        match limit_range_problem(m, v) {
            Some(expected) => issues.push(out_of_range(
                format!("slo.{k}"),
                format!("slo.{k} is {v}: expected {expected}"),
            )),
            None => slo.push((m, v)),
        }
    }
    slo
}

/// What a limit on `m` must be, when `v` is not that.
fn limit_range_problem(m: Metric, v: f64) -> Option<&'static str> {
    use crate::base::metric::Scalar;
    if !v.is_finite() {
        return Some("a finite limit");
    }
    match m {
        Metric::Scalar(Scalar::FailureRate | Scalar::GoodputRatio) if !(0.0..=1.0).contains(&v) => {
            Some("a ratio between 0 and 1")
        }
        Metric::Scalar(Scalar::FailureRate | Scalar::GoodputRatio) => None,
        Metric::Scalar(
            Scalar::ThroughputTps
            | Scalar::RequestThroughputRps
            | Scalar::GoodputRps
            | Scalar::GoodputTps,
        ) if v < 0.0 => Some("a floor of 0 or more"),
        Metric::Scalar(Scalar::QueueDepthMax) if v < 0.0 => Some("a ceiling of 0 or more"),
        Metric::Latency(..) | Metric::Scalar(Scalar::PeakMemoryMb) if v <= 0.0 => {
            Some("a ceiling above 0 (a latency or memory of 0 cannot be met)")
        }
        _ => None,
    }
}

fn missing(field: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem::new(ProblemCode::MissingField, field, message)
}

fn out_of_range(field: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem::new(ProblemCode::OutOfRange, field, message)
}

fn unknown_metric(field: &str, name: &str) -> Problem {
    let message = format!(
        "{field}: unknown metric {name:?}; expected one of ttft|tpot|itl|e2e|queue_wait \
         _ mean|p50|p90|p95|p99|max _ms, or {}",
        crate::base::metric::Scalar::ALL
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Problem::new(ProblemCode::UnsupportedValue, field, message)
}

#[cfg(test)]
mod tests;
