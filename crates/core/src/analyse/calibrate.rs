//! The intervals and decisions sloscope prints, callable on values drawn from known
//! distributions: what the coverage benchmark (`cargo run -p xtask --release -- coverage`) and
//! the coverage test measure. Each function runs the code the analysis runs on a run file's
//! requests (a test holds them equal), so the coverage measured is the coverage printed.

use crate::analyse::evidence::{self, Decided};
use crate::analyse::regression::types::{MetricChange, Threshold};
use crate::analyse::summary::Thresholds;
use crate::base::metric::Metric;
use crate::base::stats::Interval;
use crate::schema::Run;

/// The 95% interval of a per-request latency statistic `m` (a percentile or the mean) of
/// values clustered by repeat, as a run's TTFT would get it.
pub fn values_interval(clusters: &[Vec<f64>], m: Metric) -> Option<Interval> {
    let b = evidence::of_values(clusters.to_vec());
    let estimate = statistic(clusters, m)?;
    evidence::interval(&b, m, estimate)
}

/// The decision of the SLO `m ≤ limit` (or `≥`) on values clustered by repeat: the outcome and
/// its one-sided 95% bounds.
pub fn values_decision(
    clusters: &[Vec<f64>],
    m: Metric,
    limit: f64,
) -> Option<(evidence::SloOutcome, [Option<f64>; 2])> {
    let b = evidence::of_values(clusters.to_vec());
    let d: Decided = evidence::decide(&b, m, statistic(clusters, m)?, limit);
    Some((d.outcome, d.bounds))
}

/// The 95% interval of a share (the failure rate) from per-request outcomes clustered by
/// repeat.
pub fn proportion_interval(clusters: &[Vec<bool>]) -> Option<Interval> {
    let values: Vec<Vec<f64>> = clusters
        .iter()
        .map(|c| c.iter().map(|&h| f64::from(u8::from(h))).collect())
        .collect();
    let n: usize = values.iter().map(Vec::len).sum();
    let x: f64 = values.iter().flatten().sum();
    let b = evidence::indicators(values);
    evidence::interval(&b, Metric::FAILURE_RATE, x / n.max(1) as f64)
}

/// The numpy-linear statistic of all the values (the mean, or a percentile).
fn statistic(clusters: &[Vec<f64>], m: Metric) -> Option<f64> {
    use crate::base::metric::Stat;
    let mut all: Vec<f64> = clusters.iter().flatten().copied().collect();
    crate::base::sort::sort_f64(&mut all);
    let Metric::Latency(_, stat) = m else {
        return None;
    };
    let q = match stat {
        Stat::Mean => return (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64),
        Stat::P50 => 50.0,
        Stat::P90 => 90.0,
        Stat::P95 => 95.0,
        Stat::P99 => 99.0,
        Stat::Max => 100.0,
    };
    crate::base::stats::percentile_sorted(&all, q)
}

/// The change of `m` from the run `before` to the run `after` as `compare` labels it (the
/// runs' requests paired by index when the sequences pair), under `threshold`.
pub fn change(before: &Run, after: &Run, m: Metric, threshold: Threshold) -> Option<MetricChange> {
    use crate::analyse::compare::candidate_report;
    use crate::analyse::regression::cells::{metric_change, shifts};
    let th = Thresholds::default();
    let (cb, ca) = (
        candidate_report("before", before, None, &th),
        candidate_report("after", after, None, &th),
    );
    let paired = crate::analyse::regression::data::same_requests(before, after).is_ok();
    let moved = shifts(before, after, paired);
    metric_change(m, (&cb, before), (&ca, after), &moved, threshold)
}
