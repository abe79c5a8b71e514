//! Completeness against the plan: every cell the plan asks for — each profile's candidates, the
//! float baseline when the plan runs one, and each candidate's capacity search where the
//! profile declares one — must have a usable run, whatever the run's origin (collected,
//! imported, recovered from a journal, a shard's, a trial). A cell without one is named with
//! why (no run file, a file that could not be read, a run left out and its reason, a run under
//! another profile name, a shard that did not finish), and its profile gets no verdict over the
//! others: `incomplete`, with what the measured cells alone would give kept beside it as
//! provisional.

use crate::analyse::report::ProfileReport;
pub use crate::analyse::report::{CellKind, MissingCell, Provisional};
use crate::analyse::shard::types::{ShardReport, ShardStatus};
use crate::analyse::verdict::ProfileDecision;
use crate::schema::{Plan, Role, Run};

/// What the cells are checked against besides the profile's own report.
pub(crate) struct Context<'a> {
    /// The plan.
    pub(crate) plan: &'a Plan,
    /// Every run loaded, under any profile name (a run under a misspelt one is named).
    pub(crate) runs: &'a [(&'a str, &'a Run)],
    /// The merge of a sharded tree.
    pub(crate) shards: Option<&'a ShardReport>,
    /// Files that could not be read, each message naming its file.
    pub(crate) refused: &'a [String],
}

/// The plan's cells of `report`'s profile that have no usable run.
pub(crate) fn missing(ctx: &Context<'_>, report: &ProfileReport) -> Vec<MissingCell> {
    let mut out = Vec::new();
    let searched = crate::analyse::searched::serves(Some(ctx.plan), &report.profile);
    if searched {
        out.extend(search_cell(report));
    }
    for c in ctx.plan.candidates.iter().filter(|_| !searched) {
        if !report.candidates.iter().any(|k| k.name == c.name) {
            out.push(cell(ctx, report, CellKind::Candidate, &c.name));
        }
    }
    if let Some(b) = &ctx.plan.baseline {
        if report.baseline.is_none() {
            out.push(cell(ctx, report, CellKind::Baseline, &b.name));
        }
    }
    if let Some(cap) = &report.capacity {
        for c in &ctx.plan.candidates {
            let searched = cap
                .candidates
                .iter()
                .find(|k| k.name == c.name && !k.trials.is_empty());
            match searched {
                None => out.push(cell(ctx, report, CellKind::Trials, &c.name)),
                Some(k) => out.extend(broken_search(ctx, report, k).map(|reason| MissingCell {
                    kind: CellKind::Trials,
                    name: c.name.clone(),
                    reason,
                })),
            }
        }
    }
    out
}

/// The configuration search's cell, when its search did not run to its end (or has no trial).
fn search_cell(report: &ProfileReport) -> Option<MissingCell> {
    // Named after its profile: "configuration search of throughput".
    use crate::analyse::explore::replay::SearchStatus;
    let reason = match &report.search {
        None => "no trial file of the search was loaded".to_string(),
        Some(s) if s.status == SearchStatus::Complete => return None,
        Some(s) => s
            .problem
            .clone()
            .unwrap_or_else(|| "not run to its end".into()),
    };
    Some(MissingCell {
        kind: CellKind::Search,
        name: report.profile.clone(),
        reason,
    })
}

/// Why a candidate's search, with some trials, is not whole: a trial left out (unfinished, or
/// breaking an invariant), or a position of the search (`trial.index`) with no trial. Each
/// trial is chosen from the ones before it, so a search with a hole is not the search that ran.
fn broken_search(
    ctx: &Context<'_>,
    report: &ProfileReport,
    k: &crate::analyse::capacity::CandidateCapacity,
) -> Option<String> {
    if let Some(why) = k.excluded.first() {
        return Some(format!("a trial was left out ({why})"));
    }
    let trial_files = ctx.runs.iter().filter(|(_, r)| {
        r.trial.is_some() && r.candidate.name == k.name && r.profile == report.profile
    });
    for (file, _) in trial_files {
        if let Some(e) = report.excluded.iter().find(|e| e.file == *file) {
            return Some(format!("its trial {file} was left out: {}", e.reason));
        }
    }
    let mut have: Vec<u32> = k.trials.iter().map(|t| t.index).collect();
    have.sort_unstable();
    have.dedup();
    let last = *have.last()?;
    let holes: Vec<String> = (0..=last)
        .filter(|i| have.binary_search(i).is_err())
        .map(|i| i.to_string())
        .collect();
    (!holes.is_empty()).then(|| {
        format!(
            "no trial at position {} of the search (trial.index): the search that ran had one",
            holes.join(", ")
        )
    })
}

/// One missing cell with the first reason that explains it.
fn cell(ctx: &Context<'_>, report: &ProfileReport, kind: CellKind, name: &str) -> MissingCell {
    let reason = left_out(report, kind, name)
        .or_else(|| elsewhere(ctx, report, kind, name))
        .or_else(|| in_shard(ctx, kind, name))
        .unwrap_or_else(|| no_file(ctx));
    MissingCell {
        kind,
        name: name.to_string(),
        reason,
    }
}

/// A run of the cell that was loaded and left out, with the reason.
fn left_out(report: &ProfileReport, kind: CellKind, name: &str) -> Option<String> {
    if kind == CellKind::Trials {
        let cap = report.capacity.as_ref()?;
        let c = cap.candidates.iter().find(|c| c.name == name)?;
        return c
            .excluded
            .first()
            .map(|why| format!("every trial was left out ({why})"));
    }
    let all: Vec<_> = report
        .excluded
        .iter()
        .filter(|e| e.candidate == name)
        .collect();
    let first = all.first()?;
    let more = match all.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    Some(format!(
        "its run {} was left out: {}{more}",
        first.file, first.reason
    ))
}

/// A run of the cell's candidate under another profile name (a misspelt one is not analysed).
fn elsewhere(
    ctx: &Context<'_>,
    report: &ProfileReport,
    kind: CellKind,
    name: &str,
) -> Option<String> {
    let role = match kind {
        CellKind::Baseline => Role::Baseline,
        _ => Role::Candidate,
    };
    let known = |p: &str| crate::schema::ProfileName::parse(p).is_some();
    let (file, run) = ctx
        .runs
        .iter()
        .find(|(_, r)| r.candidate.name == name && r.role == role && !known(&r.profile))?;
    Some(format!(
        "no run under the {} profile; {file} names the profile {:?}, which is not a serving \
         profile (latency, balanced or throughput), so it is not analysed",
        report.profile, run.profile
    ))
}

/// The shard the cell was assigned to, when it did not finish.
fn in_shard(ctx: &Context<'_>, kind: CellKind, name: &str) -> Option<String> {
    let role = match kind {
        CellKind::Baseline => "baseline",
        _ => "candidate",
    };
    let key = format!("{role} {name}");
    let s = ctx
        .shards?
        .shards
        .iter()
        .find(|s| s.status != ShardStatus::Done && s.cells.contains(&key))?;
    Some(format!(
        "it was assigned to shard {}, which is {}",
        s.index,
        s.status.as_str()
    ))
}

fn no_file(ctx: &Context<'_>) -> String {
    match ctx.refused {
        [] => "no run file was loaded".into(),
        [one] => format!("no run file was loaded; a file could not be read ({one})"),
        [first, rest @ ..] => format!(
            "no run file was loaded; {} files could not be read (the first: {first})",
            rest.len() + 1
        ),
    }
}

/// `incomplete: not measured — np4 (its run … was left out: …); float baseline f16 (no run
/// file was loaded)`.
pub(crate) fn reason(missing: &[MissingCell]) -> String {
    let cells: Vec<String> = missing
        .iter()
        .map(|m| format!("{} {} ({})", m.kind.as_str(), m.name, m.reason))
        .collect();
    format!(
        "incomplete: the plan's {} not measured — {}; no verdict is given over what was not \
         measured",
        if missing.len() == 1 {
            "cell was"
        } else {
            "cells were"
        },
        cells.join("; ")
    )
}

/// Marks the report incomplete for `why` (a sharded tree that does not stand for the plan),
/// keeping what the measured cells alone give as provisional.
pub(crate) fn hold_for(report: &mut ProfileReport, why: &str) {
    provisional(report);
    report.reason = format!("incomplete: {why}");
}

/// Marks the report incomplete, keeping what the measured cells alone give as provisional.
pub(crate) fn hold(report: &mut ProfileReport, missing: Vec<MissingCell>) {
    if missing.is_empty() {
        return;
    }
    provisional(report);
    report.reason = reason(&missing);
    report.missing = missing;
}

/// What the measured cells alone give, kept as provisional — none when nothing was measured
/// (a verdict over no run is no verdict, not a provisional reject).
fn provisional(report: &mut ProfileReport) {
    let given = Provisional {
        decision: report.decision,
        recommended: report.recommended_name.take(),
        reason: std::mem::take(&mut report.reason),
    };
    report.provisional = (!report.candidates.is_empty()).then_some(given);
    report.decision = ProfileDecision::Incomplete;
    for c in &mut report.candidates {
        c.chosen = false;
    }
}
