//! Intervals of latency statistics from the raw requests: a stratified bootstrap over requests
//! within repeats. Each resample draws, from every repeat, as many requests as it has (with
//! replacement), pools them and computes the statistic; the 95% interval is the 2.5th and 97.5th
//! percentile of the resampled statistics. Keeping each repeat's count keeps the design of the
//! run; the interval lies between the smallest and largest observation, so a duration's
//! interval is never below zero.
//!
//! Resamples: as many as fit in a fixed budget of draws ([`DRAWS`]), between [`MIN_RESAMPLES`]
//! and [`MAX_RESAMPLES`], with a fixed seed: the same data give the same interval, in the CLI
//! and in the page.

use crate::base::rng::Rng;
use crate::base::stats::{percentile_ranked, percentile_sorted, Interval};

/// Budget of draws over all resamples.
pub const DRAWS: usize = 20_000_000;
/// Fewest resamples (large runs, where the interval is narrow anyway).
pub const MIN_RESAMPLES: usize = 20;
/// Most resamples (small runs).
pub const MAX_RESAMPLES: usize = 1000;
const SEED: u64 = 0x5105_c09e;
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

/// The statistic over all `groups` pooled, with its 95% stratified-bootstrap interval.
/// `None` with fewer than [`MIN_VALUES`] values. A stratum of one value cannot vary, so when a
/// repeat holds fewer than two values the requests are resampled as one pool instead.
pub fn interval(groups: &[Vec<f64>], stat: Statistic) -> Option<Interval> {
    let n: usize = groups.iter().map(Vec::len).sum();
    if n < MIN_VALUES || groups.iter().flatten().any(|v| !v.is_finite()) {
        return None;
    }
    if groups.iter().any(|g| g.len() == 1) {
        let pooled: Vec<f64> = groups.iter().flatten().copied().collect();
        return interval(&[pooled], stat);
    }
    let mut pooled: Vec<f64> = groups.iter().flatten().copied().collect();
    let point = compute(stat, &mut pooled)?;
    let resamples = (DRAWS / n).clamp(MIN_RESAMPLES, MAX_RESAMPLES);
    let mut rng = Rng::new(SEED ^ n as u64);
    let mut estimates = Vec::with_capacity(resamples);
    let mut buf = Vec::with_capacity(n);
    for _ in 0..resamples {
        buf.clear();
        for g in groups.iter().filter(|g| !g.is_empty()) {
            for _ in 0..g.len() {
                buf.push(g[rng.below(g.len() as u64) as usize]);
            }
        }
        estimates.extend(compute(stat, &mut buf));
    }
    estimates.sort_unstable_by(f64::total_cmp);
    Some(Interval {
        mean: point,
        low: percentile_sorted(&estimates, 2.5)?,
        high: percentile_sorted(&estimates, 97.5)?,
        n: n as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_brackets_the_estimate_and_stays_inside_the_data() {
        let g: Vec<Vec<f64>> = (0..3)
            .map(|r| {
                (0..50)
                    .map(|i| 1.0 + ((i * 37 + r * 11) % 100) as f64)
                    .collect()
            })
            .collect();
        let iv = interval(&g, Statistic::Percentile(95.0)).unwrap();
        assert!(iv.low <= iv.mean && iv.mean <= iv.high, "{iv:?}");
        assert!(iv.low >= 1.0 && iv.high <= 100.0, "{iv:?}");
        assert_eq!(iv.n, 150);
        assert_eq!(
            iv,
            interval(&g, Statistic::Percentile(95.0)).unwrap(),
            "reproducible"
        );
        let m = interval(&g, Statistic::Mean).unwrap();
        assert!(m.high - m.low < 20.0, "{m:?}");
        assert!(interval(&[vec![1.0]], Statistic::Mean).is_none());
    }

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

    #[test]
    fn more_requests_narrow_the_interval() {
        let data = |n: usize| {
            vec![(0..n)
                .map(|i| ((i * 7919) % 1000) as f64)
                .collect::<Vec<_>>()]
        };
        let w = |n| {
            let iv = interval(&data(n), Statistic::Percentile(50.0)).unwrap();
            iv.high - iv.low
        };
        assert!(w(2000) < w(50), "{} vs {}", w(2000), w(50));
    }
}
