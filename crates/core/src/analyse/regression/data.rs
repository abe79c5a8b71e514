//! What a cell's comparison is made of: each metric's per-request values, whether the two
//! sides sent the same request sequence, and the default thresholds.

use crate::base::metric::{Metric, Quantity, Scalar, Stat};
use crate::schema::{RequestColumns, Run};

use super::stats::Units;
use super::types::Threshold;

/// The metrics every cell compares (each where both sides have it), then the profile's own.
pub(crate) const METRICS: [Metric; 11] = [
    Metric::Latency(Quantity::Ttft, Stat::P50),
    Metric::Latency(Quantity::Ttft, Stat::P95),
    Metric::Latency(Quantity::Ttft, Stat::P99),
    Metric::Latency(Quantity::Tpot, Stat::P50),
    Metric::Latency(Quantity::Tpot, Stat::P95),
    Metric::Latency(Quantity::Itl, Stat::P95),
    Metric::Latency(Quantity::E2e, Stat::P50),
    Metric::Latency(Quantity::E2e, Stat::P95),
    Metric::Scalar(Scalar::ThroughputTps),
    Metric::Scalar(Scalar::RequestThroughputRps),
    Metric::Scalar(Scalar::FailureRate),
];

/// The default threshold of `m`: 5% and a floor in the metric's unit that is below what a
/// user notices (TTFT 2 ms, a token's time 0.2 ms, e2e 5 ms, 1 tok/s …); a failure rate counts
/// from half a percentage point whatever its relative change.
pub fn default_threshold(m: Metric) -> Threshold {
    let t = |relative, absolute| Threshold { relative, absolute };
    match m {
        Metric::Latency(Quantity::Ttft | Quantity::QueueWait, _) => t(0.05, 2.0),
        Metric::Latency(Quantity::Tpot | Quantity::Itl, _) => t(0.05, 0.2),
        Metric::Latency(Quantity::E2e, _) => t(0.05, 5.0),
        Metric::Scalar(Scalar::ThroughputTps | Scalar::GoodputTps) => t(0.05, 1.0),
        Metric::Scalar(Scalar::RequestThroughputRps | Scalar::GoodputRps) => t(0.05, 0.01),
        Metric::Scalar(Scalar::GoodputRatio | Scalar::FailureRate) => t(0.0, 0.005),
        Metric::Scalar(Scalar::PeakMemoryMb) => t(0.05, 50.0),
        Metric::Scalar(Scalar::QueueDepthMax) => t(0.1, 1.0),
    }
}

/// Whether `m`'s change is made from each side's per-request data (a latency statistic, the
/// failure rate), rather than from one value per repeat (a run-level rate).
pub(crate) fn per_request(m: Metric) -> bool {
    matches!(
        m,
        Metric::Latency(..) | Metric::Scalar(Scalar::FailureRate | Scalar::GoodputRatio)
    )
}

/// `m`'s per-request values of `run`, grouped by repeat (a failed request contributes none to
/// a latency, 1 to the failure rate).
pub(crate) fn units(run: &Run, m: Metric) -> Units {
    run.repeats
        .iter()
        .map(|rep| {
            let r = &rep.requests;
            (0..r.len()).map(|i| request(r, i, m)).collect()
        })
        .collect()
}

fn request(r: &RequestColumns, i: usize, m: Metric) -> Vec<f64> {
    let failed = r.error[i].is_some();
    let q = match m {
        Metric::Scalar(Scalar::FailureRate) => return vec![if failed { 1.0 } else { 0.0 }],
        Metric::Latency(q, _) => q,
        Metric::Scalar(_) => return Vec::new(),
    };
    let (false, Some(t), Some(e)) = (failed, r.ttft_us[i], r.e2e_us[i]) else {
        return Vec::new();
    };
    let ms = |us: u64| us as f64 / 1000.0;
    match q {
        Quantity::Ttft => vec![ms(t)],
        Quantity::E2e => vec![ms(e)],
        Quantity::Tpot => r.output_tokens[i]
            .filter(|&n| n > 1 && e >= t)
            .map(|n| vec![ms(e - t) / f64::from(n - 1)])
            .unwrap_or_default(),
        Quantity::Itl => r
            .itl_us
            .get(i)
            .iter()
            .map(|&g| f64::from(g) / 1000.0)
            .collect(),
        Quantity::QueueWait => Vec::new(),
    }
}

/// Whether the two runs sent the same request sequence, so that requests pair by index: the
/// same repeats, the same number of requests in each, and per request the same prompt length
/// and output cap. `Err` names the first difference.
pub(crate) fn same_requests(before: &Run, after: &Run) -> Result<(), String> {
    if before.repeats.len() != after.repeats.len() {
        return Err(format!(
            "{} repeats before, {} after",
            before.repeats.len(),
            after.repeats.len()
        ));
    }
    for (k, (b, a)) in before.repeats.iter().zip(&after.repeats).enumerate() {
        let (b, a) = (&b.requests, &a.requests);
        if b.len() != a.len() {
            return Err(format!(
                "repeat {k}: {} requests before, {} after",
                b.len(),
                a.len()
            ));
        }
        if let Some(i) = (0..b.len()).find(|&i| b.prompt_tokens[i].is_none()) {
            return Err(format!(
                "repeat {k}, request {i}: prompt length unknown, so the sequences cannot be shown \
                 to be the same"
            ));
        }
        if let Some(i) = (0..b.len()).find(|&i| b.prompt_tokens[i] != a.prompt_tokens[i]) {
            return Err(format!(
                "repeat {k}, request {i}: prompt of {} tokens before, {} after",
                shown(b.prompt_tokens[i]),
                shown(a.prompt_tokens[i])
            ));
        }
        if b.max_output_tokens != a.max_output_tokens {
            return Err(format!("repeat {k}: the output caps sent differ"));
        }
    }
    Ok(())
}

fn shown(v: Option<u32>) -> String {
    v.map_or_else(|| "unknown".into(), |n| n.to_string())
}
