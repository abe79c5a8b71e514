//! The statistic a resample computes, and the budget of draws the resampled comparisons share
//! (`regression`). A single run's intervals are not bootstrapped: a percentile bootstrap's
//! interval ends at the sample's extremes and covers a tail percentile of a small run far less
//! often than it says (`crate::analyse::evidence` gives those).

use crate::base::stats::percentile_ranked;

/// Budget of draws over all resamples.
pub const DRAWS: usize = 20_000_000;
/// Fewest values an interval is computed from: fewer resample into a width that means nothing
/// (one request per repeat resamples into an interval of zero width).
pub const MIN_VALUES: usize = 8;

/// Which statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Statistic {
    /// The arithmetic mean.
    Mean,
    /// A numpy-linear percentile, `q` in [0, 100].
    Percentile(f64),
}

/// The statistic of `values` (reordered in place). A percentile needs only the two order
/// statistics around its rank: found by selection in O(n), then interpolated by the one
/// percentile function.
pub(crate) fn compute(stat: Statistic, values: &mut [f64]) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    match stat {
        Statistic::Mean => Some(values.iter().sum::<f64>() / n as f64),
        Statistic::Percentile(q) => {
            let lo = ((n - 1) as f64 * q.clamp(0.0, 100.0) / 100.0).floor() as usize;
            let (_, &mut a, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
            let b = above.iter().copied().fold(f64::INFINITY, f64::min);
            percentile_ranked(n, q, |i| if i == lo { a } else { b })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::percentile_sorted;

    #[test]
    fn selection_gives_the_sorted_percentile() {
        let v: Vec<f64> = (0..101).map(|i| ((i * 37) % 101) as f64 * 1.5).collect();
        let mut sorted = v.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        for q in [0.0, 2.5, 50.0, 95.0, 97.5, 100.0] {
            let mut w = v.clone();
            assert_eq!(
                compute(Statistic::Percentile(q), &mut w),
                percentile_sorted(&sorted, q)
            );
        }
    }
}
