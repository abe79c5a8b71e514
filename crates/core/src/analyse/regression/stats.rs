//! The change of one statistic between two collections, with a 95% bootstrap interval, and its
//! label against a threshold.
//!
//! Each side's data are requests grouped by repeat; a request contributes its values (one TTFT,
//! all its gaps, a failure indicator, or none when it failed). A resample is two-stage: it draws
//! as many repeats as the side has, with replacement (so that one run's difference from another —
//! a warm cache, a noisy neighbour — counts as the variation it is), then from each drawn repeat
//! as many requests as it holds, with replacement: each side on its own (unpaired), or the same
//! repeat and request indices on both sides when they sent the same request sequence (paired,
//! which cancels the workload's own variance). A request's values stay together, so the gaps of
//! one stream are never treated as independent. A tail percentile needs values beyond it: p95
//! needs 40 values a side, p99 200 (two values past the percentile), else there is no interval. The interval of `after − before` (and of
//! `after / before`) is the 2.5th–97.5th percentile of the resampled differences, with a fixed
//! seed: the same files give the same interval in the CLI and the page.

use crate::analyse::bootstrap::{compute, Statistic, DRAWS, MIN_VALUES};
use crate::base::metric::{Direction, Metric};
use crate::base::rng::Rng;
use crate::base::stats::{percentile_sorted, Interval};

use super::types::{Label, Threshold};

/// One side's data: per repeat, per request, the values the request contributes.
pub(crate) type Units = Vec<Repeat>;
/// One repeat's requests, each with its values.
pub(crate) type Repeat = Vec<Vec<f64>>;

/// Fewest resamples of a difference (its tails need more than one statistic's).
const MIN_RESAMPLES: usize = 200;
/// Most resamples.
const MAX_RESAMPLES: usize = 1000;
const SEED: u64 = 0xc0_3a4e;

/// The difference and ratio intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    /// `after − before`: the point from all the data, the bounds from the resamples.
    pub(crate) difference: Interval,
    /// `after / before` bounds (`None` when a resampled before value is 0).
    pub(crate) ratio: Option<[f64; 2]>,
}

fn values(side: &Units) -> usize {
    side.iter().flatten().map(Vec::len).sum()
}

fn requests_with_values(side: &Units) -> usize {
    side.iter().flatten().filter(|u| !u.is_empty()).count()
}

/// The statistic of every value of `side`.
fn whole(side: &Units, stat: Statistic) -> Option<f64> {
    let mut all: Vec<f64> = side.iter().flatten().flatten().copied().collect();
    compute(stat, &mut all)
}

/// The change of `stat` from `before` to `after`; `paired` resamples the same request indices on
/// both sides (the sides must then have the same shape). `None` when a side has fewer than
/// [`MIN_VALUES`] requests with values, or a value is not finite.
pub(crate) fn change(
    before: &Units,
    after: &Units,
    stat: Statistic,
    paired: bool,
) -> Option<Change> {
    let finite = |s: &Units| s.iter().flatten().flatten().all(|v| v.is_finite());
    let enough = |s: &Units| requests_with_values(s) >= MIN_VALUES && values(s) >= min_values(stat);
    if !enough(before) || !enough(after) || !finite(before) || !finite(after) {
        return None;
    }
    let (b0, a0) = (whole(before, stat)?, whole(after, stat)?);
    let resamples =
        (DRAWS / (values(before) + values(after)).max(1)).clamp(MIN_RESAMPLES, MAX_RESAMPLES);
    let mut rng = Rng::new(SEED ^ ((values(before) as u64) << 20) ^ values(after) as u64);
    let (mut diffs, mut ratios) = (Vec::with_capacity(resamples), Vec::new());
    let (mut bb, mut ab) = (Vec::new(), Vec::new());
    for _ in 0..resamples {
        bb.clear();
        ab.clear();
        if paired {
            draw_paired(before, after, &mut rng, &mut bb, &mut ab);
        } else {
            draw(before, &mut rng, &mut bb);
            draw(after, &mut rng, &mut ab);
        }
        let (Some(b), Some(a)) = (compute(stat, &mut bb), compute(stat, &mut ab)) else {
            continue;
        };
        diffs.push(a - b);
        ratios.push(if b == 0.0 { f64::NAN } else { a / b });
    }
    diffs.sort_unstable_by(f64::total_cmp);
    let ratio = if ratios.iter().any(|r| r.is_nan()) {
        None
    } else {
        ratios.sort_unstable_by(f64::total_cmp);
        Some([
            percentile_sorted(&ratios, 2.5)?,
            percentile_sorted(&ratios, 97.5)?,
        ])
    };
    Some(Change {
        difference: Interval::both(
            a0 - b0,
            percentile_sorted(&diffs, 2.5)?,
            percentile_sorted(&diffs, 97.5)?,
            requests_with_values(before) + requests_with_values(after),
            crate::base::stats::IntervalMethod::Bootstrap,
        ),
        ratio,
    })
}

/// Fewest values a percentile's interval rests on: two values beyond it.
pub(crate) fn min_values(stat: Statistic) -> usize {
    match stat {
        Statistic::Mean => MIN_VALUES,
        Statistic::Percentile(q) => {
            let beyond = (100.0 - q.clamp(0.0, 100.0)).min(q.clamp(0.0, 100.0)) / 100.0;
            if beyond <= 0.0 {
                usize::MAX
            } else {
                ((2.0 / beyond).ceil() as usize).max(MIN_VALUES)
            }
        }
    }
}

/// One two-stage resample of `side` into `out`: as many repeats as it has, then from each drawn
/// repeat as many requests as it holds.
fn draw(side: &Units, rng: &mut Rng, out: &mut Vec<f64>) {
    let repeats: Vec<&Repeat> = side.iter().filter(|r| !r.is_empty()).collect();
    for _ in 0..repeats.len() {
        let repeat = repeats[rng.below(repeats.len() as u64) as usize];
        for _ in 0..repeat.len() {
            out.extend_from_slice(&repeat[rng.below(repeat.len() as u64) as usize]);
        }
    }
}

/// One paired two-stage resample: the same repeat and request indices on both sides.
fn draw_paired(before: &Units, after: &Units, rng: &mut Rng, b: &mut Vec<f64>, a: &mut Vec<f64>) {
    let pairs: Vec<(&Repeat, &Repeat)> = before
        .iter()
        .zip(after)
        .filter(|(r, _)| !r.is_empty())
        .collect();
    for _ in 0..pairs.len() {
        let (rb, ra) = pairs[rng.below(pairs.len() as u64) as usize];
        for _ in 0..rb.len() {
            let i = rng.below(rb.len() as u64) as usize;
            b.extend_from_slice(&rb[i]);
            a.extend_from_slice(ra.get(i).map_or(&[][..], Vec::as_slice));
        }
    }
}

/// The label of a difference interval of `m` whose before value is `before`: a change counts
/// when it is beyond both the relative and the absolute threshold, so the tolerance is the
/// larger of the two; the label is decided by where the whole interval lies, in the metric's
/// own direction.
pub(crate) fn label(m: Metric, before: f64, iv: &Interval, th: Threshold) -> Label {
    let tol = th.absolute.max(th.relative * before.abs());
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
    } else {
        Label::Inconclusive
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::metric::Metric;

    fn side(offset: f64, seed: u64) -> Units {
        let mut rng = Rng::new(seed);
        (0..2)
            .map(|_| {
                (0..40)
                    .map(|_| vec![offset + rng.range(0, 1000) as f64 / 100.0])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_shift_is_found_in_its_direction_and_no_shift_is_no_change() {
        let th = Threshold {
            relative: 0.05,
            absolute: 2.0,
        };
        let stat = Statistic::Percentile(50.0);
        let same = change(&side(100.0, 1), &side(100.0, 2), stat, false).unwrap();
        assert_eq!(
            label(Metric::TTFT_P95, 105.0, &same.difference, th),
            Label::NoChange
        );
        let worse = change(&side(100.0, 1), &side(120.0, 2), stat, false).unwrap();
        assert!(worse.difference.low.unwrap() > 15.0, "{worse:?}");
        assert_eq!(
            label(Metric::TTFT_P95, 105.0, &worse.difference, th),
            Label::Regression
        );
        // Higher is better for throughput: the same shift is an improvement.
        assert_eq!(
            label(Metric::THROUGHPUT, 105.0, &worse.difference, th),
            Label::Improvement
        );
        let [lo, hi] = worse.ratio.unwrap();
        assert!(lo > 1.1 && hi < 1.3, "{lo} {hi}");
    }

    #[test]
    fn pairing_cancels_the_workloads_own_variance() {
        // Each request's value is mostly its own size (shared by both sides), plus noise.
        let mut rng = Rng::new(9);
        let sizes: Vec<f64> = (0..60)
            .map(|_| rng.range(0, 100_000) as f64 / 100.0)
            .collect();
        let make = |shift: f64, seed: u64| -> Units {
            let mut rng = Rng::new(seed);
            vec![sizes
                .iter()
                .map(|s| vec![s + shift + rng.range(0, 100) as f64 / 100.0])
                .collect()]
        };
        let (b, a) = (make(0.0, 1), make(5.0, 2));
        let width = |c: Change| c.difference.high.unwrap() - c.difference.low.unwrap();
        let p = change(&b, &a, Statistic::Mean, true).unwrap();
        let u = change(&b, &a, Statistic::Mean, false).unwrap();
        assert!(width(p) * 20.0 < width(u), "{p:?} vs {u:?}");
        assert!(
            p.difference.low.unwrap() > 4.0 && p.difference.high.unwrap() < 6.0,
            "{p:?}"
        );
    }

    #[test]
    fn too_few_requests_give_no_interval() {
        let few: Units = vec![(0..7).map(|i| vec![f64::from(i)]).collect()];
        assert!(change(&few, &side(0.0, 1), Statistic::Mean, false).is_none());
        let failed: Units = vec![(0..20).map(|_| Vec::new()).collect()];
        assert!(change(&failed, &side(0.0, 1), Statistic::Mean, false).is_none());
    }
}
