//! The one gate every run of a profile passes before anything is pooled, selected or ranked:
//! the examine-level invariants of the catalogue ([`crate::check::run::examine`]) for each run
//! whatever its origin and role (candidate, capacity trial, float baseline, import, recovered
//! journal), then the invariants between runs (names that read the same). Broken exclude-level
//! invariants leave the run out with the reason; flag-level ones flag it.

use crate::analyse::report::{Code, Excluded, Flag};
use crate::check::invariant::{Invariant, Outcome, Violation};
use crate::check::names::{skeleton, spelled};
use crate::check::run::timing::same_measurement;
use crate::check::run::{examine, Expect};
use crate::schema::Run;

/// The runs that pass, in their order; the others are in `excluded`, the flags in `flags`.
pub(crate) fn screen<'a>(
    runs: &[(&'a str, &'a Run)],
    expect: &Expect<'_>,
    excluded: &mut Vec<Excluded>,
    flags: &mut Vec<Flag>,
) -> Vec<(&'a str, &'a Run)> {
    let mut kept = Vec::new();
    for &(file, run) in runs {
        let found = examine(run, expect);
        if apply(file, run, found, excluded, flags) {
            kept.push((file, run));
        }
    }
    let kept = distinct_names(kept, excluded);
    let kept = measured_once(kept, excluded);
    one_trial_per_load(kept, excluded, flags)
}

/// Two different runs that hold the same requests (a repeat whose every column is equal, or
/// whose gaps between tokens are, two requests or more: `same_measurement`): one measurement
/// labelled twice. Both are left out; an identical copy of
/// one run is not this (it is counted once, later).
fn measured_once<'a>(
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
) -> Vec<(&'a str, &'a Run)> {
    let shares = |a: &Run, b: &Run| {
        a != b
            && a.repeats.iter().any(|x| {
                b.repeats
                    .iter()
                    .any(|y| same_measurement(&x.requests, &y.requests))
            })
    };
    let mut kept = Vec::new();
    for &(file, run) in &runs {
        let others: Vec<String> = runs
            .iter()
            .filter(|(f, r)| *f != file && shares(run, r))
            .map(|(f, r)| format!("{f} ({})", r.candidate.name))
            .collect();
        if others.is_empty() {
            kept.push((file, run));
            continue;
        }
        excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::Invariant(Invariant::MeasuredOnce),
            reason: format!(
                "the same requests are in {}: one measurement cannot be two runs (one of them \
                 is mislabelled)",
                others.join(", ")
            ),
        });
    }
    kept
}

/// Turns one run's violations into its exclusion (all the reasons, the first one's code) and
/// flags; true when the run is kept.
pub(crate) fn apply(
    file: &str,
    run: &Run,
    found: Vec<Violation>,
    excluded: &mut Vec<Excluded>,
    flags: &mut Vec<Flag>,
) -> bool {
    let name = &run.candidate.name;
    let (out, flagged): (Vec<Violation>, Vec<Violation>) = found
        .into_iter()
        .partition(|v| v.invariant.outcome() != Outcome::Flag);
    for v in flagged {
        flags.push(Flag {
            code: Code::Invariant(v.invariant),
            candidate: Some(name.clone()),
            message: format!("{name}: {}", v.message),
        });
    }
    let Some(first) = out.first() else {
        return true;
    };
    let reasons: Vec<&str> = out.iter().map(|v| v.message.as_str()).collect();
    excluded.push(Excluded {
        file: file.to_string(),
        candidate: name.clone(),
        code: Code::Invariant(first.invariant),
        reason: reasons.join("; "),
    });
    false
}

/// Candidate names that differ but read the same are one ambiguous name: every run under one
/// of them is left out, naming the others, rather than shown as two candidates.
fn distinct_names<'a>(
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
) -> Vec<(&'a str, &'a Run)> {
    let keys: Vec<String> = runs
        .iter()
        .map(|(_, r)| skeleton(&r.candidate.name))
        .collect();
    let mut kept = Vec::new();
    for (i, &(file, run)) in runs.iter().enumerate() {
        let mut others: Vec<&str> = runs
            .iter()
            .zip(&keys)
            .filter(|((_, r), k)| **k == keys[i] && r.candidate.name != run.candidate.name)
            .map(|((_, r), _)| r.candidate.name.as_str())
            .collect();
        if others.is_empty() {
            kept.push((file, run));
            continue;
        }
        others.sort_unstable();
        others.dedup();
        let spelled_others: Vec<String> = others.iter().map(|o| spelled(o)).collect();
        excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::Invariant(Invariant::NamesDistinct),
            reason: format!(
                "candidate {} reads the same as {}: one ambiguous name, not two candidates — \
                 rename one, or load one of them",
                spelled(&run.candidate.name),
                spelled_others.join(", ")
            ),
        });
    }
    kept
}

/// A candidate's capacity search has one trial per load: identical copies count once (flagged);
/// different trials at one load are a conflict that leaves each of them out — never settled by
/// file order, or by which has more requests.
fn one_trial_per_load<'a>(
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
    flags: &mut Vec<Flag>,
) -> Vec<(&'a str, &'a Run)> {
    let key = |r: &Run| {
        r.trial.as_ref().map(|t| {
            (
                r.candidate.name.clone(),
                t.over.clone(),
                (t.load * 1e6).round() as i64,
            )
        })
    };
    let mut kept = Vec::new();
    for (i, &(file, run)) in runs.iter().enumerate() {
        let Some(k) = key(run) else {
            kept.push((file, run));
            continue;
        };
        let same: Vec<&(&str, &Run)> = runs
            .iter()
            .filter(|(_, r)| key(r) == Some(k.clone()))
            .collect();
        if same.iter().all(|(_, r)| *r == run) {
            match runs[..i].iter().find(|(_, r)| *r == run) {
                Some((first, _)) => flags.push(Flag {
                    code: Code::DuplicateRun,
                    candidate: Some(run.candidate.name.clone()),
                    message: format!("{file} is an identical copy of {first}: counted once"),
                }),
                None => kept.push((file, run)),
            }
            continue;
        }
        let files: Vec<&str> = same.iter().map(|(f, _)| *f).collect();
        excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::Invariant(Invariant::OneTrialPerLoad),
            reason: format!(
                "{} different trials of {} at {} {} ({}): a conflict no file order settles; keep \
                 one",
                files.len(),
                run.candidate.name,
                k.1,
                crate::base::fmt::format_number(k.2 as f64 / 1e6),
                files.join(", ")
            ),
        });
    }
    kept
}
