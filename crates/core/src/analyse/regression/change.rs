//! The change of one statistic of one configuration between two measurements of it (before
//! and after a change; or the float baseline and the quantized candidate), with its 95%
//! interval and how it was made: each side's own interval of a per-request statistic at 97.5%
//! (Bonferroni, distribution-free), or Welch t over per-repeat values for a run-level rate.

use crate::analyse::summary::Summary;
use crate::base::metric::{Metric, Quantity};
use crate::base::stats::{difference_interval_95, Interval};
use crate::schema::Run;

use super::data::per_request;
use super::stats::SIDE_TAIL;

/// One side: the run and its per-repeat summaries.
#[derive(Clone, Copy)]
pub(crate) struct Measured<'a> {
    /// The run.
    pub(crate) run: &'a Run,
    /// Its summaries, one per repeat.
    pub(crate) per_repeat: &'a [Summary],
}

/// The difference's interval, the ratio's (after ÷ before) where it has one, and how they were
/// made or why there is none.
pub(crate) type Change = (Option<Interval>, Option<[f64; 2]>, String);

/// The change of `m` from `b` (value `before`) to `a` (value `after`).
pub(crate) fn change_of(
    m: Metric,
    b: Measured<'_>,
    a: Measured<'_>,
    before: f64,
    after: f64,
) -> Change {
    if per_request(m) {
        own_change(m, b, a, before, after)
    } else {
        per_repeat_change(m, b, a, before)
    }
}

/// A per-request statistic's change: each side's own 97.5% interval (Bonferroni).
fn own_change(m: Metric, b: Measured<'_>, a: Measured<'_>, before: f64, after: f64) -> Change {
    use crate::analyse::evidence::{basis, bounds, needed_for_both, Basis};
    let (bb, ba) = (basis(b.run, b.per_repeat, m), basis(a.run, a.per_repeat, m));
    if let (Basis::Observed(why), _) | (_, Basis::Observed(why)) = (&bb, &ba) {
        return (None, None, format!("no interval: {why}"));
    }
    let (sb, sa) = (bounds(&bb, m, SIDE_TAIL), bounds(&ba, m, SIDE_TAIL));
    let n = |s: &Measured<'_>| {
        s.run
            .repeats
            .iter()
            .map(|r| r.requests.len())
            .sum::<usize>()
    };
    let mut iv = super::stats::difference(after - before, sb, sa, n(&b) + n(&a));
    let mut method = "each side's own 97.5% interval (distribution-free), together 95%".to_string();
    if iv.ends().is_none() {
        let needed = needed_for_both(&bb, m, SIDE_TAIL)
            .max(needed_for_both(&ba, m, SIDE_TAIL))
            .filter(|&k| k > 0);
        iv.needed = needed;
        if let Some(k) = needed {
            method.push_str(&format!(
                "; an end needs about {k} {} a side",
                if matches!(m, Metric::Latency(Quantity::Itl, _)) {
                    "gaps"
                } else {
                    "requests"
                }
            ));
        }
    }
    let ratio = match (sb, sa) {
        ([Some(bl), Some(bh)], [Some(al), Some(ah)]) if bl > 0.0 => Some([al / bh, ah / bl]),
        _ => None,
    };
    (Some(iv), ratio, method)
}

/// A run-level metric: one value per repeat, a Welch interval of the difference of the means
/// (3 repeats or more a side); the ratio's bounds are the difference's over the before value.
fn per_repeat_change(m: Metric, b: Measured<'_>, a: Measured<'_>, before: f64) -> Change {
    let values = |c: &Measured<'_>| -> Vec<f64> {
        c.per_repeat.iter().filter_map(|s| s.metric(m)).collect()
    };
    let (vb, va) = (values(&b), values(&a));
    if vb.len() < 3 || va.len() < 3 {
        return (
            None,
            None,
            format!(
                "one value per repeat and {} repeats before, {} after: 3 a side are needed for an \
                 interval",
                vb.len(),
                va.len()
            ),
        );
    }
    let iv = difference_interval_95(&va, &vb);
    let ratio = iv
        .filter(|_| before != 0.0)
        .and_then(|iv| iv.ends())
        .map(|(lo, hi)| [1.0 + lo / before, 1.0 + hi / before]);
    (
        iv,
        ratio,
        format!(
            "Welch t over per-repeat values ({} before, {} after)",
            vb.len(),
            va.len()
        ),
    )
}
