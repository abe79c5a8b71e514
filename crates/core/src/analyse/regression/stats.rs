//! The change of one statistic between two collections, with an interval whose coverage holds
//! at the sizes it is printed for, the change of each whole distribution, and the labels.
//!
//! - **A statistic's change** (a percentile, a failure rate): each side's own interval of it
//!   ([`crate::analyse::evidence`]) at 97.5%, so that both hold together with 95%; the
//!   difference lies between the after side's low end minus the before side's high end and the
//!   other way round (Bonferroni). Distribution-free, and so wide where a side has few values: a
//!   p95 with fewer than 86 requests a side has no end at all.
//! - **A run-level rate's change** (throughput): Welch t over the per-repeat values.
//! - **The whole distribution's change**: the Hodges–Lehmann shift with its rank-test interval —
//!   of the per-request differences (Wilcoxon signed rank) where the two sides sent the same
//!   request sequence, else of all pairs (Mann–Whitney) — its variance widened by each side's
//!   design effect. It uses every request, so a change that moves every request is seen from a
//!   few of them. A percentile whose own interval cannot decide takes the shift's label only
//!   when the shapes agree (a Kolmogorov–Smirnov test of the before values against the after
//!   values moved back by the shift does not reject at 5%): then the distribution moved as a
//!   whole, and the percentile with it.
//! - **Detectable change**: the smallest true change the interval would tell from none four
//!   times in five, `(z₀.₉₇₅ + z₀.₈)/z₀.₉₇₅` × its half width. A change is called
//!   `inconclusive` only where that is larger than the threshold; an interval that straddles the
//!   threshold though the data could see a change of its size is `borderline`.

use crate::base::metric::{Direction, Metric};
use crate::base::special::normal_quantile;
use crate::base::stats::{Interval, IntervalMethod};

use super::types::{Label, Threshold};

/// One side's data: per repeat, per request, the values the request contributes.
pub(crate) type Units = Vec<Repeat>;
/// One repeat's requests, each with its values.
pub(crate) type Repeat = Vec<Vec<f64>>;

/// Most requests a shift is computed from on each side (evenly thinned beyond: the interval
/// is then far narrower than any threshold anyway).
const SHIFT_SAMPLE: usize = 1500;

/// The miss rate of each side's interval in a two-sided 95% difference (Bonferroni).
pub(crate) const SIDE_TAIL: f64 = 0.0125;

/// The Bonferroni difference of two sides' intervals (`[low, high]` each at 97.5%), around
/// the estimate `after − before`.
pub(crate) fn difference(
    estimate: f64,
    before: [Option<f64>; 2],
    after: [Option<f64>; 2],
    n: usize,
) -> Interval {
    let sub = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a - b);
    Interval {
        estimate,
        low: sub(after[0], before[1]),
        high: sub(after[1], before[0]),
        n: n.min(u32::MAX as usize) as u32,
        n_effective: n as f64,
        method: IntervalMethod::OrderStatisticsDifference,
        needed: None,
    }
}

/// The smallest true change the interval tells from none with 80% power; `None` when an end
/// is missing (no change is detectable).
pub(crate) fn detectable(iv: &Interval) -> Option<f64> {
    let (lo, hi) = iv.ends()?;
    let z = normal_quantile(0.975);
    Some((z + normal_quantile(0.8)) / z * (hi - lo) / 2.0)
}

/// The label of a difference interval of `m` whose before value is `before`: a change counts
/// when it is beyond both the relative and the absolute threshold (the larger applies); the
/// label is decided by where the whole interval lies, in the metric's own direction.
pub(crate) fn label(m: Metric, before: f64, iv: &Interval, th: Threshold) -> Label {
    let tol = tolerance(before, th);
    let (low, high) = (
        iv.low.unwrap_or(f64::NEG_INFINITY),
        iv.high.unwrap_or(f64::INFINITY),
    );
    let (worse_low, worse_high) = match m.direction() {
        Direction::LowerIsBetter => (low, high),
        Direction::HigherIsBetter => (-high, -low),
    };
    if worse_low > tol {
        Label::Regression
    } else if worse_high < -tol {
        Label::Improvement
    } else if worse_low >= -tol && worse_high <= tol {
        Label::NoChange
    } else if detectable(iv).is_none_or(|d| d > tol) {
        Label::Inconclusive
    } else {
        Label::Borderline
    }
}

/// The threshold of `m` around a before value.
pub(crate) fn tolerance(before: f64, th: Threshold) -> f64 {
    th.absolute.max(th.relative * before.abs())
}

/// A whole distribution's change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shift {
    /// The Hodges–Lehmann shift `after − before` with its rank-test interval.
    pub(crate) interval: Interval,
    /// The Kolmogorov–Smirnov p-value of the before values against the after values moved back
    /// by the shift: below 0.05 the shapes differ, and the shift does not speak for a tail.
    pub(crate) shape_p: f64,
}

/// The shift of one per-request quantity (one value per request) from `before` to `after`;
/// `paired`: the same request sequence on both sides. `None` below 8 requests a side.
pub(crate) fn shift(before: &Units, after: &Units, paired: bool) -> Option<Shift> {
    let flat = |u: &Units| -> Vec<f64> {
        u.iter()
            .flatten()
            .filter_map(|r| r.first().copied())
            .collect()
    };
    let (b, a) = (flat(before), flat(after));
    if b.len() < 8 || a.len() < 8 || !b.iter().chain(&a).all(|v| v.is_finite()) {
        return None;
    }
    let deff = effect(before).max(effect(after));
    let interval = if paired {
        paired_shift(before, after, deff)?
    } else {
        unpaired_shift(&b, &a, deff)
    };
    let moved: Vec<f64> = a.iter().map(|v| v - interval.estimate).collect();
    let shape_p = ks_p(&b, &moved, deff);
    Some(Shift { interval, shape_p })
}

/// The design effect of a side's per-request values, clustered by repeat.
fn effect(u: &Units) -> f64 {
    let clusters: Vec<Vec<f64>> = u
        .iter()
        .map(|r| r.iter().filter_map(|v| v.first().copied()).collect())
        .collect();
    let refs: Vec<&[f64]> = clusters.iter().map(Vec::as_slice).collect();
    crate::base::confidence::dependence(&refs).design_effect
}

/// Every `step`-th value so that at most `most` remain.
fn thinned(v: &[f64], most: usize) -> Vec<f64> {
    v.iter()
        .step_by(v.len().div_ceil(most).max(1))
        .copied()
        .collect()
}

/// Mann–Whitney: the median of all differences `a − b`, and the order statistics of them that
/// the rank statistic's normal approximation (variance × `deff`) puts at 2.5% each side.
fn unpaired_shift(b: &[f64], a: &[f64], deff: f64) -> Interval {
    let (b, a) = (thinned(b, SHIFT_SAMPLE), thinned(a, SHIFT_SAMPLE));
    let (n, m) = (b.len() as f64, a.len() as f64);
    let mut d: Vec<f64> = Vec::with_capacity(b.len() * a.len());
    for x in &a {
        for y in &b {
            d.push(x - y);
        }
    }
    crate::base::sort::sort_f64(&mut d);
    let sd = (n * m * (n + m + 1.0) / 12.0 * deff).sqrt();
    rank_interval(&d, sd, b.len() + a.len(), deff)
}

/// Wilcoxon signed rank: the median of the Walsh averages of the per-request differences, and
/// the order statistics of them that the statistic's normal approximation (its variance times
/// the larger design effect: of each side's values, or of the differences by pair of repeats)
/// puts at 2.5% each side. `None` below 8 pairs.
fn paired_shift(before: &Units, after: &Units, deff: f64) -> Option<Interval> {
    let clusters: Vec<Vec<f64>> = before
        .iter()
        .zip(after)
        .map(|(rb, ra)| {
            rb.iter()
                .zip(ra)
                .filter_map(|(b, a)| Some(a.first()? - b.first()?))
                .collect()
        })
        .collect();
    let d: Vec<f64> = clusters.iter().flatten().copied().collect();
    if d.len() < 8 {
        return None;
    }
    // Differences of one pair of repeats hang together when the server drifted between runs
    // (one repeat's requests all slower): counted down by that, so a run-to-run drift is not
    // read as the change.
    let refs: Vec<&[f64]> = clusters.iter().map(Vec::as_slice).collect();
    let deff = deff.max(crate::base::confidence::dependence(&refs).design_effect);
    let d = thinned(&d, SHIFT_SAMPLE);
    let mut w = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for i in 0..d.len() {
        for j in i..d.len() {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    crate::base::sort::sort_f64(&mut w);
    let n = d.len() as f64;
    let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 * deff).sqrt();
    Some(rank_interval(&w, sd, d.len(), deff))
}

/// The median of `sorted` and its `C`-th smallest and largest, `C = M/2 − z·sd` (rounded
/// down), or no end where `C` < 1.
fn rank_interval(sorted: &[f64], sd: f64, n: usize, deff: f64) -> Interval {
    let m = sorted.len();
    let estimate = crate::base::stats::percentile_sorted(sorted, 50.0).unwrap_or(f64::NAN);
    let c = (m as f64 / 2.0 - normal_quantile(0.975) * sd).floor();
    let (low, high) = if c >= 1.0 {
        let c = c as usize;
        (Some(sorted[c - 1]), Some(sorted[m - c]))
    } else {
        (None, None)
    };
    Interval {
        estimate,
        low,
        high,
        n: n as u32,
        n_effective: n as f64 / deff,
        method: IntervalMethod::HodgesLehmann,
        needed: None,
    }
}

/// The two-sample Kolmogorov–Smirnov test's p-value (asymptotic, on the effective sizes).
fn ks_p(b: &[f64], a: &[f64], deff: f64) -> f64 {
    let (mut b, mut a) = (b.to_vec(), a.to_vec());
    crate::base::sort::sort_f64(&mut b);
    crate::base::sort::sort_f64(&mut a);
    let (n, m) = (b.len(), a.len());
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < n && j < m {
        let x = b[i].min(a[j]);
        while i < n && b[i] <= x {
            i += 1;
        }
        while j < m && a[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / n as f64 - j as f64 / m as f64).abs());
    }
    let ne = (n * m) as f64 / (n + m) as f64 / deff.max(1.0);
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    kolmogorov_sf(lambda)
}

/// P(K > λ) for the Kolmogorov distribution.
fn kolmogorov_sf(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0;
    }
    let mut s = 0.0;
    for k in 1..=100 {
        let k = f64::from(k);
        let term = 2.0 * (-1f64).powf(k - 1.0) * (-2.0 * k * k * lambda * lambda).exp();
        s += term;
        if term.abs() < 1e-12 {
            break;
        }
    }
    s.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    fn side(offset: f64, n: usize, seed: u64) -> Units {
        let mut rng = Rng::new(seed);
        (0..3)
            .map(|_| {
                (0..n)
                    .map(|_| vec![offset + rng.range(0, 1000) as f64 / 100.0])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_shift_of_every_request_is_found_from_six_requests_a_repeat() {
        let (b, a) = (side(90.0, 6, 1), side(130.0, 6, 2));
        let s = shift(&b, &a, false).unwrap();
        let (lo, hi) = s.interval.ends().unwrap();
        assert!(lo > 35.0 && hi < 45.0, "{s:?}");
        assert!(s.shape_p > 0.05, "{s:?}");
        // Paired: the same requests, each 40 ms slower.
        let a: Units = b
            .iter()
            .map(|r| r.iter().map(|v| vec![v[0] + 40.0]).collect())
            .collect();
        let s = shift(&b, &a, true).unwrap();
        let (lo, hi) = s.interval.ends().unwrap();
        assert!(
            (lo - 40.0).abs() < 1e-9 && (hi - 40.0).abs() < 1e-9,
            "{s:?}"
        );
    }

    #[test]
    fn no_shift_is_bracketed_around_zero() {
        let s = shift(&side(100.0, 30, 3), &side(100.0, 30, 4), false).unwrap();
        let (lo, hi) = s.interval.ends().unwrap();
        assert!(lo < 0.0 && hi > 0.0, "{s:?}");
    }

    #[test]
    fn a_changed_shape_is_not_a_shift() {
        let b = side(100.0, 40, 5);
        // The same median, the spread ten times wider.
        let a: Units = b
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| vec![105.0 + (v[0] - 105.0) * 10.0])
                    .collect()
            })
            .collect();
        let s = shift(&b, &a, false).unwrap();
        assert!(s.shape_p < 0.05, "{s:?}");
    }

    #[test]
    fn labels_say_inconclusive_only_when_the_data_cannot_see_the_threshold() {
        let th = Threshold {
            relative: 0.0,
            absolute: 2.0,
        };
        let iv =
            |lo: f64, hi: f64| Interval::both((lo + hi) / 2.0, lo, hi, 100, IntervalMethod::Welch);
        let m = Metric::TTFT_P95;
        assert_eq!(label(m, 100.0, &iv(3.0, 5.0), th), Label::Regression);
        assert_eq!(label(m, 100.0, &iv(-1.0, 1.0), th), Label::NoChange);
        assert_eq!(label(m, 100.0, &iv(-5.0, -3.0), th), Label::Improvement);
        // Narrow enough to see a change of 2, straddling it: borderline.
        assert_eq!(label(m, 100.0, &iv(1.0, 3.0), th), Label::Borderline);
        // Too wide to see a change of 2: inconclusive.
        assert_eq!(label(m, 100.0, &iv(-10.0, 10.0), th), Label::Inconclusive);
        let open = Interval {
            high: None,
            ..iv(-1.0, 1.0)
        };
        assert_eq!(label(m, 100.0, &open, th), Label::Inconclusive);
        // Higher is better: the same interval is an improvement of throughput.
        assert_eq!(
            label(Metric::THROUGHPUT, 100.0, &iv(3.0, 5.0), th),
            Label::Improvement
        );
    }
}
