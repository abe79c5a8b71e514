//! A profile's capacities derived from its trial files, compared, and the verdict when the
//! profile ranks by them.

use serde::{Deserialize, Serialize};

use super::search::bracket;
use super::trial::{evaluate_trial, usable, TrialReport};
use super::{load_text, LoadAxis, RankBy, Search, MIN_REQUESTS_PER_STREAM};
use crate::contract::Profile;
use crate::fmt::format_number as fmt_num;
use crate::metric::Metric;
use crate::schema::{Decision, EvidenceLevel, Run};

/// How far a candidate's search got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CapacityStatus {
    /// Bracketed within the tolerance.
    Found,
    /// Every load up to `max` passed: the capacity is at least `max`.
    AtLeastMax,
    /// `min` already failed: the capacity is below the range.
    BelowMin,
    /// The bracket is still wider than the tolerance (trial or time budget spent, or stopped).
    Open,
    /// No usable trial.
    NoTrials,
}

/// One candidate's capacity, derived from its trial files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CandidateCapacity {
    /// Candidate name.
    pub name: String,
    /// The usable trials, by load.
    pub trials: Vec<TrialReport>,
    /// Trial runs left out (failed, partial, another workload), with the reason.
    pub excluded: Vec<String>,
    /// The highest passing load below the first failing one.
    pub last_pass: Option<f64>,
    /// The lowest failing load.
    pub first_fail: Option<f64>,
    /// The SLO that failed at `first_fail`, with its value and limit.
    pub binding_at_fail: Option<String>,
    /// How far the search got.
    pub status: CapacityStatus,
    /// Passing trials above the first fail (not used for the capacity; flagged).
    pub passes_above_fail: Vec<f64>,
    /// Trials whose decision rests on a straddling interval.
    pub marginal_loads: Vec<f64>,
    /// Closed-loop trials with fewer than [`MIN_REQUESTS_PER_STREAM`] requests per stream: the
    /// queue may not have reached its steady state, so a pass there is weak evidence.
    #[serde(default)]
    pub short_loads: Vec<f64>,
    /// Every trial's evidence is real.
    pub real_evidence: bool,
    /// The highest output throughput (tokens/s) of a passing trial at or below `last_pass`.
    pub goodput_tps: Option<f64>,
    /// The load of that trial.
    pub goodput_load: Option<f64>,
    /// The capacity in words, e.g. `11–12 streams`.
    pub text: String,
}

/// The capacity of one candidate from its trials.
pub fn derive(
    name: &str,
    search: &Search,
    trials: Vec<TrialReport>,
    excluded: Vec<String>,
) -> CandidateCapacity {
    let mut trials = trials;
    trials.sort_by(|a, b| a.load.total_cmp(&b.load).then(a.index.cmp(&b.index)));
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
        let k = t
            .checks
            .iter()
            .find(|k| Some(&k.metric) == t.binding.as_ref())?;
        let floor = Metric::parse(&k.metric)
            .is_some_and(|m| m.direction() == crate::metric::Direction::HigherIsBetter);
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

/// The capacities of a profile's candidates, and what they say together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CapacityReport {
    /// The axis searched.
    pub over: LoadAxis,
    /// Range and tolerance, as declared.
    pub min: f64,
    /// Highest load.
    pub max: f64,
    /// Bracket width at which a search stops.
    pub tolerance: f64,
    /// How the profile ranks candidates.
    pub rank_by: RankBy,
    /// The load the fixed-load verdict is measured at.
    pub nominal_load: Option<f64>,
    /// One entry per candidate with trials, in plan order.
    pub candidates: Vec<CandidateCapacity>,
    /// Trials a grid over the same range at the same tolerance would need.
    pub grid_trials: u32,
    /// The comparison in words: who sustains most, by what margin, and whether it is distinct.
    pub statement: String,
    /// The candidate that sustains the highest load (none when none passed any trial).
    pub best: Option<String>,
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
    names.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
    names.dedup();
    let mut candidates = Vec::new();
    for name in names {
        let mut trials = Vec::new();
        let mut excluded = Vec::new();
        for (file, run) in trial_runs.iter().filter(|r| r.1.candidate.name == name) {
            match usable(profile, search, run) {
                Err(why) => excluded.push(format!("{file}: {why}")),
                Ok(()) => trials.push(evaluate_trial(file, run, profile)),
            }
        }
        // Two trials at one load (a rerun): keep the one with more requests, say so.
        trials.sort_by(|a, b| {
            a.load
                .total_cmp(&b.load)
                .then(b.requests_sent.cmp(&a.requests_sent))
        });
        let mut kept: Vec<TrialReport> = Vec::new();
        for t in trials {
            match kept.last() {
                Some(k) if (k.load - t.load).abs() < 1e-9 => excluded.push(format!(
                    "{}: a second trial at {} (kept {}, which has more requests)",
                    t.file,
                    load_text(search.over, t.load),
                    k.file
                )),
                _ => kept.push(t),
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
        RankBy::Goodput => ranked.sort_by(|a, b| {
            b.goodput_tps
                .total_cmp_opt(&a.goodput_tps)
                .then(by_capacity(a, b))
        }),
        _ => ranked.sort_by(by_capacity),
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
/// `accept` only with real evidence in every trial and a capacity at or above the workload's own
/// load (the traffic the profile is planned for); `tune` otherwise; `reject` with no trials.
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
    (
        Decision::Accept,
        Some(best.name.clone()),
        cap.statement.clone(),
    )
}
