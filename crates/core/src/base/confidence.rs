//! Intervals whose coverage holds at the sample sizes they are printed for, and what is said
//! where none can be printed.
//!
//! - **Percentiles**: distribution-free order-statistic intervals. For the quantile q of `n`
//!   independent values, the count below the true quantile is Binomial(n, q), so the interval
//!   between the l-th and u-th smallest values covers it with probability P(l ≤ B < u): the
//!   ranks are the largest l and smallest u that keep each tail's miss at most α/2. Where no
//!   rank does (the 95th percentile from fewer than 72 values has no two-sided upper end: the
//!   true p95 lies above the sample maximum with probability 0.95^n), that end is missing and
//!   the number of values that would give it is said. Pooled over repeats of fixed sizes, the
//!   count is a sum of binomials with the same mean and a smaller variance, so the interval is
//!   conservative for the repeats as run.
//! - **Dependence**: requests of one repeat (and gaps of one stream) are not independent. A
//!   lag-1 correlation ρ of the values' ranks within a cluster (in send order) divides the
//!   sample into an effective number of independent values by `(1 + ρ)/(1 − ρ)`. Repeats that
//!   differ from one another (the one-way ANOVA F test of the ranks) widen a latency interval by
//!   how much the statistic itself differs between them ([`repeats_differ`]); among many small
//!   clusters (the streams of inter-token gaps, the 0/1 outcomes of a rate) the design effect
//!   (Kish) `1 + (m̄ − 1)·ICC` of the ranks' intra-class correlation divides the sample
//!   instead. Each is applied only when it is significant at 1% (the F test, a one-sided z test
//!   of ρ): estimated from three repeats, an unconditional correction mostly widens intervals by
//!   noise.
//! - **Means** of per-request values: Student t over the effective number of values, printed
//!   only from [`MIN_VALUES_MEAN`] effective values on: a mean of long-tailed latencies has no
//!   distribution-free interval, and at 300 values the t interval covered a log-normal's mean
//!   (σ = 1) in 92.7% of runs and a Pareto's (α = 3) in 90.9% (measured: `cargo run -p xtask
//!   --release -- coverage`); from 1000, 94.4% or more for every shape measured.
//! - **Proportions** (failure rate, goodput ratio): Clopper–Pearson, on the effective counts.
//! - **Run-level rates** (throughput): Student t over the per-repeat values.
//!
//! Two-sided intervals are 95%; a decision against a limit uses the one-sided 95% bound on the
//! limit's side ([`SIDE`]), which exists from fewer values (the p95 from 59).

/// The miss rate of a two-sided interval (95%).
pub const ALPHA: f64 = 0.05;
/// The miss rate of a one-sided bound used to decide a limit (95%).
pub const SIDE: f64 = 0.05;
/// Fewest effective values a mean's interval is printed from.
pub const MIN_VALUES_MEAN: f64 = 1000.0;
/// The significance of the dependence tests.
const DEPENDENCE_LEVEL: f64 = 0.01;
/// Most values the dependence is estimated from (evenly thinned within each cluster beyond).
const DEPENDENCE_SAMPLE: usize = 200_000;

use crate::base::special::{beta_quantile, binom_cdf, f_sf, normal_cdf, t_quantile};

/// 1-based ranks `(l, u)` of the order statistics that bound the quantile `q` (in (0, 1)) of
/// `n` independent values (an effective size may be fractional) with at most `tail_low` and
/// `tail_high` probability of missing on each side; `None` where no order statistic does.
pub fn quantile_ranks(n: f64, q: f64, tail_low: f64, tail_high: f64) -> (Option<u64>, Option<u64>) {
    let top = n.floor() as u64;
    if top == 0 || !(0.0..=1.0).contains(&q) {
        return (None, None);
    }
    // l: the largest rank with P(B ≤ l − 1) ≤ tail_low (P increases with l).
    let low = if binom_cdf(0.0, n, q) > tail_low {
        None
    } else {
        Some(last_true(1, top, |l| {
            binom_cdf((l - 1) as f64, n, q) <= tail_low
        }))
    };
    // u: the smallest rank with P(B ≤ u − 1) ≥ 1 − tail_high.
    let high = if binom_cdf((top - 1) as f64, n, q) < 1.0 - tail_high {
        None
    } else {
        Some(first_true(1, top, |u| {
            binom_cdf((u - 1) as f64, n, q) >= 1.0 - tail_high
        }))
    };
    (low, high)
}

/// The largest `x` in [lo, hi] with `f(x)`, for `f` true up to a point (and true at `lo`).
fn last_true(mut lo: u64, mut hi: u64, f: impl Fn(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if f(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The smallest `x` in [lo, hi] with `f(x)`, for `f` false up to a point (and true at `hi`).
fn first_true(mut lo: u64, mut hi: u64, f: impl Fn(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if f(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Fewest independent values for which the order statistics bound the quantile `q` from
/// above with miss rate `tail` (the p95 at 2.5%: 72; at 5%: 59).
pub fn needed_for_upper(q: f64, tail: f64) -> u64 {
    if q <= 0.0 {
        return 1;
    }
    if q >= 1.0 {
        return u64::MAX;
    }
    (tail.ln() / q.ln()).ceil().max(1.0) as u64
}

/// Fewest independent values for which the order statistics bound the quantile `q` from
/// below with miss rate `tail`.
pub fn needed_for_lower(q: f64, tail: f64) -> u64 {
    needed_for_upper(1.0 - q, tail)
}

/// Maps a rank among `n_eff` effective values onto the `n` values held, outwards: a lower
/// rank rounds down, an upper one up.
pub fn scale_rank(rank: u64, n_eff: f64, n: usize, upper: bool) -> usize {
    let x = rank as f64 * n as f64 / n_eff.max(1.0);
    let r = if upper { x.ceil() } else { x.floor() };
    (r as usize).clamp(1, n.max(1))
}

/// How strongly values of one cluster (a repeat, a stream) hang together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dependence {
    /// The design effect applied (1: none found significant).
    pub design_effect: f64,
    /// The values the clusters hold.
    pub values: usize,
    /// The clusters.
    pub clusters: usize,
}

impl Dependence {
    /// None found: every value independent.
    pub fn none(values: usize) -> Dependence {
        Dependence {
            design_effect: 1.0,
            values,
            clusters: values,
        }
    }

    /// The effective number of independent values.
    pub fn effective(&self) -> f64 {
        (self.values as f64 / self.design_effect).max(1.0)
    }
}

/// How a run's per-request values hang together within their repeats: the design effect of
/// the lag-1 correlation within repeats (the between-repeat part is not a design effect here:
/// see [`repeats_differ`]), and whether the repeats differ significantly.
pub fn within_repeats(clusters: &[&[f64]]) -> (Dependence, bool) {
    let values: usize = clusters.iter().map(|c| c.len()).sum();
    let kept: Vec<Vec<f64>> = thin(clusters, values);
    let ranks = cluster_ranks(&kept);
    let serial = serial_effect(&ranks);
    let dep = Dependence {
        design_effect: serial.clamp(1.0, values.max(1) as f64),
        values,
        clusters: clusters.iter().filter(|c| !c.is_empty()).count(),
    };
    (dep, between_effect(&ranks) > 1.0)
}

/// How far a statistic of pooled repeats may move because the repeats themselves differ: with
/// `per_repeat` the statistic of each repeat, `t(1 − tail, k − 1)·s/√k` (`s` their standard
/// deviation) — the uncertainty of a mean of `k` repeat effects, in the statistic's own unit, so
/// that repeats that differ significantly but by little (a steady server's TPOT) widen an
/// interval by little, where a design effect from ranks would have collapsed it to `k` values.
pub fn repeats_differ(per_repeat: &[f64], tail: f64) -> Option<f64> {
    let k = per_repeat.len();
    if k < 2 {
        return None;
    }
    let mean = per_repeat.iter().sum::<f64>() / k as f64;
    let var = per_repeat.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    Some(crate::base::special::t_quantile(1.0 - tail, (k - 1) as f64) * (var / k as f64).sqrt())
}

/// The design effect of values grouped in clusters (see the module's note), from their ranks.
pub fn dependence(clusters: &[&[f64]]) -> Dependence {
    let values: usize = clusters.iter().map(|c| c.len()).sum();
    let kept: Vec<Vec<f64>> = thin(clusters, values);
    let ranks = cluster_ranks(&kept);
    let between = between_effect(&ranks);
    let serial = serial_effect(&ranks);
    Dependence {
        design_effect: (between * serial).clamp(1.0, values.max(1) as f64),
        values,
        clusters: clusters.iter().filter(|c| !c.is_empty()).count(),
    }
}

/// Every cluster evenly thinned so that all together hold at most [`DEPENDENCE_SAMPLE`].
fn thin(clusters: &[&[f64]], total: usize) -> Vec<Vec<f64>> {
    let step = total.div_ceil(DEPENDENCE_SAMPLE).max(1);
    clusters
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| c.iter().step_by(step).copied().collect())
        .collect()
}

/// The values replaced by their mid-ranks among all, cluster by cluster, in order.
fn cluster_ranks(clusters: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut all: Vec<(f64, usize, usize)> = Vec::new();
    for (c, values) in clusters.iter().enumerate() {
        for (i, &v) in values.iter().enumerate() {
            all.push((v, c, i));
        }
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Vec<f64>> = clusters.iter().map(|c| vec![0.0; c.len()]).collect();
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        for &(_, c, k) in &all[i..=j] {
            out[c][k] = mid;
        }
        i = j + 1;
    }
    out
}

/// Kish's design effect from the intra-class correlation of the ranks, when the clusters
/// differ significantly (one-way ANOVA's F test), else 1.
fn between_effect(ranks: &[Vec<f64>]) -> f64 {
    let k = ranks.len();
    let n: usize = ranks.iter().map(Vec::len).sum();
    if k < 2 || n <= k {
        return 1.0;
    }
    let grand = ranks.iter().flatten().sum::<f64>() / n as f64;
    let (mut ssb, mut ssw, mut sq) = (0.0, 0.0, 0.0);
    for c in ranks {
        let m = c.len() as f64;
        let mean = c.iter().sum::<f64>() / m;
        ssb += m * (mean - grand).powi(2);
        ssw += c.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        sq += m * m;
    }
    let (d1, d2) = ((k - 1) as f64, (n - k) as f64);
    let (msb, msw) = (ssb / d1, ssw / d2);
    if msw <= 0.0 {
        // Every cluster constant: the clusters are the only units.
        return if msb > 0.0 { n as f64 / k as f64 } else { 1.0 };
    }
    if f_sf(msb / msw, d1, d2) >= DEPENDENCE_LEVEL {
        return 1.0;
    }
    let m0 = (n as f64 - sq / n as f64) / d1;
    let icc = (msb - msw) / (msb + (m0 - 1.0) * msw);
    (1.0 + (m0 - 1.0) * icc).max(1.0)
}

/// `(1 + ρ)/(1 − ρ)` for the lag-1 correlation ρ of the ranks within clusters (each cluster's
/// values in their recorded order, centred on its own mean), when significantly positive.
fn serial_effect(ranks: &[Vec<f64>]) -> f64 {
    let (mut num, mut den, mut pairs) = (0.0, 0.0, 0usize);
    for c in ranks.iter().filter(|c| c.len() > 1) {
        let mean = c.iter().sum::<f64>() / c.len() as f64;
        den += c.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        for w in c.windows(2) {
            num += (w[0] - mean) * (w[1] - mean);
        }
        pairs += c.len() - 1;
    }
    if pairs < 8 || den <= 0.0 {
        return 1.0;
    }
    let rho = (num / den).clamp(-0.99, 0.95);
    let z = rho * (pairs as f64).sqrt();
    if 1.0 - normal_cdf(z) >= DEPENDENCE_LEVEL {
        return 1.0;
    }
    (1.0 + rho) / (1.0 - rho)
}

/// Student t bounds of a mean `(mean − h, mean + h)` with `h = t(1 − tail, n − 1)·s/√n`, over
/// an effective size `n`; `None` below two values or without spread information.
pub fn t_bounds(mean: f64, sd: f64, n: f64, tail: f64) -> Option<(f64, f64)> {
    if n < 2.0 || !sd.is_finite() || !mean.is_finite() {
        return None;
    }
    let h = t_quantile(1.0 - tail, n - 1.0) * sd / n.sqrt();
    Some((mean - h, mean + h))
}

/// Clopper–Pearson bounds of a proportion, `x` of `n` (effective counts may be fractional),
/// each end missing its side with at most `tail`.
pub fn proportion_bounds(x: f64, n: f64, tail: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let x = x.clamp(0.0, n);
    let low = if x <= 0.0 {
        0.0
    } else {
        beta_quantile(tail, x, n - x + 1.0)
    };
    let high = if x >= n {
        1.0
    } else {
        beta_quantile(1.0 - tail, x + 1.0, n - x)
    };
    (low, high)
}

/// Fewest values for which the proportion's one-sided upper bound falls to `limit` when the
/// observed share stays `share` (`None` when no count does: the share is at the limit).
pub fn needed_for_proportion_below(share: f64, limit: f64) -> Option<u64> {
    if share >= limit || limit <= 0.0 {
        return None;
    }
    smallest_n(|n| proportion_bounds(share * n, n, SIDE).1 <= limit)
}

/// Fewest values for which the proportion's one-sided lower bound rises to `limit`.
pub fn needed_for_proportion_above(share: f64, limit: f64) -> Option<u64> {
    if share <= limit || limit >= 1.0 {
        return None;
    }
    smallest_n(|n| proportion_bounds(share * n, n, SIDE).0 >= limit)
}

/// The smallest `n` (up to 10⁹) for which `ok(n)` holds, `ok` false then true as `n` grows.
pub fn smallest_n(ok: impl Fn(f64) -> bool) -> Option<u64> {
    let mut hi = 2u64;
    while !ok(hi as f64) {
        hi = hi.checked_mul(2)?;
        if hi > 1_000_000_000 {
            return None;
        }
    }
    Some(first_true(1, hi, |n| ok(n as f64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p95_needs_59_values_for_a_one_sided_bound_and_72_for_both_ends() {
        assert_eq!(needed_for_upper(0.95, 0.05), 59);
        assert_eq!(needed_for_upper(0.95, 0.025), 72);
        assert_eq!(needed_for_upper(0.99, 0.05), 299);
        assert_eq!(quantile_ranks(18.0, 0.95, 0.025, 0.025).1, None);
        assert_eq!(quantile_ranks(58.0, 0.95, 0.05, 0.05).1, None);
        assert_eq!(quantile_ranks(59.0, 0.95, 0.05, 0.05).1, Some(59));
        assert_eq!(quantile_ranks(72.0, 0.95, 0.025, 0.025).1, Some(72));
    }

    #[test]
    fn the_median_of_100_is_bounded_by_the_textbook_ranks() {
        // The distribution-free 95% interval of the median of 100 values: X(40), X(61).
        assert_eq!(
            quantile_ranks(100.0, 0.5, 0.025, 0.025),
            (Some(40), Some(61))
        );
    }

    #[test]
    fn a_ranks_coverage_is_what_the_binomial_promises() {
        for (n, q) in [(100.0, 0.5), (300.0, 0.95), (2000.0, 0.99), (30.0, 0.9)] {
            let (l, u) = quantile_ranks(n, q, 0.025, 0.025);
            let (l, u) = (l.unwrap_or(0), u.unwrap_or(n as u64 + 1));
            let cover = binom_cdf((u - 1) as f64, n, q) - binom_cdf(l as f64 - 1.0, n, q);
            assert!(cover >= 0.95 - 1e-9, "{n} {q}: {cover}");
        }
    }

    #[test]
    fn zero_of_18_failures_leaves_a_rate_up_to_15_percent() {
        let (lo, hi) = proportion_bounds(0.0, 18.0, SIDE);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.1532).abs() < 1e-3, "{hi}");
        assert_eq!(needed_for_proportion_below(0.0, 0.05), Some(59));
    }

    #[test]
    fn independent_clusters_have_no_design_effect_and_shifted_ones_do() {
        let mut rng = crate::base::rng::Rng::new(4);
        let mut draw =
            |shift: f64| -> Vec<f64> { (0..100).map(|_| shift + rng.unit_open()).collect() };
        let same = [draw(0.0), draw(0.0), draw(0.0)];
        let refs: Vec<&[f64]> = same.iter().map(Vec::as_slice).collect();
        assert_eq!(dependence(&refs).design_effect, 1.0);
        let shifted = [draw(0.0), draw(0.5), draw(1.0)];
        let refs: Vec<&[f64]> = shifted.iter().map(Vec::as_slice).collect();
        let d = dependence(&refs);
        assert!(d.design_effect > 20.0, "{d:?}");
        assert!(d.effective() < 15.0, "{d:?}");
    }

    #[test]
    fn a_trend_within_a_cluster_is_serial_dependence() {
        let trend: Vec<f64> = (0..200).map(|i| f64::from(i) + f64::from(i % 7)).collect();
        let d = dependence(&[&trend]);
        assert!(d.design_effect > 5.0, "{d:?}");
    }
}
