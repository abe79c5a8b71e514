//! A run's drawn values against the ones its workload draws.
//!
//! Output caps: under an output length
//! distribution the collector draws request `j` of repeat `r` from the profile's seed (the same
//! for every candidate: [`ProfileName::request_salt`]) at index `r · 2³² + j`, so the caps a
//! measured run records are known before it runs. A run whose caps are not that sequence was
//! sent other requests than the profile's, or its caps were edited (a cap raised with its
//! output counts lowers every time per token).
//!
//! Think times: under sessions, each turn after the first is sent a think time after the
//! previous turn's answer ended (the collector sleeps that long after it stamped the end), drawn
//! from the profile's think-time distribution, so never sooner than its shortest draw. A turn
//! sent sooner was not paced as the profile says: the server saw a heavier load than the one
//! the run is labelled with.

use std::collections::HashMap;

use crate::check::invariant::{Invariant, Violation};
use crate::schema::{ProfileName, ProfileSpec, Run, RunSource, RunStatus, WorkloadSpec};

/// Mixed into the profile's seed for output caps (the collector's `Bodies`).
const OUTPUT_SALT: u64 = 0x6F75_7470;
/// Allowed a think time short of the shortest draw: the times are whole microseconds, and a
/// client's clock may be coarser (a millisecond sooner is no heavier load).
const THINK_SLACK_US: u64 = 1000;

/// `pooled`: the run is reruns pooled, its repeats renumbered (each rerun was held to its own
/// repeat numbers' caps before pooling).
pub(crate) fn check(spec: &ProfileSpec, run: &Run, pooled: bool, out: &mut Vec<Violation>) {
    let Some(w) = spec.workload.as_ref() else {
        return;
    };
    session_shape(w, run, out);
    think_times(w, run, out);
    if !pooled {
        output_caps(w, run, out);
    }
    fixed_caps(w, run, out);
    outputs_within_drawn_caps(w, run, out);
}

/// The caps a run records per request against the one cap the profile sends (no output
/// length distribution): a run that sent 64 where the profile sends 32 measured other
/// requests, whatever its source, and its time per token is another workload's.
fn fixed_caps(w: &WorkloadSpec, run: &Run, out: &mut Vec<Violation>) {
    let replayed = w.trace.is_some() || w.dataset.is_some();
    let Some(want) = w
        .max_output_tokens
        .filter(|_| w.output_length.is_none() && !replayed)
    else {
        return;
    };
    for (ri, rep) in run.repeats.iter().enumerate() {
        let Some(caps) = rep.requests.max_output_tokens.as_ref() else {
            continue;
        };
        let Some((i, got)) = caps
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.filter(|c| i64::from(*c) != want).map(|c| (i, c)))
        else {
            continue;
        };
        out.push(Violation::new(
            Invariant::WorkloadMatches,
            format!("$.repeats[{ri}].requests.max_output_tokens[{i}]"),
            format!(
                "request {i} of repeat {} was sent max_tokens {got}; the profile sends {want}: \
                 other requests than the profile's",
                rep.index
            ),
        ));
        return;
    }
}

/// Chance below which outputs past the caps a distribution draws are another workload's (over
/// every length tried; one honest run in a million is left out at most).
const CAPS_CHANCE: f64 = 1e-6;
/// Draws that stand for a cap distribution, and what their share may be short of the truth.
const CAP_DRAWS: u64 = 4000;
const CAP_SHARE_MARGIN: f64 = 0.02;

/// The share of `d`'s draws of at least `k` tokens (from [`CAP_DRAWS`] draws, the same every
/// time), raised by [`CAP_SHARE_MARGIN`]: the test stays on the honest run's side.
fn share_at_least(sorted: &[u32], k: u32) -> f64 {
    let below = sorted.partition_point(|&c| c < k);
    ((sorted.len() - below) as f64 / sorted.len().max(1) as f64 + CAP_SHARE_MARGIN).min(1.0)
}

/// The least cap each successful request's output count allows: the count itself, less another
/// tool's re-tokenizing slack for an imported run.
fn least_caps(run: &Run, imported: bool) -> Vec<u32> {
    run.repeats
        .iter()
        .flat_map(|r| {
            let q = &r.requests;
            (0..q.len())
                .filter(|&i| q.error[i].is_none())
                .filter_map(|i| q.output_tokens[i])
        })
        .map(|o| {
            if imported {
                o.saturating_sub(super::tokens::retokenized_slack(o))
            } else {
                o
            }
        })
        .collect()
}

/// The fewest output tokens among the successful requests whose count, less the slack, is at
/// least `k` (what the run produced, for the message).
fn least_produced(run: &Run, k: u32) -> u32 {
    run.repeats
        .iter()
        .flat_map(|r| r.requests.output_tokens.iter().flatten().copied())
        .filter(|&o| o.saturating_sub(super::tokens::retokenized_slack(o)) >= k)
        .min()
        .unwrap_or(k)
}

/// Outputs no draw of the workload's caps allows, for a run that records no cap per request
/// (another tool's, placed in the profile): a request's output never exceeds its cap, so the
/// share of outputs of `k` tokens or more cannot much exceed the share of caps of `k` or more.
/// A run whose outputs are all 32 tokens, for caps drawn uniformly from 16 to 48, measured
/// other requests. One-sided binomial tail per length, Bonferroni over the lengths tried; an
/// imported count may pass its cap by another tool's re-tokenizing slack.
fn outputs_within_drawn_caps(w: &WorkloadSpec, run: &Run, out: &mut Vec<Violation>) {
    let drawn_here = w.trace.is_none() && w.dataset.is_none();
    let Some(d) = w.output_length.as_ref().filter(|_| drawn_here) else {
        return;
    };
    let recorded = run
        .repeats
        .iter()
        .any(|r| r.requests.max_output_tokens.is_some());
    if recorded || d.problem().is_some() || d.min_tokens() == d.max_tokens() {
        return;
    }
    let imported = run.source == RunSource::Imported;
    let mut outs = least_caps(run, imported);
    if outs.len() < 10 {
        return;
    }
    outs.sort_unstable();
    let mut caps: Vec<u32> = (0..CAP_DRAWS).map(|i| d.sample(0xca95, i)).collect();
    caps.sort_unstable();
    let n = outs.len() as f64;
    let mut lengths: Vec<u32> = outs.clone();
    lengths.dedup();
    let tried = lengths.len() as f64;
    let worst = lengths
        .iter()
        .map(|&k| {
            let m = (outs.len() - outs.partition_point(|&o| o < k)) as f64;
            let p = share_at_least(&caps, k);
            let tail = 1.0 - crate::base::special::binom_cdf(m - 1.0, n, p);
            (tail * tried, k, m, p)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let Some((chance, k, m, p)) = worst.filter(|w| w.0 < CAPS_CHANCE) else {
        return;
    };
    let (produced, slack) = if imported {
        let s = format!(" (caps of {k} or more, less another tool's re-tokenizing slack)");
        (least_produced(run, k), s)
    } else {
        (k, String::new())
    };
    out.push(Violation::new(
        Invariant::OutputsWithinCap,
        "$.repeats[].requests.output_tokens",
        format!(
            "{m} of its {n} successful requests produced {produced} output tokens or \
             more{slack}, where the caps the profile draws ({}) allow {k} or more to about {}% \
             of requests (chance {chance:.1e}): it measured other requests than the profile's",
            d.label(),
            crate::base::fmt::format_number(100.0 * (p - CAP_SHARE_MARGIN).max(0.0)),
        ),
    ));
}

/// The run's sessions against the profile's: a profile with sessions measures multi-turn
/// sessions, one without measures single requests, and no session runs more turns than the
/// profile draws (fewer is a session cut short at a repeat's end).
fn session_shape(w: &WorkloadSpec, run: &Run, out: &mut Vec<Violation>) {
    let recorded = run
        .repeats
        .iter()
        .any(|r| r.requests.session.is_some() && r.requests.turn.is_some());
    if run.source != RunSource::Measured {
        // Another tool's file that records no turns cannot show it measured sessions.
        if w.sessions.is_some() && !recorded {
            out.push(Violation::new(
                Invariant::WorkloadMatches,
                "$.repeats[].requests.turn",
                "the profile's workload is multi-turn sessions, but the file records no turns: \
                 it cannot show it measured them (single requests are another workload)",
            ));
        }
        return;
    }
    let most = w
        .sessions
        .as_ref()
        .and_then(|s| s.turns.as_ref())
        .map(|d| d.max_tokens());
    let mismatch =
        |path: String, message: String| Violation::new(Invariant::WorkloadMatches, path, message);
    match (w.sessions.is_some(), recorded) {
        (true, false) => {
            out.push(mismatch(
                "$.repeats[].requests.session".into(),
                "the profile's workload is multi-turn sessions, but the run records none: it \
                 measured single requests"
                    .into(),
            ));
            return;
        }
        (false, true) => {
            let turns = run
                .repeats
                .iter()
                .filter_map(|r| r.requests.turn.as_ref())
                .flatten()
                .flatten()
                .max()
                .copied()
                .unwrap_or(0);
            if turns > 1 {
                out.push(mismatch(
                    "$.repeats[].requests.turn".into(),
                    format!(
                        "the run records sessions of up to {turns} turns, but the profile's \
                         workload has none: each turn resends a longer conversation, another \
                         load than the profile's"
                    ),
                ));
            }
            return;
        }
        _ => {}
    }
    let Some(most) = most else { return };
    for (ri, rep) in run.repeats.iter().enumerate() {
        let Some(turns) = &rep.requests.turn else {
            continue;
        };
        if let Some((i, t)) = turns
            .iter()
            .enumerate()
            .find_map(|(i, t)| t.filter(|&t| t > most).map(|t| (i, t)))
        {
            out.push(mismatch(
                format!("$.repeats[{ri}].requests.turn[{i}]"),
                format!(
                    "a session ran {t} turns, but the profile's sessions draw at most {most}: \
                     another conversation length than the profile's"
                ),
            ));
            return;
        }
    }
}

/// Each session's turns against the shortest think time the profile draws.
fn think_times(w: &WorkloadSpec, run: &Run, out: &mut Vec<Violation>) {
    let Some(d) = w.sessions.as_ref().and_then(|s| s.think_time_ms.as_ref()) else {
        return;
    };
    let least_us = u64::from(d.min_tokens()) * 1000;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let r = &rep.requests;
        let (Some(sessions), Some(turns)) = (&r.session, &r.turn) else {
            continue;
        };
        let mut last: HashMap<u32, usize> = HashMap::new();
        for (i, (s, t)) in sessions.iter().zip(turns).enumerate() {
            let (Some(s), Some(t)) = (*s, *t) else {
                continue;
            };
            let Some(p) = last.insert(s, i) else { continue };
            let Some(e2e) = r.e2e_us[p] else { continue };
            let ended = r.send_offset_us[p].saturating_add(e2e);
            let waited = r.send_offset_us[i].saturating_sub(ended);
            if waited + THINK_SLACK_US < least_us {
                out.push(Violation::new(
                    Invariant::WorkloadMatches,
                    format!("$.repeats[{ri}].requests.send_offset_us[{i}]"),
                    format!(
                        "turn {t} of session {s} was sent {waited} µs after the previous answer \
                         ended: expected at least {least_us} µs, the shortest think time the \
                         profile's {} ms draws (a turn sent sooner puts more load on the server \
                         than the profile's)",
                        d.label()
                    ),
                ));
                return;
            }
        }
    }
}

/// The output caps against the sequence the profile draws.
fn output_caps(w: &WorkloadSpec, run: &Run, out: &mut Vec<Violation>) {
    // Replayed lengths, sessions (turns interleave by timing) and other tools' runs draw
    // otherwise; a run cut short holds an unknown subset of the sequence.
    let drawn_here = w.trace.is_none() && w.dataset.is_none() && w.sessions.is_none();
    let (Some(d), Some(profile), true, true, true) = (
        w.output_length.as_ref(),
        ProfileName::parse(&run.profile),
        drawn_here,
        run.source == RunSource::Measured,
        run.status == RunStatus::Ok,
    ) else {
        return;
    };
    let salt = profile.request_salt() ^ OUTPUT_SALT;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let Some(caps) = rep.requests.max_output_tokens.as_ref() else {
            continue;
        };
        let base = u64::from(rep.index) << 32;
        // Requests are recorded in send order; two streams taking consecutive indices may send
        // them in either order, so the repeat's caps are compared as a multiset.
        let mut want: Vec<u32> = (0..caps.len() as u64)
            .map(|j| d.sample(salt, base + j))
            .collect();
        let mut got: Vec<u32> = caps.iter().flatten().copied().collect();
        if got.len() != caps.len() {
            continue;
        }
        want.sort_unstable();
        got.sort_unstable();
        if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
            out.push(Violation::new(
                Invariant::WorkloadMatches,
                format!("$.repeats[{ri}].requests.max_output_tokens"),
                format!(
                    "repeat {}'s output caps are not the ones the profile's {} draws for its {} \
                     requests (sorted, number {}: {} where it draws {}): other requests than the \
                     profile's, or caps edited",
                    rep.index,
                    d.label(),
                    caps.len(),
                    k + 1,
                    got[k],
                    want[k]
                ),
            ));
            return;
        }
    }
}
