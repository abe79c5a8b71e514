//! What a run's times show against what it states: requests in flight against its streams,
//! open-loop sends against its rate, its stated window against the span of its requests, and
//! times only a real stream over HTTP can produce.

use super::Stated;
use crate::base::blocks::{each_block, each_range};
use crate::base::fmt::format_number;
use crate::base::sort::sort_u64;
use crate::base::stats::rank_u32;
use crate::check::invariant::{Invariant, Violation};
use crate::schema::{RequestColumns, Run, RunSource};

/// A request sent as the previous one ended is no overlap: each end is taken this early.
const OVERLAP_SLACK_US: u64 = 1_000;
/// The fewest gaps between sends that say anything about a rate.
const MIN_RATE_GAPS: usize = 20;
/// Second-resolution stamps (RFC 3339 without a fraction) may each be up to 1 s off.
const WINDOW_SLACK_US: i64 = 2_000_000;
/// No HTTP round trip with a model step in it is faster than this.
const MIN_PLAUSIBLE_TTFT_US: f64 = 100.0;
/// A first token takes at least a tenth of a typical gap between tokens.
const MIN_TTFT_PER_GAP: f64 = 10.0;
/// A server's queue figure in whole milliseconds may exceed the client's TTFT by its rounding.
const QUEUE_SLACK_US: u64 = 1_000;

pub(crate) fn check(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    depth(run, stated, out);
    arrival(run, stated, out);
    window(run, stated, out);
    streamed(run, out);
    plausible(run, out);
    sent_once(run, out);
    queue_within_first_token(run, out);
    repeats_distinct(run, out);
}

/// A server's queue figure is its own statement; past the client's first token it is not true
/// (1 ms allowed for the server's rounding).
fn queue_within_first_token(run: &Run, out: &mut Vec<Violation>) {
    let mut over = 0usize;
    let mut first: Option<(usize, usize, u64, u64)> = None;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let r = &rep.requests;
        for (i, (q, t)) in r.server_queue_us.iter().zip(&r.ttft_us).enumerate() {
            if let (Some(q), Some(t), None) = (*q, *t, r.error.get(i).and_then(Option::as_ref)) {
                if q > t + QUEUE_SLACK_US {
                    over += 1;
                    first.get_or_insert((ri, i, q, t));
                }
            }
        }
    }
    if let Some((ri, i, q, t)) = first {
        out.push(Violation::new(
            Invariant::QueueWithinFirstToken,
            format!("$.repeats[{ri}].requests.server_queue_us[{i}]"),
            format!(
                "{over} successful request(s) waited longer in the server's queue than their \
                 time to first token (the first: {q} µs queued, first token at {t} µs): the \
                 server's queue figures are not true"
            ),
        ));
    }
}

/// Two repeats of one run that are one measurement ([`super::fingerprint::same_repeats`]): one
/// repeat counted twice (or requests of one copied into another), which narrows every interval
/// without measuring anything.
fn repeats_distinct(run: &Run, out: &mut Vec<Violation>) {
    let reps = &run.repeats;
    for (b, later) in reps.iter().enumerate() {
        if later.requests.len() < 2 {
            continue;
        }
        if let Some(a) = reps[..b]
            .iter()
            .position(|x| super::fingerprint::same_repeats(&later.requests, &x.requests))
        {
            out.push(Violation::new(
                Invariant::MeasuredOnce,
                format!("$.repeats[{b}].requests"),
                format!(
                    "repeat {} holds requests of repeat {} (every column equal, or two requests \
                     or more with the same gaps between tokens): a repeat copied, not measured \
                     again",
                    later.index, reps[a].index
                ),
            ));
            return;
        }
    }
}

fn sent_once(run: &Run, out: &mut Vec<Violation>) {
    let resent: usize = run
        .repeats
        .iter()
        .filter_map(|r| r.requests.resent.as_ref())
        .map(|c| c.iter().filter(|&&x| x).count())
        .sum();
    if resent > 0 {
        out.push(Violation::new(
            Invariant::SentOnce,
            "$.repeats[].requests.resent",
            format!(
                "{resent} measured request(s) went out a second time after the server closed a \
                 reused connection as they were sent: the server may have received them twice, \
                 a load the results do not show"
            ),
        ));
    }
}

/// The most requests in flight at once in any repeat and how many requests have both a send
/// and an end time. Send times of unknown origin (`send_times_unknown`) are skipped.
pub fn in_flight(run: &Run) -> (usize, usize) {
    let (mut peak, mut timed) = (0, 0);
    for rep in run.repeats.iter().filter(|r| !r.send_times_unknown) {
        let (p, t) = overlap(&rep.requests.send_offset_us, &rep.requests.e2e_us);
        peak = peak.max(p);
        timed += t;
    }
    (peak, timed)
}

/// [`in_flight`] of one repeat's columns. The sends and the ends are radix-sorted apart and
/// walked in time order, an end before a send at the same time (its slot is free): sorting
/// the two million send and end events together took a sixth of a 1,000,000-request analysis
/// in the page.
fn overlap(send_us: &[u64], e2e_us: &[Option<u64>]) -> (usize, usize) {
    let (mut sends, mut ends) = (
        Vec::with_capacity(send_us.len()),
        Vec::with_capacity(send_us.len()),
    );
    each_range(send_us.len().min(e2e_us.len()), |range| {
        for i in range {
            if let Some(e2e) = e2e_us[i] {
                let send = send_us[i];
                let end = send.saturating_add(e2e.saturating_sub(OVERLAP_SLACK_US));
                sends.push(send);
                ends.push(end.max(send));
            }
        }
    });
    sort_u64(&mut sends);
    sort_u64(&mut ends);
    let (ends, mut j, mut now, mut peak) = (ends.as_slice(), 0, 0i64, 0);
    each_block(&[&sends], |block| {
        for &send in block {
            while j < ends.len() && ends[j] <= send {
                (j, now) = (j + 1, now - 1);
            }
            now += 1;
            peak = peak.max(now.max(0) as usize);
        }
    });
    (peak, sends.len())
}

fn depth(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    let Some(c) = stated.concurrency.filter(|&c| c > 0) else {
        return;
    };
    let (peak, timed) = in_flight(run);
    if peak as u64 > c {
        let how = if c == 1 {
            "at one stream no two requests overlap".to_string()
        } else {
            format!("a run of {c} streams never has more in flight")
        };
        out.push(Violation::new(
            Invariant::ConcurrencyRespected,
            "$.repeats",
            format!("its requests overlap {peak} deep, more than the {c} it states: {how}"),
        ));
    }
    let closed_loop = stated.rate_rps.is_none() && !stated.replayed;
    if closed_loop && timed as u64 >= 2 * c && (peak as u64) < c {
        out.push(Violation::new(
            Invariant::ConcurrencyReached,
            "$.repeats",
            format!(
                "never more than {peak} of its {timed} requests in flight: not a measurement at \
                 the {c} streams it states"
            ),
        ));
    }
}

/// The intended send times of an open loop against its stated rate: the pooled mean gap has a
/// relative standard error of cv/√n; more than 4 of those (and 2%) away is not chance.
fn arrival(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    let Some(rate) = stated.rate_rps.filter(|r| *r > 0.0 && !stated.replayed) else {
        return;
    };
    let mut gaps = 0usize;
    let mut span_us = 0u64;
    for rep in &run.repeats {
        if let Some(intended) = &rep.requests.intended_offset_us {
            if let (Some(first), Some(last)) = (intended.first(), intended.last()) {
                gaps += intended.len().saturating_sub(1);
                span_us += last.saturating_sub(*first);
            }
        }
    }
    if gaps < MIN_RATE_GAPS || span_us == 0 {
        return;
    }
    let observed = gaps as f64 / (span_us as f64 / 1e6);
    let tolerance = 4.0 * stated.arrival_cv / (gaps as f64).sqrt() + 0.02;
    if (observed / rate - 1.0).abs() > tolerance {
        out.push(Violation::new(
            Invariant::ArrivalMatchesRate,
            "$.repeats[].requests.intended_offset_us",
            format!(
                "its intended send times arrive at {} requests/s, not the {} it states (beyond \
                 the ±{}% chance explains over {gaps} gaps)",
                format_number(observed),
                format_number(rate),
                format_number(100.0 * tolerance)
            ),
        ));
    }
}

/// The end of the last request of each repeat, from its start: the least time the repeat took.
fn repeat_span_us(r: &RequestColumns) -> u64 {
    r.send_offset_us
        .iter()
        .zip(&r.e2e_us)
        .filter_map(|(s, e)| e.map(|e| s.saturating_add(e)))
        .max()
        .unwrap_or(0)
}

fn window(run: &Run, stated: &Stated, out: &mut Vec<Violation>) {
    let stamp = |s: &Option<String>| s.as_deref().and_then(crate::base::time::rfc3339_us);
    let spans: u64 = run
        .repeats
        .iter()
        .filter(|r| !r.send_times_unknown)
        .map(|r| repeat_span_us(&r.requests))
        .sum();
    if let (Some(a), Some(b)) = (stamp(&run.started_at), stamp(&run.finished_at)) {
        let window = b - a;
        if window + WINDOW_SLACK_US < spans as i64 {
            out.push(Violation::new(
                Invariant::WindowCoversRequests,
                "$.finished_at",
                format!(
                    "the run states {} s from start to finish, but its repeats' requests span \
                     {} s",
                    format_number(window as f64 / 1e6),
                    format_number(spans as f64 / 1e6)
                ),
            ));
        }
    }
    for (ri, rep) in run.repeats.iter().enumerate() {
        let Some(w) = rep.reported_window_us else {
            continue;
        };
        let longest = if rep.send_times_unknown {
            busy_floor_us(&rep.requests, stated.concurrency)
        } else {
            repeat_span_us(&rep.requests)
        };
        if w < longest {
            out.push(Violation::new(
                Invariant::WindowCoversRequests,
                format!("$.repeats[{ri}].reported_window_us"),
                format!(
                    "a measured window of {} s, shorter than the {} s its requests take (the \
                     longest, or all of them at the stated concurrency)",
                    format_number(w as f64 / 1e6),
                    format_number(longest as f64 / 1e6)
                ),
            ));
        }
    }
}

/// The shortest window requests of unknown send times fit in: the longest of them, and all of
/// them end to end shared among the stated streams (none stated: one at a time is not assumed).
fn busy_floor_us(r: &RequestColumns, concurrency: Option<u64>) -> u64 {
    let e2e = r.e2e_us.iter().flatten().copied();
    let longest = e2e.clone().max().unwrap_or(0);
    let shared = concurrency
        .filter(|&c| c > 0)
        .map_or(0, |c| e2e.sum::<u64>() / c);
    longest.max(shared)
}

/// Successful multi-token requests whose tokens all arrived at once (decode time 0, or every
/// gap 0): more than half of them (and at least two) is not a stream.
fn streamed(run: &Run, out: &mut Vec<Violation>) {
    let mut multi = 0usize;
    let mut at_once = 0usize;
    for rep in &run.repeats {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range {
                let (Some(t), Some(e), Some(n)) = (r.ttft_us[i], r.e2e_us[i], r.output_tokens[i])
                else {
                    continue;
                };
                if r.error[i].is_some() || n < 2 {
                    continue;
                }
                multi += 1;
                let gaps = r.itl_us.get(i);
                // Every token in one content event is every token at once, however late the
                // closing `[DONE]` came: by the event count where the run has one, else (its
                // own collector times every event) by the absence of gaps.
                let one_event = match &r.output_events {
                    Some(events) => events.get(i).copied().flatten() == Some(1),
                    None => run.source == RunSource::Measured && gaps.is_empty(),
                };
                if e <= t || one_event || (!gaps.is_empty() && gaps.iter().all(|&g| g == 0)) {
                    at_once += 1;
                }
            }
        });
    }
    if at_once >= 2 && 2 * at_once > multi {
        out.push(Violation::new(
            Invariant::Streamed,
            "$.repeats[].requests.e2e_us",
            format!(
                "{at_once} of its {multi} successful multi-token requests received every token \
                 at once (decode time 0): the response was not streamed, so its TPOT and \
                 inter-token latency measure nothing"
            ),
        ));
    }
}

/// The median of the successful requests' TTFTs and of their inter-token gaps, µs.
/// (The upper median of an even count; the gaps are ranked in place, not copied and sorted.)
fn medians(run: &Run) -> (Option<f64>, Option<f64>) {
    let mut ttft: Vec<u64> = Vec::new();
    let mut gaps: Vec<&[u32]> = Vec::new();
    for rep in &run.repeats {
        let r = &rep.requests;
        each_range(r.len(), |range| {
            for i in range.filter(|&i| r.error[i].is_none()) {
                ttft.extend(r.ttft_us[i]);
                gaps.push(r.itl_us.get(i));
            }
        });
    }
    let mid = ttft.len() / 2;
    let ttft = (mid < ttft.len()).then(|| *ttft.select_nth_unstable(mid).1 as f64);
    let count: usize = gaps.iter().map(|g| g.len()).sum();
    let gap = rank_u32(&gaps, count / 2).map(f64::from);
    (ttft, gap)
}

/// Times to first token no model and no HTTP round trip can produce: under 100 µs, or under a
/// tenth of the typical gap between tokens (the first token costs at least one model step,
/// as every later one does) — TTFTs in another unit than the file says.
fn plausible(run: &Run, out: &mut Vec<Violation>) {
    let (Some(ttft), gap) = medians(run) else {
        return;
    };
    let below_step = gap.is_some_and(|g| ttft < g / MIN_TTFT_PER_GAP);
    if ttft >= MIN_PLAUSIBLE_TTFT_US && !below_step {
        return;
    }
    let unit = if run.source == RunSource::Imported {
        "its tool's times were converted in the wrong unit"
    } else {
        "times in milliseconds written as microseconds"
    };
    let why = match gap.filter(|_| below_step) {
        Some(g) => format!(
            "a tenth of its median gap between tokens ({} µs), while the first token costs at \
             least one model step as every later one does",
            format_number(g)
        ),
        None => format!(
            "{MIN_PLAUSIBLE_TTFT_US} µs, faster than any HTTP round trip with a model step in it"
        ),
    };
    out.push(Violation::new(
        Invariant::PlausibleLatency,
        "$.repeats[].requests.ttft_us",
        format!(
            "median time to first token {} µs, under {why}; most likely {unit}",
            format_number(ttft)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every send and end event sorted together, ends first at equal times.
    fn overlap_by_events(send_us: &[u64], e2e_us: &[Option<u64>]) -> (usize, usize) {
        let mut events = Vec::new();
        for (&send, e2e) in send_us.iter().zip(e2e_us) {
            if let Some(e2e) = e2e {
                let end = send.saturating_add(e2e.saturating_sub(OVERLAP_SLACK_US));
                events.push((send, 1i64));
                events.push((end.max(send), -1));
            }
        }
        events.sort_unstable();
        let (mut now, mut peak) = (0i64, 0usize);
        for (_, d) in &events {
            now += d;
            peak = peak.max(now.max(0) as usize);
        }
        (peak, events.len() / 2)
    }

    proptest::proptest! {
        #[test]
        fn overlap_as_all_events_sorted_together(
            rows in proptest::collection::vec((0u64..50_000, proptest::option::of(0u64..20_000)), 0..2500),
        ) {
            // Sends and ends close together (ties, ends within the slack), both sides of the
            // radix sort's threshold.
            let (send, e2e): (Vec<u64>, Vec<Option<u64>>) = rows.into_iter().unzip();
            proptest::prop_assert_eq!(overlap(&send, &e2e), overlap_by_events(&send, &e2e));
        }
    }
}
