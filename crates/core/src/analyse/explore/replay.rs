//! A profile's configuration search recomputed from its trial files: the search is replayed
//! step by step, each trial file must be the step the replay asks for (its configuration, its
//! purpose, its requests), and each trial's outcome is recomputed from its requests, pooled
//! with the configuration's earlier trials as the search pools them. A file the replay does not
//! ask for (another search's, a trial edited, one out of order) refuses the whole search: its
//! record would contradict its trials. The collector resumes an interrupted search from the
//! same replay, so what it does next is what the analysis expects.

use std::collections::BTreeMap;

pub use super::record::{measured, FrontPoint, SearchReport, SearchStatus, TrialRow};
use super::{Estimate, Evidence, Explorer, Outcome, Purpose, Settings, SloEstimate, Step, WALK};
use crate::analyse::compare::{candidate_report, metric_interval, pooled};
use crate::analyse::summary::Thresholds;
use crate::base::metric::{Direction, Metric};
use crate::check::contract::Profile;
use crate::check::space::{Config, Space};
use crate::schema::{KnobValue, Run, RunStatus, SpaceSpec};

/// Seed of a search whose plan gives none.
pub const DEFAULT_SEED: u64 = 7;

/// The settings of `spec`'s search of `profile` (the same in the collector and the analysis).
pub fn settings_for(space: &Space, spec: &SpaceSpec, profile: &Profile) -> Settings {
    let repeat = profile.workload.requests_per_repeat.unwrap_or(1).max(1) as u64;
    Settings::new(
        space,
        &spec.budget,
        repeat,
        spec.seed.unwrap_or(DEFAULT_SEED),
    )
}

/// A search of `spec` for `profile`, before any trial.
pub fn explorer_for(spec: &SpaceSpec, profile: &Profile) -> Result<Explorer, String> {
    let space = Space::new(spec).map_err(|e| e.join("; "))?;
    let settings = settings_for(&space, spec, profile);
    Ok(Explorer::new(space, profile.primary_metric, settings))
}

/// What trial `this` of `config` came to for `profile`: infeasible when its server did not
/// serve it (a failed run, with its failure), else the evidence of its requests — pooled with
/// `earlier` (the configuration's earlier trials but confirmations) unless it is a
/// confirmation. `None` for a partial run (the search stopped there).
pub fn trial_outcome(
    this: (&str, &Run),
    purpose: Purpose,
    earlier: &[(&str, &Run)],
    profile: &Profile,
) -> Option<Outcome> {
    match this.1.status {
        RunStatus::Partial => return None,
        RunStatus::Failed => {
            return Some(Outcome::Infeasible {
                reason: this.1.failure.as_deref().map_or_else(
                    || "the run failed and says not why".into(),
                    |f| f.split_whitespace().collect::<Vec<_>>().join(" "),
                ),
            })
        }
        RunStatus::Ok => {}
    }
    let mut kept: Vec<(&str, &Run)> = Vec::new();
    if purpose != Purpose::Confirm {
        kept.extend(earlier.iter().filter(|(_, r)| r.status == RunStatus::Ok));
    }
    kept.push(this);
    let run = pooled(&kept);
    Some(Outcome::Measured {
        evidence: evidence(this.0, &run, profile),
    })
}

/// The trials of `config` among `trials` that a new trial of it is pooled with (all but
/// confirmations, which stand alone).
pub fn pooled_with<'a>(
    space: &Space,
    trials: &[(&'a str, &'a Run)],
    config: &Config,
) -> Vec<(&'a str, &'a Run)> {
    trials
        .iter()
        .copied()
        .filter(|(_, r)| {
            r.search.as_ref().is_some_and(|s| {
                s.purpose != Purpose::Confirm && space.config_of(&s.config).as_ref() == Some(config)
            })
        })
        .collect()
}

/// The evidence of one (pooled) run for the search: the primary metric and every SLO, each
/// with the 95 % interval the verdict uses.
fn evidence(file: &str, run: &Run, profile: &Profile) -> Evidence {
    let th = Thresholds::from_slo(&profile.slo);
    let c = candidate_report(file, run, Some(profile), &th);
    let estimate = |m: Metric, v: f64| {
        let i = metric_interval(run, &c, m);
        Estimate {
            value: v,
            lo: i.as_ref().and_then(|i| i.low),
            hi: i.as_ref().and_then(|i| i.high),
        }
    };
    Evidence {
        requests: run.repeats.iter().map(|r| r.requests.len() as u64).sum(),
        primary: c.primary_value.map(|v| estimate(profile.primary_metric, v)),
        slo: c
            .slo_checks
            .iter()
            .map(|k| SloEstimate {
                metric: k.metric,
                limit: k.limit,
                estimate: k.value.map(|v| estimate(k.metric, v)),
                decided: k.value.map(|_| k.outcome),
            })
            .collect(),
    }
}

/// Replays `profile`'s search of `spec` from its trial runs (each with `search` set); returns
/// the search as far as the trials take it (for the collector to go on from) and its report.
pub fn replay(
    spec: &SpaceSpec,
    profile: &Profile,
    runs: &[(&str, &Run)],
) -> Result<(Explorer, SearchReport), String> {
    let mut e = explorer_for(spec, profile)?;
    let mut trials: Vec<(&str, &Run)> = runs
        .iter()
        .copied()
        .filter(|(_, r)| r.search.is_some())
        .collect();
    crate::base::order::sort_by_key(&mut trials, |(f, r)| {
        (r.search.as_ref().map_or(0, |s| s.index), *f)
    });
    let mut rows = Vec::new();
    let walk = walk_of(&trials);
    e = e.with_walk(*walk.as_ref().unwrap_or(&WALK));
    let mut problem = claimed_twice(&trials).or(walk.err());
    let mut status = match problem {
        Some(_) => SearchStatus::Refused,
        None => SearchStatus::Complete,
    };
    if status == SearchStatus::Refused {
        trials.clear();
    }
    for (i, &(file, run)) in trials.iter().enumerate() {
        match replay_one(&mut e, i, (file, run), &trials[..i], profile) {
            Ok(row) => rows.push(row),
            Err(Stop::Incomplete(why)) => {
                status = SearchStatus::Incomplete;
                problem = Some(why);
                break;
            }
            Err(Stop::Refused(why)) => {
                status = SearchStatus::Refused;
                problem = Some(why);
                break;
            }
        }
    }
    if status == SearchStatus::Complete && e.next() != Step::Done {
        status = SearchStatus::Incomplete;
        problem = Some(format!(
            "stopped after {} of its steps: the search asks for more (an interrupted search \
             resumes with the same --out)",
            rows.len()
        ));
    }
    let report = SearchReport {
        status,
        problem,
        space: super::budget_line(e.space(), &spec.budget),
        knobs: e.space().knobs.iter().map(|k| k.name.clone()).collect(),
        primary: e.primary(),
        settings: e.settings().clone(),
        result: e.result(),
        front: super::record::front(&rows, e.primary().direction() == Direction::HigherIsBetter),
        trials: rows,
    };
    Ok((e, report))
}

/// Two different trial files at one position of the search (two searches' trials mixed, or a
/// trial copied and edited): the search that ran had one.
fn claimed_twice(sorted: &[(&str, &Run)]) -> Option<String> {
    sorted.windows(2).find_map(|w| {
        let (a, b) = (w[0].1.search.as_ref()?, w[1].1.search.as_ref()?);
        (a.index == b.index).then(|| {
            format!(
                "{} and {} are both trial {} of the search: one search runs one trial there                  (two searches' trials mixed, or a trial copied)",
                w[0].0, w[1].0, a.index
            )
        })
    })
}

/// The walk revision the trials were chosen by (a new search's: this build's), or why they
/// cannot be replayed: a revision this build does not know, or trials of two revisions.
fn walk_of(sorted: &[(&str, &Run)]) -> Result<u32, String> {
    let walk = |r: &Run| r.search.as_ref().and_then(|s| s.walk).unwrap_or(1);
    let Some(&(first, run)) = sorted.first() else {
        return Ok(WALK);
    };
    let w = walk(run);
    if !(1..=WALK).contains(&w) {
        return Err(format!(
            "{first}: search.walk: {w}: expected a walk revision from 1 to {WALK} (a newer \
             sloscope's search, or an edited trial)"
        ));
    }
    match sorted.iter().find(|(_, r)| walk(r) != w) {
        Some((f, r)) => Err(format!(
            "{f}: search.walk: {}: expected {w}, the walk of {first} (one search runs one walk: \
             two searches' trials mixed, or a trial edited)",
            walk(r)
        )),
        None => Ok(w),
    }
}

enum Stop {
    Incomplete(String),
    Refused(String),
}

/// Checks trial `i` against the step the search asks for and records its outcome.
fn replay_one(
    e: &mut Explorer,
    i: usize,
    (file, run): (&str, &Run),
    before: &[(&str, &Run)],
    profile: &Profile,
) -> Result<TrialRow, Stop> {
    let Some(step) = run.search.as_ref() else {
        return Err(Stop::Refused(format!("{file}: not a search trial")));
    };
    let Step::Launch {
        config,
        requests,
        purpose,
    } = e.next()
    else {
        return Err(Stop::Refused(format!(
            "{file}: trial {} is past the search's end (it had ended after {i} trials): the \
             trials are of another search, or added",
            step.index
        )));
    };
    if step.index as usize != i {
        return Err(Stop::Incomplete(format!(
            "trial {i} is missing (the next file, {file}, is trial {})",
            step.index
        )));
    }
    let got = e.space().config_of(&step.config);
    if got.as_ref() != Some(&config) || step.purpose != purpose || step.requests != requests {
        return Err(Stop::Refused(format!(
            "{file}: trial {i} measured {} ({}, {} requests); the search replayed from the trials \
             before it asks for {} ({}, {requests} requests): the trials contradict the search",
            got.as_ref()
                .map_or_else(|| describe(&step.config), |c| e.space().name(c)),
            step.purpose.as_str(),
            step.requests,
            e.space().name(&config),
            purpose.as_str()
        )));
    }
    let earlier = pooled_with(e.space(), before, &config);
    let Some(outcome) = trial_outcome((file, run), purpose, &earlier, profile) else {
        return Err(Stop::Incomplete(format!(
            "{file}: trial {i} is partial ({}): the search stopped there",
            run.failure.as_deref().unwrap_or("interrupted")
        )));
    };
    let mut row = row(e, i, file, &config, purpose, requests, &outcome);
    if row.infeasible.is_none() {
        row.peak_memory_mb = crate::analyse::summary::peak_memory_mb(&run.repeats);
    }
    e.record(config, purpose, requests, outcome);
    Ok(row)
}

fn describe(values: &BTreeMap<String, KnobValue>) -> String {
    let parts: Vec<String> = values.iter().map(|(k, v)| format!("{k}-{v}")).collect();
    format!("{} (not a configuration of the space)", parts.join("."))
}

fn row(
    e: &Explorer,
    i: usize,
    file: &str,
    config: &Config,
    purpose: Purpose,
    requests: u64,
    outcome: &Outcome,
) -> TrialRow {
    let (primary, meets_all, infeasible) = match outcome {
        Outcome::Measured { evidence } => (evidence.primary, Some(evidence.meets_all()), None),
        Outcome::Infeasible { reason } => (None, None, Some(reason.clone())),
    };
    TrialRow {
        index: i as u32,
        name: e.space().name(config),
        config: e.space().values(config).into_iter().collect(),
        purpose,
        requests,
        file: file.to_string(),
        primary,
        meets_all,
        infeasible,
        peak_memory_mb: None,
    }
}
