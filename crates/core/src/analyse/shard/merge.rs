//! Which files of a sharded results tree count. Every file says which plan, shard and attempt
//! it belongs to (`ShardRef`), so the merge reads content, never paths. Per shard the latest
//! finished attempt counts (by its marker's time, then its id); without a finished attempt the
//! latest started one is read as partial. Runs of every other attempt are left out, named.
//! Everything that keeps the merge from standing for the whole plan — a missing, partial or
//! failed shard, two plans, a cell covered twice or never, shards on different hardware or
//! backends — is a problem, and the analysis gives no verdict while there is one.

use std::collections::BTreeMap;

use super::trust::Attempt;
use crate::analyse::shard::types::{AttemptState, ShardReport, ShardState, ShardStatus};
use crate::read::json::{Document, LoadedFile};
use crate::schema::{Cell, Role, ShardOutcome, ShardRef};

/// The shard reference a file carries, if any.
fn reference(doc: &Document) -> Option<&ShardRef> {
    match doc {
        Document::Shard(s) => Some(&s.shard),
        Document::ShardDone(d) => Some(&d.shard),
        Document::Run(r) => r.shard.as_ref(),
        _ => None,
    }
}

/// The files the analysis reads, and the merge's report when any file belongs to a shard.
pub fn merge<'a>(files: Vec<&'a LoadedFile>) -> (Vec<&'a LoadedFile>, Option<ShardReport>) {
    let Some((plan, count)) = majority(&files) else {
        return (files, None);
    };
    let mut problems = Vec::new();
    let mut attempts: BTreeMap<(u32, String), Attempt<'a>> = BTreeMap::new();
    let mut keep = Vec::new();
    for f in &files {
        let Some(r) = reference(&f.doc) else {
            keep.push(*f);
            continue;
        };
        if let Some(why) = foreign(r, &plan, count) {
            problems.push(format!("{}: {why}: left out", f.name));
            continue;
        }
        let a = attempts.entry((r.index, r.attempt.clone())).or_default();
        match &f.doc {
            // A record rewritten at the end wins over a copy of the one written at start.
            Document::Shard(s) if a.record.is_none_or(|(_, old)| old.end.is_none()) => {
                a.record = Some((f.name.as_str(), &**s));
            }
            Document::ShardDone(d) => a.done = Some(d),
            Document::Run(run) => a.runs.push((f.name.as_str(), &**run)),
            _ => {}
        }
    }
    let counted = counted_attempts(&attempts, count);
    problems.extend(super::trust::plan_hash(&files, &plan));
    for ((index, id), a) in &attempts {
        problems.extend(super::trust::attempt(*index, id, a));
    }
    problems.extend(super::trust::order(&attempts));
    let mut left_out = Vec::new();
    for ((index, id), a) in &attempts {
        if counted.get(index) == Some(id) {
            keep.extend(files.iter().copied().filter(|f| {
                matches!(&f.doc, Document::Run(r) if r.shard.as_ref().is_some_and(|s| s.index == *index && s.attempt == *id))
            }));
        } else if !a.runs.is_empty() {
            left_out.push(format!(
                "shard {index} of {count}: attempt {id} left out ({} run files), superseded by attempt {}",
                a.runs.len(),
                counted.get(index).map_or("?", String::as_str)
            ));
        }
    }
    let assignment = assignment(&attempts, &mut problems);
    let shards = states(&attempts, &counted, assignment.as_deref(), count);
    for s in &shards {
        if let Some(p) = status_problem(s, count) {
            problems.push(p);
        }
    }
    if let Some(cells) = &assignment {
        coverage(&attempts, &counted, cells, &shards, &mut problems);
    }
    same_lineage(&attempts, &counted, &mut problems);
    let complete = problems.is_empty() && shards.iter().all(|s| s.status == ShardStatus::Done);
    let report = ShardReport {
        plan_sha256: plan,
        count,
        shards,
        problems,
        left_out,
        complete,
    };
    (keep, Some(report))
}

/// The split most files belong to (plan sha256 and shard count; the smaller among equals), so
/// one stray file cannot make every other one the stranger.
fn majority(files: &[&LoadedFile]) -> Option<(String, u32)> {
    let mut seen: BTreeMap<(&str, u32), usize> = BTreeMap::new();
    for r in files.iter().filter_map(|f| reference(&f.doc)) {
        *seen
            .entry((r.plan_sha256.as_str(), r.count.max(1)))
            .or_default() += 1;
    }
    let most = seen.values().copied().max()?;
    seen.into_iter()
        .find(|(_, n)| *n == most)
        .map(|((p, c), _)| (p.to_string(), c))
}

/// Why a file's reference does not belong with the first one seen.
fn foreign(r: &ShardRef, plan: &str, count: u32) -> Option<String> {
    if r.plan_sha256 != plan {
        return Some(format!(
            "belongs to the plan with sha256 {}, not {plan} like the other shards: a merge holds one plan",
            r.plan_sha256
        ));
    }
    if r.count.max(1) != count {
        return Some(format!(
            "says the plan was split into {} shards, the others {count}",
            r.count
        ));
    }
    if r.index >= count {
        return Some(format!(
            "shard index {} is not below the shard count {count}",
            r.index
        ));
    }
    None
}

/// Per shard index, the attempt whose runs count: the latest finished one (by its marker's
/// time, then its id), else the latest started one.
fn counted_attempts(
    attempts: &BTreeMap<(u32, String), Attempt<'_>>,
    count: u32,
) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for index in 0..count {
        let mine = attempts.iter().filter(|((i, _), _)| *i == index);
        let finished = mine
            .clone()
            .filter_map(|((_, id), a)| a.done.map(|d| (d.finished_at.as_str(), id)))
            .max();
        let started = || {
            mine.clone()
                .map(|((_, id), a)| (a.record.map(|(_, r)| r.start.wall_unix_ns), id))
                .max()
                .map(|(_, id)| id)
        };
        if let Some(id) = finished.map(|(_, id)| id).or_else(started) {
            out.insert(index, id.clone());
        }
    }
    out
}

/// The assignment every record states; records that state another one are a problem.
fn assignment(
    attempts: &BTreeMap<(u32, String), Attempt<'_>>,
    problems: &mut Vec<String>,
) -> Option<Vec<Cell>> {
    let mut records = attempts.values().filter_map(|a| a.record);
    let Some((first_file, first)) = records.next() else {
        problems.push(
            "no shard record (shard.json) was loaded: which cells each shard runs cannot be checked"
                .into(),
        );
        return None;
    };
    for (file, r) in records {
        if r.cells != first.cells {
            problems.push(format!(
                "{file}: assigns the plan's cells differently from {first_file}: shards of one split agree"
            ));
        }
    }
    Some(first.cells.clone())
}

fn cell_name(c: &Cell) -> String {
    match c.role {
        Role::Candidate => format!("candidate {}", c.name),
        Role::Baseline => format!("baseline {}", c.name),
    }
}

fn states(
    attempts: &BTreeMap<(u32, String), Attempt<'_>>,
    counted: &BTreeMap<u32, String>,
    cells: Option<&[Cell]>,
    count: u32,
) -> Vec<ShardState> {
    (0..count)
        .map(|index| {
            let mut list: Vec<AttemptState> = attempts
                .iter()
                .filter(|((i, _), _)| *i == index)
                .map(|((_, id), a)| AttemptState {
                    attempt: id.clone(),
                    node: a.record.and_then(|(_, r)| r.node.clone()),
                    started_at: a.record.map(|(_, r)| r.start.wall.clone()),
                    finished_at: a.done.map(|d| d.finished_at.clone()),
                    outcome: a.done.map(|d| d.outcome),
                    runs: a.runs.len(),
                    counted: counted.get(&index) == Some(id),
                })
                .collect();
            crate::base::order::sort_by(&mut list, |a, b| {
                a.started_at
                    .cmp(&b.started_at)
                    .then(a.attempt.cmp(&b.attempt))
            });
            let status = match list.iter().find(|a| a.counted) {
                None => ShardStatus::Missing,
                Some(a) => match a.outcome {
                    None => ShardStatus::Partial,
                    Some(ShardOutcome::Ok) => ShardStatus::Done,
                    Some(ShardOutcome::Incomplete) => ShardStatus::Failed,
                },
            };
            ShardState {
                index,
                status,
                cells: cells
                    .unwrap_or_default()
                    .iter()
                    .filter(|c| c.shard == index)
                    .map(cell_name)
                    .collect(),
                attempts: list,
            }
        })
        .collect()
}

fn status_problem(s: &ShardState, count: u32) -> Option<String> {
    let cells = if s.cells.is_empty() {
        String::new()
    } else {
        format!(" (cells: {})", s.cells.join(", "))
    };
    let i = s.index;
    match s.status {
        ShardStatus::Done => None,
        ShardStatus::Missing => Some(format!(
            "shard {i} of {count}: missing — no file of it was loaded{cells}"
        )),
        ShardStatus::Partial => Some(format!(
            "shard {i} of {count}: partial — no attempt wrote its completion marker (done.json); the latest attempt's runs are read as they are{cells}"
        )),
        ShardStatus::Failed => Some(format!(
            "shard {i} of {count}: failed — its attempt finished with a run partial, failed or not run{cells}"
        )),
    }
}

/// Every assigned cell has runs in exactly its shard's counted attempt, and no counted run
/// belongs to a cell its shard was not assigned.
fn coverage(
    attempts: &BTreeMap<(u32, String), Attempt<'_>>,
    counted: &BTreeMap<u32, String>,
    cells: &[Cell],
    shards: &[ShardState],
    problems: &mut Vec<String>,
) {
    for (index, id) in counted {
        let Some(a) = attempts.get(&(*index, id.clone())) else {
            continue;
        };
        for (file, run) in &a.runs {
            let owner = cells
                .iter()
                .find(|c| c.role == run.role && c.name == run.candidate.name);
            match owner {
                None => problems.push(format!(
                    "{file}: a run of {} {}, which is no cell of the plan's split",
                    role_name(run.role),
                    run.candidate.name
                )),
                Some(c) if c.shard != *index => problems.push(format!(
                    "{file}: shard {index} ran {}, which shard {} owns: a cell is run once",
                    cell_name(c),
                    c.shard
                )),
                Some(_) => {}
            }
        }
    }
    for c in cells {
        let done = shards
            .get(c.shard as usize)
            .is_some_and(|s| s.status == ShardStatus::Done);
        let ran = counted
            .get(&c.shard)
            .and_then(|id| attempts.get(&(c.shard, id.clone())));
        let has_runs = ran.is_some_and(|a| {
            a.runs
                .iter()
                .any(|(_, r)| r.role == c.role && r.candidate.name == c.name)
        });
        if done && !has_runs {
            problems.push(format!(
                "shard {}: finished, but no run of its {} was loaded",
                c.shard,
                cell_name(c)
            ));
        }
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Candidate => "candidate",
        Role::Baseline => "baseline",
    }
}

/// The counted attempts ran on the same hardware with the same backend, and every candidate
/// served the same artifact; the first counted shard is the reference.
fn same_lineage(
    attempts: &BTreeMap<(u32, String), Attempt<'_>>,
    counted: &BTreeMap<u32, String>,
    problems: &mut Vec<String>,
) {
    let mut reference: BTreeMap<&str, (u32, String)> = BTreeMap::new();
    for (index, id) in counted {
        let Some(a) = attempts.get(&(*index, id.clone())) else {
            continue;
        };
        let mut facts: Vec<(&str, String)> = Vec::new();
        if let Some((_, r)) = a.record {
            facts.push((
                "GPU (NVML)",
                r.hardware.clone().unwrap_or_else(|| "none".into()),
            ));
        }
        for (_, run) in &a.runs {
            facts.push(("hardware", run.hardware.clone()));
            facts.push((
                "backend",
                format!("{} {}", run.backend, run.backend_version),
            ));
            if run.role == Role::Candidate {
                facts.push(("artifact", run.artifact_id.clone()));
            }
        }
        for (what, value) in facts {
            match reference.get(what) {
                None => {
                    reference.insert(what, (*index, value));
                }
                Some((first, v)) if *v != value => {
                    let p = format!(
                        "shard {index} ran with {what} {value:?}, shard {first} with {v:?}: not comparable"
                    );
                    if !problems.contains(&p) {
                        problems.push(p);
                    }
                }
                Some(_) => {}
            }
        }
    }
}
