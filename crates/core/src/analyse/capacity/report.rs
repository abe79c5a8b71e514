//! A profile's capacities derived from its trial files, compared, and the verdict when the
//! profile ranks by them.

use super::search::bracket;
use super::trial::{evaluate_trial, usable};
use super::types::{CandidateCapacity, CapacityReport, CapacityStatus, TrialReport};
use super::{load_text, LoadAxis, RankBy, Search, MIN_REQUESTS_PER_STREAM};
use crate::analyse::verdict::ProfileDecision as Decision;
use crate::base::fmt::format_number as fmt_num;
use crate::check::contract::Profile;
use crate::schema::{EvidenceLevel, Run};

/// The capacity of one candidate from its trials.
pub fn derive(
    name: &str,
    search: &Search,
    trials: Vec<TrialReport>,
    excluded: Vec<String>,
) -> CandidateCapacity {
    let mut trials = trials;
    crate::base::order::sort_by(&mut trials, |a, b| {
        a.load.total_cmp(&b.load).then(a.index.cmp(&b.index))
    });
    let outcomes: Vec<(f64, bool)> = trials.iter().map(|t| (t.load, t.pass)).collect();
    let (last_pass, first_fail) = bracket(&outcomes);
    let status = match (last_pass, first_fail) {
        (None, None) => CapacityStatus::NoTrials,
        (None, Some(ff)) if ff <= search.min + 1e-9 => CapacityStatus::BelowMin,
        (Some(lp), None) if lp >= search.max - 1e-9 => CapacityStatus::AtLeastMax,
        (Some(lp), Some(ff)) if ff - lp <= search.tolerance + 1e-9 => CapacityStatus::Found,
        _ => CapacityStatus::Open,
    };
    let binding_at_fail = first_fail.and_then(|ff| {
        let t = trials.iter().find(|t| t.load == ff && !t.pass)?;
        let k = t.checks.iter().find(|k| Some(k.metric) == t.binding)?;
        let floor = k.metric.direction() == crate::base::metric::Direction::HigherIsBetter;
        Some(format!(
            "{} {} {} limit {}",
            k.metric,
            k.value.map_or("not measured".to_string(), fmt_num),
            if floor { "<" } else { ">" },
            fmt_num(k.limit)
        ))
    });
    let passes_above_fail = trials
        .iter()
        .filter(|t| t.pass && first_fail.is_some_and(|ff| t.load > ff))
        .map(|t| t.load)
        .collect();
    let short_loads = trials
        .iter()
        .filter(|t| {
            search.over == LoadAxis::Concurrency
                && (t.requests_sent as f64) < MIN_REQUESTS_PER_STREAM as f64 * t.load
        })
        .map(|t| t.load)
        .collect();
    let marginal_loads = trials
        .iter()
        .filter(|t| t.marginal)
        .map(|t| t.load)
        .collect();
    let real_evidence = !trials.is_empty()
        && trials
            .iter()
            .all(|t| t.evidence_level == EvidenceLevel::RealBackendProfile);
    let text = capacity_text(search, status, last_pass, first_fail);
    let best = trials
        .iter()
        .filter(|t| t.pass && last_pass.is_some_and(|lp| t.load <= lp))
        .filter_map(|t| Some((t.throughput_tps?, t.load)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    CandidateCapacity {
        name: name.to_string(),
        trials,
        excluded,
        last_pass,
        first_fail,
        binding_at_fail,
        status,
        passes_above_fail,
        marginal_loads,
        short_loads,
        real_evidence,
        goodput_tps: best.map(|b| b.0),
        goodput_load: best.map(|b| b.1),
        text,
    }
}

fn capacity_text(s: &Search, status: CapacityStatus, lp: Option<f64>, ff: Option<f64>) -> String {
    let unit = s.over.unit();
    match (status, lp, ff) {
        (CapacityStatus::NoTrials, ..) => "no trials".into(),
        (CapacityStatus::BelowMin, ..) => format!(
            "below {} (the search's min failed)",
            load_text(s.over, s.min)
        ),
        (CapacityStatus::AtLeastMax, Some(lp), _) => format!(
            "at least {} (every load up to max passed)",
            load_text(s.over, lp)
        ),
        (CapacityStatus::Found, Some(lp), Some(ff))
            if s.over == LoadAxis::Concurrency && ff - lp <= 1.0 + 1e-9 =>
        {
            format!("{} ({} fails)", load_text(s.over, lp), fmt_num(ff))
        }
        (_, Some(lp), Some(ff)) => format!("{}–{} {unit}", fmt_num(lp), fmt_num(ff)),
        (_, Some(lp), None) => format!("at least {}", load_text(s.over, lp)),
        (_, None, Some(ff)) => format!("below {}", load_text(s.over, ff)),
        _ => "no trials".into(),
    }
}

/// Whether two capacities can be told apart: one sustained a load the other failed.
pub fn distinct(a: &CandidateCapacity, b: &CandidateCapacity) -> bool {
    match (a.last_pass, b.first_fail, b.last_pass, a.first_fail) {
        (Some(alp), Some(bff), _, _) if alp >= bff => true,
        (_, _, Some(blp), Some(aff)) if blp >= aff => true,
        _ => false,
    }
}

/// Derives a profile's capacities from its trial runs (`(file, run)`, all of this profile).
pub fn capacity_report(
    profile: &Profile,
    search: &Search,
    trial_runs: &[(&str, &Run)],
    order: &[String],
) -> CapacityReport {
    let mut names: Vec<String> = trial_runs
        .iter()
        .map(|r| r.1.candidate.name.clone())
        .collect();
    crate::base::order::sort_by_key(&mut names, |n| {
        order.iter().position(|o| o == n).unwrap_or(usize::MAX)
    });
    names.dedup();
    let mut candidates = Vec::new();
    for name in names {
        let mine: Vec<(&str, &Run)> = trial_runs
            .iter()
            .filter(|r| r.1.candidate.name == name)
            .copied()
            .collect();
        let mut excluded = Vec::new();
        let mut kept = Vec::new();
        // One trial per load is an invariant every trial passed before (`trials_conflict`).
        for (file, run) in mine {
            match usable(search, run) {
                Err(why) => excluded.push(format!("{file}: {why}")),
                Ok(()) => kept.push(evaluate_trial(file, run, profile)),
            }
        }
        candidates.push(derive(&name, search, kept, excluded));
    }
    let span = ((search.max - search.min) / search.tolerance).floor();
    let grid_trials = (span as u32).saturating_add(1);
    let (best, statement) = compare(search, &candidates);
    CapacityReport {
        over: search.over,
        min: search.min,
        max: search.max,
        tolerance: search.tolerance,
        rank_by: search.rank_by,
        nominal_load: search.over.of(&profile.workload),
        candidates,
        grid_trials,
        statement,
        best,
    }
}

fn compare(search: &Search, cands: &[CandidateCapacity]) -> (Option<String>, String) {
    let mut ranked: Vec<&CandidateCapacity> =
        cands.iter().filter(|c| c.last_pass.is_some()).collect();
    let by_capacity = |a: &&CandidateCapacity, b: &&CandidateCapacity| {
        b.last_pass
            .total_cmp_opt(&a.last_pass)
            .then(b.goodput_tps.total_cmp_opt(&a.goodput_tps))
    };
    match search.rank_by {
        RankBy::Goodput => crate::base::order::sort_by(&mut ranked, |a, b| {
            b.goodput_tps
                .total_cmp_opt(&a.goodput_tps)
                .then(by_capacity(a, b))
        }),
        _ => crate::base::order::sort_by(&mut ranked, by_capacity),
    }
    let Some(best) = ranked.first() else {
        return (
            None,
            if cands.is_empty() {
                "no trials".into()
            } else {
                format!(
                    "no candidate met every SLO at any load tried (from {})",
                    load_text(search.over, search.min)
                )
            },
        );
    };
    if search.rank_by == RankBy::Goodput {
        let g = |c: &CandidateCapacity| {
            format!(
                "{} tok/s at {}",
                c.goodput_tps.map_or("–".into(), fmt_num),
                c.goodput_load
                    .map_or("–".into(), |l| load_text(search.over, l))
            )
        };
        let mut s = format!(
            "{} delivers the most output within every SLO: {} (capacity {})",
            best.name,
            g(best),
            best.text
        );
        if let Some(second) = ranked.get(1) {
            s.push_str(&format!(
                "; {}: {} (capacity {}) — one trial each, no interval",
                second.name,
                g(second),
                second.text
            ));
        }
        return (Some(best.name.clone()), s);
    }
    let mut s = format!("{} sustains the most: {}", best.name, best.text);
    if let Some(second) = ranked.get(1) {
        let by = best.last_pass.unwrap_or(0.0) - second.last_pass.unwrap_or(0.0);
        if distinct(best, second) {
            s.push_str(&format!(
                "; {} sustains {} — {} more, told apart (it passed a load {} failed)",
                second.name,
                second.text,
                load_text(search.over, by),
                second.name
            ));
        } else {
            s.push_str(&format!(
                "; {} sustains {} — the two cannot be told apart at this tolerance",
                second.name, second.text
            ));
        }
    }
    (Some(best.name.clone()), s)
}

trait OptCmp {
    fn total_cmp_opt(&self, other: &Self) -> std::cmp::Ordering;
}

impl OptCmp for Option<f64> {
    fn total_cmp_opt(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Some(a), Some(b)) => a.total_cmp(b),
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (None, None) => std::cmp::Ordering::Equal,
        }
    }
}

/// The verdict when a profile ranks by capacity: the candidate that sustains the highest load;
/// `accept` only with real evidence in every trial, a capacity at or above the workload's own
/// load (the traffic the profile is planned for) and a pass there decided by its intervals (not
/// only marginal ones: then `not_enough_data`); `tune` otherwise; `reject` with no trials.
pub fn decide(cap: &CapacityReport) -> (Decision, Option<String>, String) {
    if cap.candidates.is_empty() {
        return (
            Decision::Reject,
            None,
            "no capacity-search trials for this profile".into(),
        );
    }
    let Some(best) = cap
        .best
        .as_ref()
        .and_then(|b| cap.candidates.iter().find(|c| &c.name == b))
    else {
        let why = cap
            .candidates
            .iter()
            .filter_map(|c| {
                c.binding_at_fail
                    .as_ref()
                    .map(|b| format!("{}: {b}", c.name))
            })
            .collect::<Vec<_>>()
            .join("; ");
        return (Decision::Tune, None, format!("{} ({why})", cap.statement));
    };
    let lp = best.last_pass.unwrap_or(0.0);
    if !best.real_evidence {
        return (
            Decision::Tune,
            Some(best.name.clone()),
            format!(
                "{}; not every trial is real-backend evidence, so it cannot be accepted",
                cap.statement
            ),
        );
    }
    if let Some(n) = cap.nominal_load.filter(|&n| lp + 1e-9 < n) {
        return (
            Decision::Tune,
            Some(best.name.clone()),
            format!(
                "{}; below the workload's own load of {}",
                cap.statement,
                load_text(cap.over, n)
            ),
        );
    }
    let at = cap.nominal_load.unwrap_or(lp);
    let firm = best
        .trials
        .iter()
        .any(|t| t.pass && !t.marginal && t.load + 1e-9 >= at && t.load <= lp + 1e-9);
    if !firm {
        return (
            Decision::NotEnoughData,
            Some(best.name.clone()),
            format!(
                "{}; but every pass at or above {} rests on a point estimate whose 95% interval \
                 straddles a limit (marginal): more requests per trial would decide it",
                cap.statement,
                load_text(cap.over, at)
            ),
        );
    }
    let mut why = cap.statement.clone();
    if !best.passes_above_fail.is_empty() {
        why.push_str(&format!(
            "; its trials are not monotone (passed at {} above a failing load): the capacity is the \
             first fail's, the lower",
            best.passes_above_fail
                .iter()
                .map(|&l| load_text(cap.over, l))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    (Decision::Accept, Some(best.name.clone()), why)
}
