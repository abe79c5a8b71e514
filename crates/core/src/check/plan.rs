//! The refusal-level invariants of a plan (its names are distinct, also to a reader), and what a
//! plan's request counts cannot decide (said before anything runs).

use crate::base::confidence::{needed_for_upper, MIN_VALUES_MEAN, SIDE};
use crate::base::metric::{Metric, Quantity, Scalar, Stat};
use crate::check::contract::Profile;
use crate::check::invariant::{Invariant, Violation};
use crate::check::names::{skeleton, spelled};
use crate::schema::Plan;

/// The first name of the plan that repeats an earlier one, or reads the same as it.
pub fn refusals(plan: &Plan) -> Result<(), Violation> {
    let candidates = plan.candidates.iter().map(|c| c.name.as_str());
    distinct("candidates", "name", candidates)?;
    let profiles = plan
        .profiles
        .iter()
        .map(|p| p.name.as_deref().unwrap_or(""));
    distinct("profiles", "name", profiles)
}

fn distinct<'a>(
    list: &str,
    field: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), Violation> {
    let mut seen: Vec<(&str, String)> = Vec::new();
    for (i, name) in names.enumerate() {
        let path = format!("$.{list}[{i}].{field}");
        if name.trim().is_empty() && list == "candidates" {
            return Err(Violation::new(
                Invariant::PlanNamesUnique,
                path,
                "empty: expected a name a report can show".to_string(),
            ));
        }
        let key = skeleton(name);
        if let Some((earlier, _)) = seen.iter().find(|(_, k)| *k == key) {
            let how = if *earlier == name {
                format!("{} appears twice", spelled(name))
            } else {
                format!(
                    "{} reads the same as {} (case, space, invisible or look-alike characters)",
                    spelled(name),
                    spelled(earlier)
                )
            };
            return Err(Violation::new(
                Invariant::PlanNamesUnique,
                path,
                format!("{how}: expected {list} with distinct names"),
            ));
        }
        seen.push((name, key));
    }
    Ok(())
}

/// Each SLO of `p` (and its primary metric) that the requests a candidate gets cannot decide
/// with a one-sided 95% bound, whatever they measure, with how many would: a p95 needs at
/// least 59 requests, a p99 299, a mean 1000, a failure-rate limit of 1% 299, a run-level rate
/// 2 repeats. (Requests that hang together need more; the analysis says how many.)
pub fn undecidable(p: &Profile) -> Vec<String> {
    let w = &p.workload;
    let repeats = w.repeats.unwrap_or(1).max(1) as u64;
    let requests = repeats * w.requests_per_repeat.unwrap_or(0).max(0) as u64;
    let mut out = Vec::new();
    let fix = |n: Option<u64>| match n {
        Some(n) => format!("plan repeats × requests_per_repeat ≥ {n}"),
        None => "plan repeats ≥ 2 (3 for a useful interval)".into(),
    };
    for &(m, limit) in &p.slo {
        if let Some(why) = short(m, limit, requests, repeats, &fix) {
            out.push(format!(
                "{}: {requests} requests per candidate ({repeats} repeats) cannot decide the SLO \
                 {m}: {why}",
                p.name.as_str()
            ));
        }
    }
    let pm = p.primary_metric;
    if let (Metric::Latency(_, stat), false) = (pm, p.slo.iter().any(|s| s.0 == pm)) {
        if let Some(q) = quantile(stat) {
            let n = needed_for_upper(q, SIDE / 2.0);
            if requests < n {
                out.push(format!(
                    "{}: the primary metric {pm}'s 95% interval has no upper end below {n} \
                     requests per candidate ({requests} planned)",
                    p.name.as_str()
                ));
            }
        }
    }
    out
}

fn quantile(stat: Stat) -> Option<f64> {
    match stat {
        Stat::P50 => Some(0.5),
        Stat::P90 => Some(0.9),
        Stat::P95 => Some(0.95),
        Stat::P99 => Some(0.99),
        Stat::Mean | Stat::Max => None,
    }
}

/// Each SLO of a searched profile `p` that the verdict, drawn on the chosen configuration's
/// fresh confirmation launch alone, cannot decide with `requests` requests in `repeats`
/// repeats, with how many would (`space.budget.confirm_requests` sets them).
pub fn undecidable_confirmation(p: &Profile, requests: u64, repeats: u64) -> Vec<String> {
    let fix = |n: Option<u64>| match n {
        Some(n) => format!("plan space.budget.confirm_requests ≥ {n}"),
        None => "plan space.budget.confirm_requests ≥ 2 × requests_per_repeat".into(),
    };
    p.slo
        .iter()
        .filter_map(|&(m, limit)| {
            let why = short(m, limit, requests, repeats, &fix)?;
            Some(format!(
                "{}: the confirmation launch's {requests} requests ({repeats} repeat{}), on which \
                 the searched profile's verdict is drawn, cannot decide the SLO {m}: {why}",
                p.name.as_str(),
                if repeats == 1 { "" } else { "s" }
            ))
        })
        .collect()
}

/// Why `requests` (in `repeats`) can never decide `m` against `limit`, or `None`; `fix` says
/// how to plan the `n` requests needed (`None`: two repeats).
fn short(
    m: Metric,
    limit: f64,
    requests: u64,
    repeats: u64,
    fix: &dyn Fn(Option<u64>) -> String,
) -> Option<String> {
    let need = |n: u64, what: &str| {
        (requests < n).then(|| format!("{what} needs at least {n}; {}", fix(Some(n))))
    };
    match m {
        // Gaps: as many per stream as it has tokens, and they hang together; the analysis
        // counts them.
        Metric::Latency(Quantity::Itl, _) | Metric::Latency(_, Stat::Max) => None,
        Metric::Latency(_, Stat::Mean) => need(
            MIN_VALUES_MEAN as u64,
            "an interval of a mean of long-tailed latencies",
        ),
        Metric::Latency(_, stat) => {
            let q = quantile(stat)?;
            need(
                needed_for_upper(q, SIDE),
                &format!("a one-sided 95% bound of a p{}", (q * 100.0).round()),
            )
        }
        Metric::Scalar(Scalar::FailureRate) if limit > 0.0 && limit < 1.0 => need(
            needed_for_upper(1.0 - limit, SIDE),
            &format!("showing a failure rate below {limit} with no failure at all"),
        ),
        Metric::Scalar(Scalar::GoodputRatio) if limit > 0.0 && limit < 1.0 => need(
            needed_for_upper(limit, SIDE),
            &format!("showing a goodput ratio above {limit} with every request good"),
        ),
        Metric::Scalar(
            Scalar::ThroughputTps
            | Scalar::RequestThroughputRps
            | Scalar::GoodputRps
            | Scalar::GoodputTps,
        ) if repeats < 2 => Some(format!(
            "a run-level rate's interval is over repeats, and one repeat gives none; {}",
            fix(None)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(slo: serde_json::Value, repeats: i64, per: i64) -> Profile {
        let spec: crate::schema::ProfileSpec = serde_json::from_value(serde_json::json!({
            "name": "latency",
            "workload": {"id": "w", "concurrency": 1, "prompt_tokens": 32, "max_output_tokens": 32,
                         "repeats": repeats, "requests_per_repeat": per},
            "primary_metric": "ttft_p95_ms",
            "slo": slo,
        }))
        .unwrap_or_default();
        crate::check::contract::validate_profile(&spec).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_plan_too_small_for_its_percentiles_is_told_how_many_it_needs() {
        let p = profile(
            serde_json::json!({"ttft_p95_ms": 250, "tpot_p99_ms": 30, "failure_rate": 0.01}),
            3,
            6,
        );
        let w = undecidable(&p);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w.iter()
                .any(|l| l.contains("ttft_p95_ms") && l.contains("at least 59")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|l| l.contains("tpot_p99_ms") && l.contains("at least 299")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|l| l.contains("failure_rate") && l.contains("at least 299")),
            "{w:?}"
        );
        // 3 × 24 = 72: every SLO here can be decided, and the p95's interval has both ends.
        let p = profile(
            serde_json::json!({"ttft_p95_ms": 250, "failure_rate": 0.0}),
            3,
            24,
        );
        assert!(undecidable(&p).is_empty(), "{:?}", undecidable(&p));
    }

    /// A searched profile's verdict is drawn on its confirmation launch alone: its SLOs are
    /// weighed against the confirmation's requests, and the warning names the budget field that
    /// sets them. The control: enough requests, no warning.
    #[test]
    fn a_confirmation_too_small_for_its_slos_names_the_budget_field() {
        let p = profile(
            serde_json::json!({"ttft_p99_ms": 250, "throughput_tps": 10}),
            3,
            24,
        );
        let w = undecidable_confirmation(&p, 72, 3);
        assert!(
            w.len() == 1
                && w[0].contains("ttft_p99_ms")
                && w[0].contains("space.budget.confirm_requests ≥ 299"),
            "{w:?}"
        );
        let w = undecidable_confirmation(&p, 24, 1);
        assert!(
            w.len() == 2
                && w.iter().any(|l| l.contains("throughput_tps")
                    && l.contains("(1 repeat)")
                    && l.contains("confirm_requests ≥ 2 × requests_per_repeat")),
            "{w:?}"
        );
        assert!(undecidable_confirmation(&p, 312, 13).is_empty());
    }

    #[test]
    fn one_repeat_cannot_bound_a_run_level_rate() {
        let p = profile(serde_json::json!({"throughput_tps": 10}), 1, 100);
        let w = undecidable(&p);
        assert!(w.len() == 1 && w[0].contains("repeats ≥ 2"), "{w:?}");
    }
}
