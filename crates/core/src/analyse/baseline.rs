//! Quantized against float: the chosen candidate beside the float baseline's run under the same
//! profile and workload. Differences are quantized − baseline; ratios quantized / baseline. Each
//! difference has the 95% interval `compare` gives a change (`regression::change`): for a
//! percentile, each side's own interval at 97.5%, so it has no end where a side has too few
//! requests.

use serde::{Deserialize, Serialize};

use crate::analyse::regression::change::{change_of, Measured};
use crate::analyse::summary::Summary;
use crate::base::metric::Metric;
use crate::base::stats::Interval;

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
    /// 95% interval of the difference (an end missing where a side has too few values).
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

/// Builds the rows from both sides' summaries and runs: each difference with its 95%
/// interval as `compare` makes it (each side's own 97.5% interval of a per-request statistic,
/// Welch t over repeats for a run-level rate).
pub(crate) fn compare(
    quantized: Option<(&Summary, Measured<'_>)>,
    baseline: (&Summary, Measured<'_>),
) -> Vec<BaselineRow> {
    BASELINE_METRICS
        .into_iter()
        .map(|m| {
            let b = baseline.0.metric(m);
            let q = quantized.and_then(|(s, _)| s.metric(m));
            let interval = q
                .zip(b)
                .zip(quantized)
                .and_then(|((qv, bv), (_, qm))| change_of(m, baseline.1, qm, bv, qv).0);
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
