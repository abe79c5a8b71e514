//! A sharded tree proves itself: what its records state is held to what they name and to each
//! other, not believed as they describe themselves.
//!
//! - **The plan's hash**: the sha256 every reference states is recomputed from the plan file
//!   loaded beside the shards; no plan, or another, and the tree does not stand for a plan.
//! - **One attempt's records agree**: the record rewritten at the end and the completion marker
//!   give one outcome; an attempt that says it finished whole holds no partial or failed run and
//!   lists nothing as not finished.
//! - **Clocks**: an attempt ends after it starts (wall and monotonic clocks alike, and the two
//!   advancing together), its marker is written by its end (within [`MARKER_SLACK_US`]), and its
//!   runs lie within it.
//! - **Which attempt counts** is decided by the markers' times; where two finished attempts of
//!   one index order differently by their records' own ends, which counts is not known, and the
//!   merge says so rather than choosing.

use std::collections::BTreeMap;

use crate::base::time::rfc3339_us;
use crate::read::json::{Document, LoadedFile};
use crate::schema::{Run, RunStatus, ShardDone, ShardOutcome, ShardRecord};

/// One attempt's files: its record, its completion marker and its runs.
#[derive(Default)]
pub(super) struct Attempt<'a> {
    pub(super) record: Option<(&'a str, &'a ShardRecord)>,
    pub(super) done: Option<&'a ShardDone>,
    pub(super) runs: Vec<(&'a str, &'a Run)>,
}

/// How long after its record's end a marker may be written, µs (the marker is written last).
pub(super) const MARKER_SLACK_US: i64 = 10 * 60 * 1_000_000;
/// How far the wall clock may move against the monotonic clock over an attempt, µs, plus a
/// thousandth of the attempt (an NTP step, a slewed clock).
const CLOCK_SLACK_US: i64 = 60 * 1_000_000;

/// Why the plan the shards name is not the plan loaded beside them.
pub(super) fn plan_hash(files: &[&LoadedFile], named: &str) -> Option<String> {
    let plans: Vec<(&str, Option<&str>)> = files
        .iter()
        .filter_map(|f| match &f.doc {
            Document::Plan(p) => Some((f.name.as_str(), p.file_sha256.0.as_deref())),
            _ => None,
        })
        .collect();
    if plans.is_empty() {
        return Some(format!(
            "no plan file was loaded beside the shards: the plan they name (sha256 {}) cannot \
             be checked, nor which cells it holds",
            short(named)
        ));
    }
    if plans
        .iter()
        .any(|(_, sha)| sha.is_some_and(|s| s.eq_ignore_ascii_case(named)))
    {
        return None;
    }
    let (file, sha) = plans[0];
    Some(format!(
        "the shards name the plan with sha256 {}, but {file} hashes to {}: the plan beside them \
         is not the one they ran",
        short(named),
        sha.map_or("unknown", short)
    ))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// What one attempt's records say against each other and against their clocks.
pub(super) fn attempt(index: u32, id: &str, a: &Attempt<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let who = format!("shard {index}, attempt {id}");
    if let (Some((_, r)), Some(d)) = (a.record, a.done) {
        if let Some(o) = r.outcome.filter(|o| *o != d.outcome) {
            out.push(format!(
                "{who}: its record says it ended {}, its completion marker {}: the two records \
                 of one attempt disagree",
                outcome(o),
                outcome(d.outcome)
            ));
        }
    }
    let whole = a.done.map(|d| d.outcome) == Some(ShardOutcome::Ok);
    if whole {
        let unfinished: Vec<&str> = a
            .runs
            .iter()
            .filter(|(_, r)| r.status != RunStatus::Ok)
            .map(|(f, _)| *f)
            .collect();
        if let Some(f) = unfinished.first() {
            out.push(format!(
                "{who}: its marker says every run finished, but {f} is {}",
                a.runs
                    .iter()
                    .find(|(x, _)| x == f)
                    .map_or("unfinished", |(_, r)| r.status.as_str())
            ));
        }
        if let Some(listed) = a.record.and_then(|(_, r)| r.incomplete.first()) {
            out.push(format!(
                "{who}: its marker says every run finished, but its record lists {listed:?} as not \
                 finished"
            ));
        }
    }
    out.extend(clocks(&who, a));
    out
}

fn outcome(o: ShardOutcome) -> &'static str {
    match o {
        ShardOutcome::Ok => "whole",
        ShardOutcome::Incomplete => "incomplete",
    }
}

/// An attempt's clocks against themselves, its marker and its runs.
fn clocks(who: &str, a: &Attempt<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let Some((_, r)) = a.record else {
        return out;
    };
    let start = r.start.wall_unix_ns / 1000;
    let end = r.end.as_ref().map(|e| e.wall_unix_ns / 1000);
    if let Some(e) = &r.end {
        let wall = e.wall_unix_ns - r.start.wall_unix_ns;
        let mono = e.monotonic_ns as i128 - r.start.monotonic_ns as i128;
        if wall < 0 || mono < 0 {
            out.push(format!(
                "{who}: it ends before it starts ({} against {}): its clocks cannot be believed",
                e.wall, r.start.wall
            ));
        } else if (i128::from(wall) - mono).abs() / 1000
            > i128::from(CLOCK_SLACK_US) + mono / 1_000_000
        {
            out.push(format!(
                "{who}: its wall clock moved {} s while its monotonic clock moved {} s: the \
                 wall clock jumped, and its times cannot be compared with other attempts'",
                wall / 1_000_000_000,
                mono / 1_000_000_000
            ));
        }
    }
    let marker = a
        .done
        .map(|d| (d.finished_at.as_str(), rfc3339_us(&d.finished_at)));
    if let Some((stamp, at)) = marker {
        match at {
            None => out.push(format!(
                "{who}: its marker's finished_at {stamp:?} is no RFC 3339 time"
            )),
            Some(t) if t < start => out.push(format!(
                "{who}: its marker says it finished at {stamp}, before it started ({})",
                r.start.wall
            )),
            Some(t) if end.is_some_and(|e| t > e + MARKER_SLACK_US) => out.push(format!(
                "{who}: its marker says it finished at {stamp}, long after its record's end \
                 ({}): the marker is written last, as the attempt ends",
                r.end.as_ref().map_or("", |e| e.wall.as_str())
            )),
            Some(_) => {}
        }
    }
    let last = end.or_else(|| marker.and_then(|m| m.1));
    for (file, run) in &a.runs {
        let started = run.started_at.as_deref().and_then(rfc3339_us);
        let finished = run.finished_at.as_deref().and_then(rfc3339_us);
        let before = started.is_some_and(|s| s + 1_000_000 < start);
        let after = finished.is_some_and(|f| last.is_some_and(|l| f > l + 1_000_000));
        if before || after {
            out.push(format!(
                "{who}: {file} ran outside the attempt's own times (it started {}, the attempt \
                 {}): a run of another attempt",
                run.started_at.as_deref().unwrap_or("?"),
                r.start.wall
            ));
        }
    }
    out
}

/// Where two finished attempts of one index order differently by their markers' times and by
/// their records' own ends: which one counts is not known from them.
pub(super) fn order(attempts: &BTreeMap<(u32, String), Attempt<'_>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut by_index: BTreeMap<u32, Vec<(&str, i64, i64)>> = BTreeMap::new();
    for ((index, id), a) in attempts {
        let marker = a.done.and_then(|d| rfc3339_us(&d.finished_at));
        let end = a
            .record
            .and_then(|(_, r)| r.end.as_ref())
            .map(|e| e.wall_unix_ns / 1000);
        if let (Some(m), Some(e)) = (marker, end) {
            by_index
                .entry(*index)
                .or_default()
                .push((id.as_str(), m, e));
        }
    }
    for (index, list) in by_index {
        for (i, a) in list.iter().enumerate() {
            for b in &list[i + 1..] {
                if (a.1 < b.1) != (a.2 < b.2) && a.1 != b.1 && a.2 != b.2 {
                    out.push(format!(
                        "shard {index}: attempts {} and {} finished in one order by their \
                         markers and in the other by their records: which counts is not known",
                        a.0, b.0
                    ));
                }
            }
        }
    }
    out
}
