//! Statistics, defined once: the percentile, distribution summaries and confidence intervals.
//!
//! The percentile is numpy's default (`method="linear"`), which vLLM, SGLang and AIPerf use:
//! for sorted values `x[0..n]` and `q` in [0, 100], `h = (n − 1)·q/100`, and the result is
//! `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])`. Empty input has no percentile (`None`).

use serde::{Deserialize, Serialize};

use crate::base::blocks::each_block;

/// numpy-linear percentile of already sorted values. `q` is clamped to [0, 100].
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    percentile_ranked(sorted.len(), q, |i| sorted[i])
}

/// The one interpolation: numpy-linear percentile `q` of `n` sorted values read through a
/// rank → value accessor (a slice, a counting histogram, a scaled view). `None` when `n` is 0
/// or `q` is NaN; `q` is clamped to [0, 100].
pub fn percentile_ranked(n: usize, q: f64, at: impl Fn(usize) -> f64) -> Option<f64> {
    if n == 0 || q.is_nan() {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 100.0) / 100.0;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let a = at(lo);
    if frac == 0.0 || lo + 1 >= n {
        return Some(a);
    }
    Some(a + frac * (at(lo + 1) - a))
}

/// Summary of one latency-like quantity, in milliseconds. All `null` when `count` is 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Distribution {
    /// Number of values.
    pub count: u64,
    /// Arithmetic mean.
    pub mean_ms: Option<f64>,
    /// Smallest value.
    pub min_ms: Option<f64>,
    /// Median.
    pub p50_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// 95th percentile.
    pub p95_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
    /// Largest value.
    pub max_ms: Option<f64>,
}

impl Distribution {
    /// One statistic.
    pub fn stat(&self, stat: crate::base::metric::Stat) -> Option<f64> {
        use crate::base::metric::Stat;
        match stat {
            Stat::Mean => self.mean_ms,
            Stat::P50 => self.p50_ms,
            Stat::P90 => self.p90_ms,
            Stat::P95 => self.p95_ms,
            Stat::P99 => self.p99_ms,
            Stat::Max => self.max_ms,
        }
    }

    /// From values in milliseconds (sorted in place).
    pub fn from_ms(values: &mut [f64]) -> Distribution {
        crate::base::sort::sort_f64(values);
        let n = values.len();
        if n == 0 {
            return Distribution::default();
        }
        let sum: f64 = values.iter().sum();
        let p = |q| percentile_sorted(values, q);
        Distribution {
            count: n as u64,
            mean_ms: Some(sum / n as f64),
            min_ms: Some(values[0]),
            p50_ms: p(50.0),
            p90_ms: p(90.0),
            p95_ms: p(95.0),
            p99_ms: p(99.0),
            max_ms: Some(values[n - 1]),
        }
    }

    /// From integer microseconds (sorted in place); reported in milliseconds.
    pub fn from_us(values: &mut [u64]) -> Distribution {
        crate::base::sort::sort_u64(values);
        let n = values.len();
        if n == 0 {
            return Distribution::default();
        }
        let sum: u128 = values.iter().map(|&v| v as u128).sum();
        let at = |i: usize| values[i] as f64;
        summarize_ranked(n, sum, at)
    }

    /// From integer microseconds that must not be reordered (e.g. a shared gap buffer).
    /// Uses a counting pass when the value range is small, which is exact and O(n).
    pub fn from_us_u32(values: &[u32]) -> Distribution {
        Self::from_us_u32_parts(&[values])
    }

    /// [`Self::from_us_u32`] over several slices taken together (the gaps of the successful
    /// requests of a run with failures), without first copying them into one buffer: the
    /// counting pass reads them in place; only a wide value range is copied to be sorted.
    pub fn from_us_u32_parts(parts: &[&[u32]]) -> Distribution {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        if n == 0 {
            return Distribution::default();
        }
        let (mut lo, mut hi, mut sum) = (u32::MAX, 0u32, 0u128);
        each_block(parts, |block| {
            // per block in u64 (no overflow below 2^32 values), then added up
            let (mut l, mut h, mut s) = (u32::MAX, 0u32, 0u64);
            for &v in block {
                l = l.min(v);
                h = h.max(v);
                s += u64::from(v);
            }
            lo = lo.min(l);
            hi = hi.max(h);
            sum += u128::from(s);
        });
        let range = (hi - lo) as usize + 1;
        if range <= COUNTING_RANGE_MAX && range <= n.saturating_mul(4).max(1024) {
            let mut counts = vec![0u32; range];
            let counts = counts.as_mut_slice(); // indexed per value: see `rank_u32`
            each_block(parts, |block| {
                for &v in block {
                    counts[(v - lo) as usize] += 1;
                }
            });
            let ranked = CountedRanks::new(counts, lo);
            return summarize_ranked(n, sum, |i| ranked.value_at(i));
        }
        let mut sorted: Vec<u32> = Vec::with_capacity(n);
        for p in parts {
            sorted.extend_from_slice(p);
        }
        sorted.sort_unstable();
        summarize_ranked(n, sum, |i| sorted[i] as f64)
    }
}

/// Widest value range (µs) summarized by counting instead of sorting.
const COUNTING_RANGE_MAX: usize = 1 << 22;

/// Builds a distribution from a rank → value accessor over `n` sorted values (µs).
fn summarize_ranked(n: usize, sum_us: u128, at: impl Fn(usize) -> f64) -> Distribution {
    let p = |q: f64| percentile_ranked(n, q, &at).map(|v| v / 1000.0);
    Distribution {
        count: n as u64,
        mean_ms: Some(sum_us as f64 / n as f64 / 1000.0),
        min_ms: Some(at(0) / 1000.0),
        p50_ms: p(50.0),
        p90_ms: p(90.0),
        p95_ms: p(95.0),
        p99_ms: p(99.0),
        max_ms: Some(at(n - 1) / 1000.0),
    }
}

/// The value of rank `k` (0-based, ascending) among all the values of `parts` taken together,
/// without copying or sorting them: one counting pass over the high 16 bits finds the value's
/// bucket, a second over the low 16 bits of that bucket's values finds the value (O(n), two
/// 64 Ki-entry tables; sorting 64 million gaps to find their median took most of an analysis).
/// `None` when there are not `k + 1` values.
pub fn rank_u32(parts: &[&[u32]], k: usize) -> Option<u32> {
    // The first pass also counts the values under 2^16 (most gaps, in µs) exactly: when rank
    // `k` is among them, one pass is enough.
    // Slices, not `Vec`s, are indexed in the loops: the page's size-optimized build calls
    // `Vec`'s `Index` as a function, one call per gap.
    let (mut high, mut low) = (vec![0usize; 1 << 16], vec![0usize; 1 << 16]);
    let (high, low) = (high.as_mut_slice(), low.as_mut_slice());
    each_block(parts, |block| {
        for &v in block {
            high[(v >> 16) as usize] += 1;
            if v >> 16 == 0 {
                low[v as usize] += 1;
            }
        }
    });
    let (h, k) = nth_in_buckets(high, k)?;
    if h != 0 {
        low.fill(0);
        each_block(parts, |block| {
            for &v in block {
                if v >> 16 == h {
                    low[(v & 0xffff) as usize] += 1;
                }
            }
        });
    }
    let (l, _) = nth_in_buckets(low, k)?;
    Some(h << 16 | l)
}

/// The bucket holding rank `k` of the counted values, and `k`'s rank within it.
fn nth_in_buckets(counts: &[usize], mut k: usize) -> Option<(u32, usize)> {
    for (bucket, &c) in counts.iter().enumerate() {
        if k < c {
            return Some((bucket as u32, k));
        }
        k -= c;
    }
    None
}

/// Order statistics from a counting histogram: rank → value by binary search on prefix sums.
struct CountedRanks {
    /// `ends[j]` = number of values ≤ the j-th non-empty bucket's value.
    ends: Vec<u64>,
    values: Vec<u32>,
}

impl CountedRanks {
    fn new(counts: &[u32], lo: u32) -> Self {
        let mut ends = Vec::new();
        let mut values = Vec::new();
        let mut acc = 0u64;
        for (j, &c) in counts.iter().enumerate() {
            if c > 0 {
                acc += c as u64;
                ends.push(acc);
                values.push(lo + j as u32);
            }
        }
        CountedRanks { ends, values }
    }

    fn value_at(&self, rank: usize) -> f64 {
        let j = self.ends.partition_point(|&e| e <= rank as u64);
        self.values[j.min(self.values.len() - 1)] as f64
    }
}

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Distribution-free order statistics of the per-request values (a percentile).
    OrderStatistics,
    /// Student t over the per-request values (a mean).
    TOverValues,
    /// Student t over the per-repeat values (a run-level rate).
    TOverRepeats,
    /// Clopper–Pearson (a proportion).
    ClopperPearson,
    /// Welch t over two sides' per-repeat values (a difference).
    Welch,
    /// Both sides' order-statistic intervals at 97.5% each (a difference of percentiles).
    OrderStatisticsDifference,
    /// Hodges–Lehmann shift of the whole distribution, with its rank-test interval.
    HodgesLehmann,
    /// A percentile bootstrap (kept where its coverage was measured).
    Bootstrap,
}

impl IntervalMethod {
    /// The method in words.
    pub fn describe(self) -> &'static str {
        match self {
            IntervalMethod::OrderStatistics => "order statistics (distribution-free)",
            IntervalMethod::TOverValues => "Student t over requests",
            IntervalMethod::TOverRepeats => "Student t over repeats",
            IntervalMethod::ClopperPearson => "Clopper–Pearson",
            IntervalMethod::Welch => "Welch t over repeats",
            IntervalMethod::OrderStatisticsDifference => {
                "order statistics of both sides (distribution-free)"
            }
            IntervalMethod::HodgesLehmann => "Hodges–Lehmann shift (rank test)",
            IntervalMethod::Bootstrap => "bootstrap",
        }
    }
}

/// A point estimate with its two-sided 95% interval. An end the data cannot give is `null`
/// (the 95th percentile of 18 requests has no upper end), and `needed` says from how many
/// values (or repeats, for a run-level rate) both ends exist.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Interval {
    /// The point estimate (the statistic of all the values).
    pub estimate: f64,
    /// Lower end; `null`: the data give none.
    pub low: Option<f64>,
    /// Upper end; `null`: the data give none.
    pub high: Option<f64>,
    /// Values (requests, gaps, repeats) it rests on.
    pub n: u32,
    /// Independent values they are worth (fewer where requests of one repeat, or gaps of one
    /// stream, hang together): the size the interval was computed for.
    pub n_effective: f64,
    /// How it was made.
    pub method: IntervalMethod,
    /// When an end is missing: how many values (of the same kind as `n`) would give both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed: Option<u64>,
}

impl Interval {
    /// A two-sided interval with both ends.
    pub fn both(estimate: f64, low: f64, high: f64, n: usize, method: IntervalMethod) -> Interval {
        Interval {
            estimate,
            low: Some(low),
            high: Some(high),
            n: n as u32,
            n_effective: n as f64,
            method,
            needed: None,
        }
    }

    /// Both ends, when the data give both.
    pub fn ends(&self) -> Option<(f64, f64)> {
        self.low.zip(self.high)
    }

    /// Whether two intervals share any value (a missing end reaches without bound).
    pub fn overlaps(&self, other: &Interval) -> bool {
        let lo = |i: &Interval| i.low.unwrap_or(f64::NEG_INFINITY);
        let hi = |i: &Interval| i.high.unwrap_or(f64::INFINITY);
        lo(self) <= hi(other) && lo(other) <= hi(self)
    }
}

/// Student-t 95% interval of the mean: `mean ± t(0.975, n−1)·s/√n`, `s` the sample standard
/// deviation. `None` for fewer than two values or a non-finite value.
pub fn mean_interval_95(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let (low, high) = crate::base::confidence::t_bounds(mean, var.sqrt(), n as f64, ALPHA_HALF)?;
    Some(Interval::both(
        mean,
        low,
        high,
        n,
        IntervalMethod::TOverRepeats,
    ))
}

/// One tail of a two-sided 95% interval.
const ALPHA_HALF: f64 = 0.025;

/// Welch 95% interval of `mean(a) − mean(b)` (unequal variances, Welch–Satterthwaite degrees of
/// freedom). `None` unless both sides have at least two finite values.
pub fn difference_interval_95(a: &[f64], b: &[f64]) -> Option<Interval> {
    let ia = mean_interval_95(a)?;
    let ib = mean_interval_95(b)?;
    let var = |xs: &[f64], m: f64| {
        xs.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
    };
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (var(a, ia.estimate) / na, var(b, ib.estimate) / nb);
    let se = (va + vb).sqrt();
    let df = if va + vb == 0.0 {
        na + nb - 2.0
    } else {
        (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0))
    };
    let diff = ia.estimate - ib.estimate;
    let half = crate::base::special::t_quantile(1.0 - ALPHA_HALF, df) * se;
    Some(Interval::both(
        diff,
        diff - half,
        diff + half,
        a.len() + b.len(),
        IntervalMethod::Welch,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(values: &[f64], q: f64) -> f64 {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let h = (v.len() - 1) as f64 * q / 100.0;
        let lo = h.floor() as usize;
        let hi = h.ceil() as usize;
        v[lo] + (h - lo as f64) * (v[hi] - v[lo])
    }

    #[test]
    fn matches_numpy_linear_on_known_values() {
        // numpy.percentile([1, 2, 3, 4], q) for q = 0, 25, 50, 95, 100
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&v, 25.0), Some(1.75));
        assert_eq!(percentile_sorted(&v, 50.0), Some(2.5));
        assert!((percentile_sorted(&v, 95.0).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(percentile_sorted(&v, 100.0), Some(4.0));
    }

    #[test]
    fn edge_cases() {
        assert_eq!(percentile_sorted(&[], 50.0), None);
        assert_eq!(percentile_sorted(&[7.0], 0.0), Some(7.0));
        assert_eq!(percentile_sorted(&[7.0], 99.0), Some(7.0));
        assert_eq!(percentile_sorted(&[7.0], 100.0), Some(7.0));
        assert_eq!(percentile_sorted(&[2.0, 2.0, 2.0], 95.0), Some(2.0));
        assert_eq!(percentile_sorted(&[1.0, 2.0], f64::NAN), None);
        let d = Distribution::from_ms(&mut []);
        assert_eq!(d.count, 0);
        assert_eq!(d.p95_ms, None);
        assert_eq!(d.mean_ms, None);
    }

    #[test]
    fn integer_paths_agree_with_float_path() {
        let raw: Vec<u32> = (0..5000u32).map(|i| (i * 7919) % 3001 + 10).collect();
        let mut as_ms: Vec<f64> = raw.iter().map(|&v| v as f64 / 1000.0).collect();
        let mut as_u64: Vec<u64> = raw.iter().map(|&v| v as u64).collect();
        let a = Distribution::from_ms(&mut as_ms);
        let b = Distribution::from_us(&mut as_u64);
        let c = Distribution::from_us_u32(&raw);
        assert_eq!(a.min_ms, c.min_ms);
        for s in crate::base::metric::Stat::ALL {
            let (x, y, z) = (a.stat(s).unwrap(), b.stat(s).unwrap(), c.stat(s).unwrap());
            assert!(
                (x - y).abs() < 1e-9 && (x - z).abs() < 1e-9,
                "{s:?}: {x} {y} {z}"
            );
        }
    }

    #[test]
    fn t_interval_known_value() {
        // mean 2, s = 1, n = 3 → half width 4.303 / sqrt(3)
        let i = mean_interval_95(&[1.0, 2.0, 3.0]).unwrap();
        assert!((i.estimate - 2.0).abs() < 1e-12);
        assert!((i.high.unwrap() - 2.0 - 4.302_652_7 / 3f64.sqrt()).abs() < 1e-6);
        assert!(mean_interval_95(&[1.0]).is_none());
        let d = difference_interval_95(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(d.low.unwrap() < 0.0 && d.high.unwrap() > 0.0);
    }

    proptest::proptest! {
        #[test]
        fn percentile_matches_naive_oracle(
            values in proptest::collection::vec(0u32..2_000_000, 1..300),
            q in 0.0f64..=100.0,
        ) {
            let f: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let mut sorted = f.clone();
            sorted.sort_by(f64::total_cmp);
            let got = percentile_sorted(&sorted, q).unwrap();
            let want = naive(&f, q);
            proptest::prop_assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0));
        }

        #[test]
        fn rank_u32_is_the_sorted_value(
            a in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..400),
            b in proptest::collection::vec(0u32..70_000, 0..400),
            k in 0usize..900,
        ) {
            let mut all: Vec<u32> = a.iter().chain(&b).copied().collect();
            all.sort_unstable();
            proptest::prop_assert_eq!(rank_u32(&[&a, &b], k), all.get(k).copied());
        }

        #[test]
        fn counting_and_sorting_agree(values in proptest::collection::vec(0u32..50_000, 1..3000)) {
            let mut as_u64: Vec<u64> = values.iter().map(|&v| v as u64).collect();
            let a = Distribution::from_us(&mut as_u64);
            let b = Distribution::from_us_u32(&values);
            proptest::prop_assert_eq!(a, b);
        }
    }
}
