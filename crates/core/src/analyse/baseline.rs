//! Quantized against float: the chosen candidate beside the float baseline's run under the same
//! profile and workload. Differences are quantized − baseline; ratios quantized / baseline. With
//! 3 or more repeats on both sides, the difference gets a Welch 95% interval over per-repeat
//! values.

use serde::{Deserialize, Serialize};

use crate::analyse::summary::Summary;
use crate::base::metric::Metric;
use crate::base::stats::{difference_interval_95, Interval};

/// Metrics shown in the comparison.
pub const BASELINE_METRICS: [Metric; 5] = [
    Metric::TTFT_P95,
    Metric::TPOT_P95,
    Metric::E2E_P95,
    Metric::THROUGHPUT,
    Metric::PEAK_MEMORY,
];

/// One metric, quantized vs float.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BaselineRow {
    /// Metric name.
    pub metric: Metric,
    /// The chosen quantized candidate's value.
    pub quantized: Option<f64>,
    /// The float baseline's value.
    pub baseline: Option<f64>,
    /// quantized − baseline.
    pub difference: Option<f64>,
    /// quantized / baseline.
    pub ratio: Option<f64>,
    /// 95% interval of the difference of per-repeat means, when both have ≥ 3 repeats.
    pub difference_interval: Option<Interval>,
}

/// The comparison for one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BaselineReport {
    /// File of the baseline run.
    pub file: String,
    /// The baseline's artifact.
    pub artifact_id: String,
    /// Which candidate it is compared with (`null` when no candidate was chosen).
    pub compared_with: Option<String>,
    /// The baseline's recomputed summary.
    pub summary: Summary,
    /// Per-metric comparison.
    pub rows: Vec<BaselineRow>,
}

/// Builds the rows from both sides' pooled and per-repeat summaries.
pub fn compare(
    quantized: Option<(&Summary, &[Summary])>,
    baseline: (&Summary, &[Summary]),
) -> Vec<BaselineRow> {
    BASELINE_METRICS
        .into_iter()
        .map(|m| {
            let b = baseline.0.metric(m);
            let q = quantized.and_then(|(s, _)| s.metric(m));
            let per = |s: &[Summary]| -> Option<Vec<f64>> {
                (s.len() >= 3).then(|| s.iter().filter_map(|x| x.metric(m)).collect())
            };
            let interval = quantized.and_then(|(_, qs)| {
                let (a, bb) = (per(qs)?, per(baseline.1)?);
                (a.len() >= 3 && bb.len() >= 3)
                    .then(|| difference_interval_95(&a, &bb))
                    .flatten()
            });
            BaselineRow {
                metric: m,
                quantized: q,
                baseline: b,
                difference: q.zip(b).map(|(q, b)| q - b),
                ratio: q.zip(b).and_then(|(q, b)| (b != 0.0).then(|| q / b)),
                difference_interval: interval,
            }
        })
        .collect()
}
