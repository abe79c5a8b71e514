//! One trial: its SLO checks with their intervals, whether it needs more requests, and whether
//! its file is usable (finished, the profile's workload, timing consistent with its load).

use super::types::{TrialCheck, TrialReport};
use super::Search;
use crate::analyse::summary::Thresholds;
use crate::base::metric::Metric;
use crate::check::contract::Profile;
use crate::schema::{Run, RunStatus};

/// Evaluates one trial run against the profile's SLOs.
pub fn evaluate_trial(file: &str, run: &Run, profile: &Profile) -> TrialReport {
    let th = Thresholds::from_slo(&profile.slo);
    let c = crate::analyse::compare::candidate_report(file, run, Some(profile), &th);
    let checks: Vec<TrialCheck> = c
        .slo_checks
        .iter()
        .map(|k| TrialCheck {
            metric: k.metric,
            limit: k.limit,
            value: k.value,
            interval: crate::analyse::compare::metric_interval(run, &c, k.metric),
            // The search walks on the value; whether the data decide it is `unsure`.
            pass: k.value.is_some_and(|v| k.metric.meets(v, k.limit)),
            unsure: k.outcome == crate::analyse::evidence::SloOutcome::NotEnoughData,
        })
        .collect();
    let sent: u64 = run.repeats.iter().map(|r| r.requests.len() as u64).sum();
    let ok: u64 = run
        .repeats
        .iter()
        .map(|r| r.requests.error.iter().filter(|e| e.is_none()).count() as u64)
        .sum();
    let pass = checks.iter().all(|k| k.pass);
    // Marginal: the decision rests on a check whose interval straddles its limit — a failing
    // unsure check when the trial fails only through unsure checks, any unsure check when it
    // passes.
    let firm_fail = checks.iter().any(|k| !k.pass && !k.unsure);
    let marginal = !firm_fail && checks.iter().any(|k| k.unsure);
    let binding = binding_check(&checks, &profile.slo);
    TrialReport {
        file: file.to_string(),
        index: run.trial.as_ref().map_or(0, |t| t.index),
        load: run.trial.as_ref().map_or(0.0, |t| t.load),
        pass,
        marginal,
        requests_sent: sent,
        requests_ok: ok,
        throughput_tps: c.metric(Metric::Scalar(crate::base::metric::Scalar::ThroughputTps)),
        checks,
        binding,
        evidence_level: run.evidence_level,
    }
}

/// The failing check with the largest relative miss; when all pass, the one with the smallest
/// relative margin.
fn binding_check(checks: &[TrialCheck], slo: &[(Metric, f64)]) -> Option<Metric> {
    let rel = |k: &TrialCheck| -> f64 {
        let m = slo.iter().find(|(m, _)| *m == k.metric).map(|p| p.0);
        match (k.value, m) {
            (Some(v), Some(m)) => m.margin(v, k.limit) / k.limit.abs().max(1e-9),
            _ => f64::NEG_INFINITY,
        }
    };
    checks
        .iter()
        .min_by(|a, b| rel(a).total_cmp(&rel(b)))
        .map(|k| k.metric)
}

/// Whether the collector should give a trial another repeat of `repeat_requests` requests: an
/// SLO interval straddles its limit, no check fails outright, and the repeat fits under the
/// trial's request cap (the check of a trial's repeats allows as many as fit: `conformance`).
pub fn needs_more_requests(t: &TrialReport, search: &Search, repeat_requests: u64) -> bool {
    t.marginal
        && t.requests_sent + repeat_requests.max(1) <= u64::from(search.max_requests_per_trial)
}

/// A trial run is usable when it finished and is of the profile's workload at its load.
pub fn usable(search: &Search, run: &Run) -> Result<(), String> {
    let t = run.trial.as_ref().ok_or("not a trial")?;
    if t.over != search.over.as_str() {
        return Err(format!(
            "a trial over {}, the profile searches {}",
            t.over,
            search.over.as_str()
        ));
    }
    if !(t.load.is_finite() && t.load > 0.0) {
        return Err(format!(
            "trial.load is {}: expected a positive load",
            t.load
        ));
    }
    match run.status {
        RunStatus::Ok => {}
        RunStatus::Partial | RunStatus::Failed => {
            return Err(format!(
                "{} trial: {}",
                run.status.as_str(),
                run.failure.as_deref().unwrap_or("no reason given")
            ))
        }
    }
    // The workload, the plan and the depth of the requests in flight are the invariants every
    // run passes before it reaches here (`crate::analyse::screen`).
    if run.repeats.is_empty() {
        return Err("no measured requests".into());
    }
    Ok(())
}
