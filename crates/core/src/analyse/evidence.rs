//! What a run's data say of one metric, and how sure: the two-sided 95% interval printed beside
//! a figure, and the one-sided 95% bound that decides an SLO limit — or "not enough data", with
//! how many requests would decide it. The statistics are [`crate::base::confidence`]'s; this
//! module chooses, per metric, what they rest on:
//!
//! - a latency percentile or mean: the per-request values, clustered by repeat (TTFT, TPOT,
//!   end-to-end, per-request queue wait), or the gaps, clustered by stream (ITL);
//! - the failure rate and the goodput ratio: a proportion of the sent requests;
//! - throughput and goodput rates: one value per repeat;
//! - a maximum, a peak memory or queue depth, a queue wait estimated from a server's histogram,
//!   a tool's reported summary: the figure as observed, decided as the run saw it and said so.

use crate::analyse::summary::Summary;
use crate::base::confidence::{
    dependence, needed_for_lower, needed_for_proportion_above, needed_for_proportion_below,
    needed_for_upper, proportion_bounds, quantile_ranks, repeats_differ, scale_rank, smallest_n,
    t_bounds, within_repeats, Dependence, ALPHA, MIN_VALUES_MEAN, SIDE,
};
use crate::base::metric::{Direction, Metric, Quantity, Scalar, Stat};
use crate::base::stats::{rank_u32, Interval, IntervalMethod};
use crate::schema::{RequestColumns, Run};

/// What one metric of one run rests on.
pub(crate) enum Basis<'a> {
    /// Per-request values, sorted, and how strongly those of one repeat hang together; when
    /// the repeats differ significantly, each repeat's values (sorted), to widen by how much.
    Values {
        sorted: Vec<f64>,
        dep: Dependence,
        repeats: Option<Vec<Vec<f64>>>,
    },
    /// Inter-token gaps (µs) of the successful streams, and how strongly those of one stream
    /// hang together; `per_request` gaps a stream on average.
    Gaps {
        parts: Vec<&'a [u32]>,
        n: usize,
        dep: Dependence,
        per_request: f64,
    },
    /// `x` of `n` requests, and how strongly those of one repeat hang together.
    Proportion { x: f64, n: f64, dep: Dependence },
    /// One value per repeat, and the requests a repeat sends.
    Repeats { values: Vec<f64>, per_repeat: f64 },
    /// A figure with no sampling bound, and why.
    Observed(&'static str),
}

/// Whether an SLO limit is met, with 95% confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SloOutcome {
    /// Met: the one-sided 95% bound on the limit's side is within it (or, for a figure with no
    /// sampling bound, the figure as observed).
    Pass,
    /// Missed: the one-sided 95% bound on the other side is past it (or as observed).
    Fail,
    /// The data cannot tell: the limit lies inside the interval, or the bound does not exist.
    NotEnoughData,
}

/// An SLO limit decided from a run's data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decided {
    pub(crate) outcome: SloOutcome,
    /// One-sided 95% bounds (lower, upper); `None` where the data give none.
    pub(crate) bounds: [Option<f64>; 2],
    /// Requests that would decide it, with the data's own spread (when not decided).
    pub(crate) needed_requests: Option<u64>,
    /// Where the bound comes from the repeats' spread and there are too few repeats to have
    /// one: the repeats it takes to have a bound at all (not a count that decides it).
    pub(crate) needed_repeats: Option<u32>,
    /// What the decision rests on, in words.
    pub(crate) basis: String,
}

/// What `m` rests on in `run` (whose per-repeat summaries are `per_repeat`).
pub(crate) fn basis<'a>(run: &'a Run, per_repeat: &[Summary], m: Metric) -> Basis<'a> {
    if run.repeats.is_empty() {
        return Basis::Observed("as the tool reported it: no per-request data");
    }
    match m {
        Metric::Latency(_, Stat::Max) => {
            Basis::Observed("a maximum is what the run saw: no sample bounds what it did not see")
        }
        Metric::Latency(Quantity::Itl, _) => gaps(run),
        Metric::Latency(q, _) => values(run, q),
        Metric::Scalar(Scalar::FailureRate) => proportion(run, |r, i| r.error[i].is_some()),
        Metric::Scalar(Scalar::GoodputRatio) => goodput(run, per_repeat),
        Metric::Scalar(Scalar::PeakMemoryMb | Scalar::QueueDepthMax) => {
            Basis::Observed("a peak is what the run saw: no sample bounds what it did not see")
        }
        Metric::Scalar(s) => {
            let values: Vec<f64> = per_repeat
                .iter()
                .filter_map(|r| r.metric(Metric::Scalar(s)))
                .collect();
            let sent: usize = run.repeats.iter().map(|r| r.requests.len()).sum();
            Basis::Repeats {
                per_repeat: sent as f64 / run.repeats.len() as f64,
                values,
            }
        }
    }
}

/// One per-request quantity of the successful requests, as the summaries define it, by repeat.
fn values(run: &Run, q: Quantity) -> Basis<'static> {
    let clusters: Vec<Vec<f64>> = run
        .repeats
        .iter()
        .map(|r| request_values(&r.requests, q))
        .collect();
    if clusters.iter().all(Vec::is_empty) {
        return Basis::Observed(match q {
            Quantity::QueueWait => {
                "no per-request queue wait: estimated from the server's histogram, or not measured"
            }
            _ => "no successful request",
        });
    }
    of_values(clusters)
}

/// Per-request values clustered by repeat, sorted, with their dependence.
pub(crate) fn of_values(clusters: Vec<Vec<f64>>) -> Basis<'static> {
    let refs: Vec<&[f64]> = clusters.iter().map(Vec::as_slice).collect();
    let (dep, differ) = within_repeats(&refs);
    let mut sorted: Vec<f64> = clusters.iter().flatten().copied().collect();
    crate::base::sort::sort_f64(&mut sorted);
    let repeats = differ.then(|| {
        clusters
            .into_iter()
            .filter(|c| !c.is_empty())
            .map(|mut c| {
                crate::base::sort::sort_f64(&mut c);
                c
            })
            .collect()
    });
    Basis::Values {
        sorted,
        dep,
        repeats,
    }
}

/// How far the repeats' own differences move statistic `m`, at `tail` (the repeats sorted).
fn spread(repeats: Option<&Vec<Vec<f64>>>, m: Metric, tail: f64) -> f64 {
    let Some(reps) = repeats else {
        return 0.0;
    };
    let per: Vec<f64> = reps
        .iter()
        .filter_map(|r| match quantile(stat_of(m)) {
            Some(q) => crate::base::stats::percentile_sorted(r, 100.0 * q),
            None => (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64),
        })
        .collect();
    repeats_differ(&per, tail).unwrap_or(0.0)
}

/// `[low, high]` each moved outwards by `h`.
fn widened([low, high]: [Option<f64>; 2], h: f64) -> [Option<f64>; 2] {
    [low.map(|l| l - h), high.map(|u| u + h)]
}

/// One latency quantity of every successful request, in ms (as the summaries define it).
pub(crate) fn request_values(r: &RequestColumns, q: Quantity) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..r.len() {
        if r.error[i].is_some() {
            continue;
        }
        let (Some(t), Some(e), Some(n)) = (r.ttft_us[i], r.e2e_us[i], r.output_tokens[i]) else {
            continue;
        };
        match q {
            Quantity::Ttft => out.push(t as f64 / 1000.0),
            Quantity::E2e => out.push(e as f64 / 1000.0),
            Quantity::Tpot => {
                if n > 1 {
                    out.push(e.saturating_sub(t) as f64 / f64::from(n - 1) / 1000.0);
                }
            }
            Quantity::Itl => out.extend(r.itl_us.get(i).iter().map(|&g| f64::from(g) / 1000.0)),
            Quantity::QueueWait => {
                let client = r
                    .intended_offset_us
                    .as_ref()
                    .map(|v| r.send_offset_us[i].saturating_sub(v[i]));
                let server = r.server_queue_us[i];
                if client.is_some() || server.is_some() {
                    let us = client.unwrap_or(0).saturating_add(server.unwrap_or(0));
                    out.push(us as f64 / 1000.0);
                }
            }
        }
    }
    out
}

/// Most streams the dependence of gaps is estimated from.
const GAP_STREAMS: usize = 2000;

fn gaps(run: &Run) -> Basis<'_> {
    let mut parts: Vec<&[u32]> = Vec::new();
    for rep in &run.repeats {
        let r = &rep.requests;
        for i in 0..r.len() {
            let ok = r.error[i].is_none()
                && r.ttft_us[i].is_some()
                && r.e2e_us[i].is_some()
                && r.output_tokens[i].is_some();
            if ok && !r.itl_us.get(i).is_empty() {
                parts.push(r.itl_us.get(i));
            }
        }
    }
    let n: usize = parts.iter().map(|p| p.len()).sum();
    if n == 0 {
        return Basis::Observed("no inter-token gaps");
    }
    // Streams evenly thinned for the dependence: the design effect of one stream's gaps is a
    // property of a stream, and 2,000 of them estimate it as well as a million do.
    let step = parts.len().div_ceil(GAP_STREAMS).max(1);
    let sample: Vec<Vec<f64>> = parts
        .iter()
        .step_by(step)
        .map(|p| p.iter().map(|&g| f64::from(g)).collect())
        .collect();
    let refs: Vec<&[f64]> = sample.iter().map(Vec::as_slice).collect();
    let mut dep = dependence(&refs);
    dep.values = n;
    Basis::Gaps {
        per_request: n as f64 / parts.len() as f64,
        parts,
        n,
        dep,
    }
}

/// A share of the sent requests, `hit` the ones counted, clustered by repeat.
fn proportion(run: &Run, hit: impl Fn(&RequestColumns, usize) -> bool) -> Basis<'static> {
    let clusters: Vec<Vec<f64>> = run
        .repeats
        .iter()
        .map(|rep| {
            let r = &rep.requests;
            (0..r.len())
                .map(|i| if hit(r, i) { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    indicators(clusters)
}

pub(crate) fn indicators(clusters: Vec<Vec<f64>>) -> Basis<'static> {
    let refs: Vec<&[f64]> = clusters.iter().map(Vec::as_slice).collect();
    let dep = dependence(&refs);
    let x: f64 = clusters.iter().flatten().sum();
    let n = clusters.iter().map(Vec::len).sum::<usize>() as f64;
    if n == 0.0 {
        return Basis::Observed("no request was sent");
    }
    Basis::Proportion { x, n, dep }
}

/// The goodput ratio's requests, from each repeat's own count (which requests met every
/// per-request SLO is the summary's: its ratio times its sent requests).
fn goodput(run: &Run, per_repeat: &[Summary]) -> Basis<'static> {
    let clusters: Vec<Vec<f64>> = per_repeat
        .iter()
        .map(|s| {
            let sent = s.requests_sent as usize;
            let good = (s.goodput_ratio.unwrap_or(0.0) * sent as f64).round() as usize;
            (0..sent)
                .map(|i| if i < good { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    if clusters.len() != run.repeats.len() {
        return Basis::Observed("no per-repeat goodput");
    }
    indicators(clusters)
}

/// The quantile a statistic is (`None` for the mean).
fn quantile(stat: Stat) -> Option<f64> {
    match stat {
        Stat::P50 => Some(0.5),
        Stat::P90 => Some(0.9),
        Stat::P95 => Some(0.95),
        Stat::P99 => Some(0.99),
        Stat::Mean | Stat::Max => None,
    }
}

fn stat_of(m: Metric) -> Stat {
    match m {
        Metric::Latency(_, s) => s,
        Metric::Scalar(_) => Stat::Mean,
    }
}

/// The value of rank `k` (1-based) of a basis of values.
fn at_rank(b: &Basis<'_>, k: usize) -> Option<f64> {
    match b {
        Basis::Values { sorted, .. } => sorted.get(k.checked_sub(1)?).copied(),
        Basis::Gaps { parts, .. } => rank_u32(parts, k.checked_sub(1)?).map(|g| f64::from(g) / 1e3),
        _ => None,
    }
}

/// Values held and their dependence, for a basis of values.
fn sized(b: &Basis<'_>) -> Option<(usize, Dependence)> {
    match b {
        Basis::Values { sorted, dep, .. } => Some((sorted.len(), *dep)),
        Basis::Gaps { n, dep, .. } => Some((*n, *dep)),
        _ => None,
    }
}

/// Order-statistic bounds of quantile `q`, each side missing with at most `tail`.
fn order_bounds(b: &Basis<'_>, q: f64, tail: f64) -> [Option<f64>; 2] {
    let Some((n, dep)) = sized(b) else {
        return [None, None];
    };
    let ne = dep.effective();
    let (l, u) = quantile_ranks(ne, q, tail, tail);
    [
        l.and_then(|l| at_rank(b, scale_rank(l, ne, n, false))),
        u.and_then(|u| at_rank(b, scale_rank(u, ne, n, true))),
    ]
}

/// Mean and standard deviation of a basis of values.
fn moments(b: &Basis<'_>) -> Option<(f64, f64)> {
    let (sum, sq, n) = match b {
        Basis::Values { sorted, .. } => sorted
            .iter()
            .fold((0.0, 0.0, 0usize), |a, v| (a.0 + v, a.1 + v * v, a.2 + 1)),
        Basis::Gaps { parts, .. } => {
            parts
                .iter()
                .flat_map(|p| p.iter())
                .fold((0.0, 0.0, 0usize), |a, &g| {
                    let v = f64::from(g) / 1e3;
                    (a.0 + v, a.1 + v * v, a.2 + 1)
                })
        }
        Basis::Repeats { values, .. } => values
            .iter()
            .fold((0.0, 0.0, 0usize), |a, v| (a.0 + v, a.1 + v * v, a.2 + 1)),
        _ => return None,
    };
    if n < 2 {
        return None;
    }
    let mean = sum / n as f64;
    let var = ((sq - n as f64 * mean * mean) / (n - 1) as f64).max(0.0);
    Some((mean, var.sqrt()))
}

/// t bounds of a mean of per-request values, when there are enough effective values.
fn mean_bounds(b: &Basis<'_>, tail: f64) -> [Option<f64>; 2] {
    let Some((_, dep)) = sized(b) else {
        return [None, None];
    };
    let ne = dep.effective();
    match moments(b).filter(|_| ne >= MIN_VALUES_MEAN) {
        Some((mean, sd)) => {
            t_bounds(mean, sd, ne, tail).map_or([None, None], |(l, h)| [Some(l), Some(h)])
        }
        None => [None, None],
    }
}

/// The bounds of `m` with `tail` on each side.
pub(crate) fn bounds(b: &Basis<'_>, m: Metric, tail: f64) -> [Option<f64>; 2] {
    match b {
        Basis::Values { repeats, .. } => {
            let own = match quantile(stat_of(m)) {
                Some(q) => order_bounds(b, q, tail),
                None => mean_bounds(b, tail),
            };
            widened(own, spread(repeats.as_ref(), m, tail))
        }
        Basis::Gaps { .. } => match quantile(stat_of(m)) {
            Some(q) => order_bounds(b, q, tail),
            None => mean_bounds(b, tail),
        },
        Basis::Proportion { x, n, dep } => {
            let d = dep.design_effect;
            let (l, h) = proportion_bounds(x / d, n / d, tail);
            [Some(l), Some(h)]
        }
        Basis::Repeats { values, .. } => match moments(b) {
            Some((mean, sd)) => t_bounds(mean, sd, values.len() as f64, tail)
                .map_or([None, None], |(l, h)| [Some(l.max(0.0)), Some(h)]),
            None => [None, None],
        },
        Basis::Observed(_) => [None, None],
    }
}

/// The two-sided 95% interval of `m` around `estimate`; `None` for a figure with no sampling
/// bound.
pub(crate) fn interval(b: &Basis<'_>, m: Metric, estimate: f64) -> Option<Interval> {
    let [low, high] = bounds(b, m, ALPHA / 2.0);
    let (n, ne, method) = match b {
        Basis::Values { sorted, dep, .. } => (sorted.len(), dep.effective(), values_method(m)),
        Basis::Gaps { n, dep, .. } => (*n, dep.effective(), values_method(m)),
        Basis::Proportion { n, dep, .. } => {
            (*n as usize, dep.effective(), IntervalMethod::ClopperPearson)
        }
        Basis::Repeats { values, .. } => (
            values.len(),
            values.len() as f64,
            IntervalMethod::TOverRepeats,
        ),
        Basis::Observed(_) => return None,
    };
    let needed = (low.is_none() || high.is_none())
        .then(|| needed_for_both(b, m, ALPHA / 2.0))
        .flatten();
    Some(Interval {
        estimate,
        low,
        high,
        n: n.min(u32::MAX as usize) as u32,
        n_effective: ne,
        method,
        needed,
    })
}

fn values_method(m: Metric) -> IntervalMethod {
    if quantile(stat_of(m)).is_some() {
        IntervalMethod::OrderStatistics
    } else {
        IntervalMethod::TOverValues
    }
}

/// How many values (of the basis' kind) give both ends of an interval that misses with at
/// most `tail` on each side.
pub(crate) fn needed_for_both(b: &Basis<'_>, m: Metric, tail: f64) -> Option<u64> {
    match b {
        Basis::Values { dep, .. } | Basis::Gaps { dep, .. } => {
            let ne = match quantile(stat_of(m)) {
                Some(q) => needed_for_upper(q, tail).max(needed_for_lower(q, tail)) as f64,
                None => MIN_VALUES_MEAN,
            };
            Some((ne * dep.design_effect).ceil() as u64)
        }
        Basis::Repeats { .. } => Some(2),
        _ => None,
    }
}

/// Decides the SLO `m` against `limit` at the point `estimate`.
pub(crate) fn decide(b: &Basis<'_>, m: Metric, estimate: f64, limit: f64) -> Decided {
    let dir = m.direction();
    let bounds = bounds(b, m, SIDE);
    let [low, high] = bounds;
    // The bound that shows the limit is met, and the one that shows it is missed.
    let (meets, misses) = match dir {
        Direction::LowerIsBetter => (high.map(|h| h <= limit), low.map(|l| l > limit)),
        Direction::HigherIsBetter => (low.map(|l| l >= limit), high.map(|h| h < limit)),
    };
    if let Some(d) = by_count(b, m, estimate, limit, bounds) {
        return d;
    }
    if let Basis::Observed(why) = b {
        return Decided {
            outcome: if m.meets(estimate, limit) {
                SloOutcome::Pass
            } else {
                SloOutcome::Fail
            },
            bounds,
            needed_requests: None,
            needed_repeats: None,
            basis: format!("as observed ({why})"),
        };
    }
    let outcome = if meets == Some(true) {
        SloOutcome::Pass
    } else if misses == Some(true) {
        SloOutcome::Fail
    } else {
        SloOutcome::NotEnoughData
    };
    Decided {
        outcome,
        bounds,
        needed_requests: (outcome == SloOutcome::NotEnoughData)
            .then(|| needed_requests(b, m, estimate, limit))
            .flatten(),
        needed_repeats: match b {
            Basis::Repeats { values, .. }
                if outcome == SloOutcome::NotEnoughData && values.len() < 2 =>
            {
                Some(2)
            }
            _ => None,
        },
        basis: basis_words(b, m),
    }
}

/// A proportion against a limit of 0 (no failure allowed) or 1 (every request good): no
/// number of requests bounds a rate at exactly 0, so the limit is read as a rule about the run
/// — not one request failed — and the bound it leaves on the rate is said beside it.
fn by_count(
    b: &Basis<'_>,
    m: Metric,
    estimate: f64,
    limit: f64,
    bounds: [Option<f64>; 2],
) -> Option<Decided> {
    let Basis::Proportion { n, .. } = b else {
        return None;
    };
    let strict = match m.direction() {
        Direction::LowerIsBetter => limit <= 0.0,
        Direction::HigherIsBetter => limit >= 1.0,
    };
    if !strict {
        return None;
    }
    let pass = m.meets(estimate, limit);
    let [low, high] = bounds;
    let left = match m.direction() {
        Direction::LowerIsBetter => high.map(|h| format!("the rate may still be up to {}", pct(h))),
        Direction::HigherIsBetter => low.map(|l| format!("the share may be as low as {}", pct(l))),
    };
    Some(Decided {
        outcome: if pass {
            SloOutcome::Pass
        } else {
            SloOutcome::Fail
        },
        bounds,
        needed_requests: None,
        needed_repeats: None,
        basis: format!(
            "a limit of {limit} allows no exception: decided on the {} requests as run{}",
            *n as u64,
            left.map(|l| format!(" ({l}, one-sided 95%)"))
                .unwrap_or_default()
        ),
    })
}

fn pct(x: f64) -> String {
    format!("{}%", crate::base::fmt::format_number(100.0 * x))
}

fn basis_words(b: &Basis<'_>, m: Metric) -> String {
    let dep = |n: usize, what: &str, dep: &Dependence| {
        if dep.design_effect > 1.0 {
            format!(
                "{n} {what}, worth {} independent ones (they hang together within {})",
                crate::base::fmt::format_number(dep.effective().floor()),
                if what == "gaps" {
                    "a stream"
                } else {
                    "a repeat"
                }
            )
        } else {
            format!("{n} {what}")
        }
    };
    let kind = if quantile(stat_of(m)).is_some() {
        "order statistics"
    } else {
        "Student t"
    };
    match b {
        Basis::Values {
            sorted,
            dep: d,
            repeats,
        } => format!(
            "one-sided 95% bound, {kind} of {}{}",
            dep(sorted.len(), "requests", d),
            if repeats.is_some() {
                ", widened by how much the repeats differ from one another"
            } else {
                ""
            }
        ),
        Basis::Gaps { n, dep: d, .. } => {
            format!("one-sided 95% bound, {kind} of {}", dep(*n, "gaps", d))
        }
        Basis::Proportion { n, dep: d, .. } => format!(
            "one-sided 95% bound, Clopper–Pearson over {}",
            dep(*n as usize, "requests", d)
        ),
        Basis::Repeats { values, .. } => format!(
            "one-sided 95% bound, Student t over {} repeats",
            values.len()
        ),
        Basis::Observed(why) => format!("as observed ({why})"),
    }
}

/// Requests that would decide the limit if the data kept their shape (their distribution, or
/// their share, or their spread across repeats); `None` when no number would (the estimate is
/// at the limit) or the basis has no sampling bound.
fn needed_requests(b: &Basis<'_>, m: Metric, estimate: f64, limit: f64) -> Option<u64> {
    let lower_better = m.direction() == Direction::LowerIsBetter;
    let effective = match b {
        Basis::Values { .. } | Basis::Gaps { .. } => match quantile(stat_of(m)) {
            Some(q) => needed_for_quantile(b, q, limit)?,
            None => {
                let (mean, sd) = moments(b)?;
                let gap = (mean - limit).abs();
                let t = 1.645 * sd / gap.max(f64::MIN_POSITIVE);
                (t * t).max(MIN_VALUES_MEAN).ceil().min(1e12) as u64
            }
        },
        Basis::Proportion { x, n, .. } => {
            let share = x / n;
            let met = m.meets(estimate, limit);
            match (lower_better, met) {
                (true, true) => needed_for_proportion_below(share, limit)?,
                (true, false) => needed_for_proportion_above(share, limit)?,
                (false, true) => needed_for_proportion_above(share, limit)?,
                (false, false) => needed_for_proportion_below(share, limit)?,
            }
        }
        Basis::Repeats { values, per_repeat } => {
            let (mean, sd) = moments(b)?;
            let gap = (mean - limit).abs();
            let k = smallest_n(|k| {
                k >= 2.0
                    && crate::base::special::t_quantile(1.0 - SIDE, k - 1.0) * sd / k.sqrt() < gap
            })?
            .max(values.len() as u64 + 1);
            return Some((k as f64 * per_repeat).ceil() as u64);
        }
        Basis::Observed(_) => return None,
    };
    let (per, deff) = match b {
        Basis::Gaps {
            per_request, dep, ..
        } => (*per_request, dep.design_effect),
        Basis::Values { dep, .. } | Basis::Proportion { dep, .. } => (1.0, dep.design_effect),
        _ => (1.0, 1.0),
    };
    Some((effective as f64 * deff / per.max(1.0)).ceil() as u64)
}

/// Effective values for the order statistics of quantile `q` to put the limit on one side,
/// if the values kept their distribution. With a share `s` of the values at or below the
/// limit, the quantile's upper bound falls to the limit once the upper rank is at most `n·s`
/// (possible when `s > q`), and its lower bound rises past it once the lower rank exceeds
/// `n·s` (possible when `s < q`); at `s = q` no number of values decides.
fn needed_for_quantile(b: &Basis<'_>, q: f64, limit: f64) -> Option<u64> {
    let (n, _) = sized(b)?;
    let below = match b {
        Basis::Values { sorted, .. } => sorted.partition_point(|&v| v <= limit),
        Basis::Gaps { parts, .. } => parts
            .iter()
            .map(|p| p.iter().filter(|&&g| f64::from(g) / 1e3 <= limit).count())
            .sum(),
        _ => return None,
    };
    let share = below as f64 / n as f64;
    if share > q {
        smallest_n(|ne| {
            let (_, u) = quantile_ranks(ne, q, SIDE, SIDE);
            u.is_some_and(|u| (u as f64) <= (ne * share).floor())
        })
    } else if share < q {
        smallest_n(|ne| {
            let (l, _) = quantile_ranks(ne, q, SIDE, SIDE);
            l.is_some_and(|l| (l as f64) > (ne * share).floor())
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
