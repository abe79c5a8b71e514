//! One trial: its SLO checks with their intervals, whether it needs more requests, and whether
//! its file is usable (finished, the profile's workload, timing consistent with its load).

use serde::{Deserialize, Serialize};

use super::{LoadAxis, Search};
use crate::contract::Profile;
use crate::metric::Metric;
use crate::schema::{EvidenceLevel, Run, RunStatus};
use crate::stats::Interval;
use crate::summary::Thresholds;

/// One SLO checked in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrialCheck {
    /// Metric name.
    pub metric: String,
    /// The limit.
    pub limit: f64,
    /// The trial's value (`null`: not measured, which fails).
    pub value: Option<f64>,
    /// 95% interval over requests, for latency statistics.
    pub interval: Option<Interval>,
    /// Met by the value.
    pub pass: bool,
    /// The interval straddles the limit: more requests could change the answer.
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
    pub binding: Option<String>,
    /// Evidence level of the run.
    pub evidence_level: EvidenceLevel,
}

/// Evaluates one trial run against the profile's SLOs.
pub fn evaluate_trial(file: &str, run: &Run, profile: &Profile) -> TrialReport {
    let th = Thresholds::from_slo(&profile.slo);
    let c = crate::compare::candidate_report(file, run, Some(profile), &th);
    let mut checks = Vec::new();
    for (m, limit) in &profile.slo {
        let value = c.metric(*m);
        let interval = if crate::compare::bootstrapped(*m) {
            crate::compare::metric_interval(run, &c, *m)
        } else {
            None
        };
        let pass = value.is_some_and(|v| m.meets(v, *limit));
        let unsure = interval.is_some_and(|iv| m.meets(iv.low, *limit) != m.meets(iv.high, *limit));
        checks.push(TrialCheck {
            metric: m.name(),
            limit: *limit,
            value,
            interval,
            pass,
            unsure,
        });
    }
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
        throughput_tps: c.metric(Metric::Scalar(crate::metric::Scalar::ThroughputTps)),
        checks,
        binding,
        evidence_level: run.evidence_level,
    }
}

/// The failing check with the largest relative miss; when all pass, the one with the smallest
/// relative margin.
fn binding_check(checks: &[TrialCheck], slo: &[(Metric, f64)]) -> Option<String> {
    let rel = |k: &TrialCheck| -> f64 {
        let m = slo.iter().find(|(m, _)| m.name() == k.metric).map(|p| p.0);
        match (k.value, m) {
            (Some(v), Some(m)) => m.margin(v, k.limit) / k.limit.abs().max(1e-9),
            _ => f64::NEG_INFINITY,
        }
    };
    checks
        .iter()
        .min_by(|a, b| rel(a).total_cmp(&rel(b)))
        .map(|k| k.metric.clone())
}

/// Whether the collector should give a trial more requests: an SLO interval straddles its
/// limit, no check fails outright, and the trial is below its request cap.
pub fn needs_more_requests(t: &TrialReport, search: &Search) -> bool {
    t.marginal && t.requests_sent < u64::from(search.max_requests_per_trial)
}

/// A trial run is usable when it finished and is of the profile's workload at its load.
pub(super) fn usable(profile: &Profile, search: &Search, run: &Run) -> Result<(), String> {
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
    if run.workload_id != profile.workload_id {
        return Err(format!(
            "workload {:?}, the profile's is {:?}",
            run.workload_id, profile.workload_id
        ));
    }
    // The trial's profile_spec is the profile as planned; its load is `trial.load`.
    if let Some(w) = run.profile_spec.as_ref().and_then(|s| s.workload.as_ref()) {
        let want = &profile.workload;
        let mut diffs = Vec::new();
        if w.prompt_tokens != want.prompt_tokens {
            diffs.push("prompt_tokens");
        }
        if w.max_output_tokens != want.max_output_tokens {
            diffs.push("max_output_tokens");
        }
        if search.over != LoadAxis::Concurrency && w.concurrency != want.concurrency {
            diffs.push("concurrency");
        }
        if search.over != LoadAxis::RequestRateRps && w.request_rate_rps != want.request_rate_rps {
            diffs.push("request_rate_rps");
        }
        if !diffs.is_empty() {
            return Err(format!(
                "its workload differs from the profile's in {}",
                diffs.join(", ")
            ));
        }
    }
    if run.repeats.is_empty() {
        return Err("no measured requests".into());
    }
    if search.over == LoadAxis::Concurrency {
        let load = t.load.round() as usize;
        let (peak, ok) = observed_concurrency(run);
        if peak > load {
            return Err(format!(
                "its requests overlap {peak} deep, more than the {load} streams it claims (a closed loop never has more in flight)"
            ));
        }
        if ok >= 2 * load && peak < load {
            return Err(format!(
                "never more than {peak} of its requests in flight: not a measurement at {load} streams"
            ));
        }
    }
    Ok(())
}

/// The most requests in flight at once in any repeat (from send offsets and end-to-end times,
/// each end taken 1 ms early so a request sent as the previous one ended never counts as an
/// overlap), and how many requests have both.
pub fn observed_concurrency(run: &Run) -> (usize, usize) {
    let mut peak = 0;
    let mut timed = 0;
    for rep in &run.repeats {
        let r = &rep.requests;
        let mut events: Vec<(u64, i32)> = Vec::with_capacity(2 * r.len());
        for i in 0..r.len() {
            if let (Some(&send), Some(Some(e2e))) = (r.send_offset_us.get(i), r.e2e_us.get(i)) {
                let end = send.saturating_add(e2e.saturating_sub(1000)).max(send);
                events.push((send, 1));
                events.push((end, -1));
                timed += 1;
            }
        }
        events.sort_unstable();
        let mut now: i32 = 0;
        for (_, d) in events {
            now += d;
            peak = peak.max(now.max(0) as usize);
        }
    }
    (peak, timed)
}
