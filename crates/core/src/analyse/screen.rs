//! The one gate every run of a profile passes before anything is pooled, selected or ranked:
//! the examine-level invariants of the catalogue ([`crate::check::run::examine`]) for each run
//! whatever its origin and role (candidate, capacity trial, float baseline, import, recovered
//! journal), then the invariants between runs (names that read the same). Broken exclude-level
//! invariants leave the run out with the reason; flag-level ones flag it.

use crate::analyse::report::{Code, Excluded, Flag};
use crate::check::invariant::{Invariant, Outcome, Violation};
use crate::check::names::{skeleton, spelled};
use crate::check::run::fingerprint::same_runs;
use crate::check::run::{examine, Expect};
use crate::schema::{Run, Trial};

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

/// Two different runs that hold the same requests (a repeat whose every column is equal, or two
/// requests or more whose gaps between tokens are: `fingerprint::same_runs`): one measurement
/// labelled twice, whole, as a subset or nudged. Both are left out; an identical copy of one
/// run is not this (it is counted once, later).
fn measured_once<'a>(
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
) -> Vec<(&'a str, &'a Run)> {
    let shares = |a: &Run, b: &Run| a != b && same_runs(a, b);
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

/// A candidate's capacity search has one trial per load and one per position in the search
/// (`trial.index`): identical copies count once (flagged); different trials at one load or one
/// position (two searches' trials mixed) are a conflict that leaves each of them out — never
/// settled by file order, or by which has more requests.
fn one_trial_per_load<'a>(
    runs: Vec<(&'a str, &'a Run)>,
    excluded: &mut Vec<Excluded>,
    flags: &mut Vec<Flag>,
) -> Vec<(&'a str, &'a Run)> {
    let mut kept = Vec::new();
    for (i, &(file, run)) in runs.iter().enumerate() {
        let Some(t) = run.trial.as_ref() else {
            kept.push((file, run));
            continue;
        };
        let rival = |r: &Run| {
            let u = r.trial.as_ref()?;
            let same = r.candidate.name == run.candidate.name && u.over == t.over;
            let at_load = (u.load * 1e6).round() == (t.load * 1e6).round();
            (same && r != run && (at_load || u.index == t.index)).then_some(at_load)
        };
        // Each file against this trial: itself or a copy (`None`), not a rival (`Some(None)`),
        // a rival at its load (`Some(Some(true))`) or at its position.
        let against: Vec<(&str, Option<Option<bool>>)> = runs
            .iter()
            .map(|(f, r)| (*f, (*r != run).then(|| rival(r))))
            .collect();
        if against.iter().all(|a| matches!(a.1, None | Some(None))) {
            match runs[..i].iter().find(|(_, r)| *r == run) {
                Some((first, _)) => flags.push(crate::analyse::flags::duplicate(
                    file,
                    first,
                    &run.candidate.name,
                )),
                None => kept.push((file, run)),
            }
            continue;
        }
        excluded.push(Excluded {
            file: file.to_string(),
            candidate: run.candidate.name.clone(),
            code: Code::Invariant(Invariant::OneTrialPerLoad),
            reason: trials_conflict(run, t, &against),
        });
    }
    kept
}

/// Why a trial is left out: the other trials at its load, or else at its position (each file
/// as `one_trial_per_load` weighs it against this trial), named in file order.
fn trials_conflict(run: &Run, t: &Trial, against: &[(&str, Option<Option<bool>>)]) -> String {
    let at_load = against.iter().any(|a| a.1 == Some(Some(true)));
    let files: Vec<&str> = against
        .iter()
        .filter(|a| a.1.is_none() || a.1 == Some(Some(at_load)))
        .map(|a| a.0)
        .collect();
    let n = files.len();
    let name = &run.candidate.name;
    if at_load {
        let load = crate::base::fmt::format_number(t.load);
        format!(
            "{n} different trials of {name} at {} {load} ({}): a conflict no file order \
             settles; keep one",
            t.over,
            files.join(", ")
        )
    } else {
        format!(
            "{n} different trials of {name} at position {} of its {} search ({}): trials of \
             two searches mixed, a conflict no file order settles; keep one search's",
            t.index,
            t.over,
            files.join(", ")
        )
    }
}
