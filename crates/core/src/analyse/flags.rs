//! What qualifies a profile's comparison beyond pass/fail, each a [`Flag`] with a stable code
//! (runs that fall short of the plan are the invariant catalogue's flags): later repeats that are systematically faster than the
//! first (a prompt-cache or warm-up artefact), a cheaper candidate the winner cannot be told
//! apart from, and what to try next after a `tune`.

use crate::analyse::report::{CandidateReport, Code, Flag, ProfileReport};
use crate::analyse::verdict::ProfileDecision as Decision;
use crate::base::fmt::format_number;
use crate::base::metric::{Metric, Quantity, Stat};
use crate::schema::KnobValue;

/// Later repeats whose TTFT median is below this share of the first repeat's are flagged.
const FASTER_SHARE: f64 = 0.5;

fn flag(code: Code, candidate: &str, message: String) -> Flag {
    Flag {
        code,
        candidate: Some(candidate.to_string()),
        message,
    }
}

/// Every later repeat's TTFT median far below the first repeat's: the server answered later
/// repeats from a cache (or the first repeat paid for warm-up), so pooled percentiles mix two
/// populations.
pub(crate) fn repeat_artefact(c: &CandidateReport, flags: &mut Vec<Flag>) {
    let p50 = Metric::Latency(Quantity::Ttft, Stat::P50);
    let per: Vec<f64> = c.per_repeat.iter().filter_map(|s| s.metric(p50)).collect();
    if per.len() < 2 || per.len() != c.per_repeat.len() {
        return;
    }
    let first = per[0];
    if first > 0.0 && per[1..].iter().all(|&v| v < FASTER_SHARE * first) {
        let later: Vec<String> = per[1..].iter().map(|&v| format_number(v)).collect();
        flags.push(flag(
            Code::LaterRepeatsFaster,
            &c.name,
            format!(
                "{}: TTFT p50 {} ms in repeat 1 but {} ms in the later repeats: later repeats \
                 are systematically faster (a prompt-cache or warm-up artefact); its percentiles \
                 mix two populations — re-measure with prompts that do not repeat",
                c.name,
                format_number(first),
                later.join(", ")
            ),
        ));
    }
}

/// Another tool's runs placed in the plan by hand whose file names another model than the
/// artifact they are judged as: one flag per candidate, with the file's words quoted — the
/// placement is the user's claim, which the file does not bear out by name.
pub(crate) fn placed_models<'a>(
    runs: impl Iterator<Item = (&'a str, &'a crate::schema::Run)>,
) -> Vec<Flag> {
    let mut out: Vec<Flag> = Vec::new();
    for (_, run) in runs {
        let Some((im, model)) = run
            .import
            .as_ref()
            .and_then(|i| i.stated_model.as_ref().map(|m| (i, m)))
        else {
            continue;
        };
        let c = &run.candidate.name;
        if model == &run.artifact_id || out.iter().any(|f| f.candidate.as_ref() == Some(c)) {
            continue;
        }
        out.push(Flag {
            code: Code::PlacedModel,
            candidate: Some(c.clone()),
            message: format!(
                "{c} is {}'s file {:?}, placed in the plan by hand: the file names the model \
                 {model:?}, judged here as the deployed {:?} — check that it measured this artifact",
                im.tool, im.file, run.artifact_id
            ),
        });
    }
    out
}

/// The plan's SLOs against those each run was collected under (its `profile_spec.slo`): one
/// flag naming each limit that differs and the values the runs carry instead — the runs
/// are judged by the plan's limits, which is legitimate (the SLOs are the reviewer's) but is
/// not what the collection was planned for.
pub(crate) fn slo_changed<'a>(
    spec: &crate::schema::ProfileSpec,
    runs: impl Iterator<Item = (&'a str, &'a crate::schema::Run)>,
) -> Option<Flag> {
    use std::collections::{BTreeMap, BTreeSet};
    let planned = spec.slo.clone().unwrap_or_default();
    // Limit name → the values the runs were collected under.
    let mut differ: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut runs_differing = 0usize;
    for (_, run) in runs {
        let Some(theirs) = run.profile_spec.as_ref().and_then(|p| p.slo.as_ref()) else {
            continue;
        };
        let mut any = false;
        let names = planned.keys().chain(theirs.keys());
        for name in names.collect::<BTreeSet<_>>() {
            let (a, b) = (planned.get(name), theirs.get(name));
            if a != b {
                any = true;
                let v = b.map_or("unset".into(), |v| format_number(*v));
                differ.entry(name.clone()).or_default().insert(v);
            }
        }
        runs_differing += usize::from(any);
    }
    if differ.is_empty() {
        return None;
    }
    let said: Vec<String> = differ
        .iter()
        .map(|(name, theirs)| {
            let now = planned
                .get(name)
                .map_or("unset".into(), |v| format_number(*v));
            let then: Vec<&str> = theirs.iter().map(String::as_str).collect();
            format!("{name} {now} (collected under {})", then.join(" or "))
        })
        .collect();
    Some(Flag {
        code: Code::SloChanged,
        candidate: None,
        message: format!(
            "the plan's SLOs are not those {runs_differing} run(s) were collected under: {} — \
             the runs are judged by the plan's",
            said.join(", ")
        ),
    })
}

/// `file` is an identical copy of `first` (or the same file given twice): counted once.
pub(crate) fn duplicate(file: &str, first: &str, candidate: &str) -> Flag {
    flag(
        Code::DuplicateRun,
        candidate,
        if file == first {
            format!("{file} was given twice: counted once")
        } else {
            format!("{file} is an identical copy of {first}: counted once")
        },
    )
}

/// Flags that depend on the verdict: a cheaper equivalent of the winner, and after a `tune`
/// the pressure the data shows and what to retest.
pub(crate) fn after_verdict(report: &mut ProfileReport) {
    if let Some(f) = cheaper_equivalent(report) {
        report.flags.push(f);
    }
    if report.decision == Decision::Tune {
        if let Some(f) = next_step(report) {
            report.flags.push(f);
        }
    }
}

fn knob_number(v: Option<&KnobValue>) -> Option<f64> {
    v.and_then(|v| v.to_string().parse::<f64>().ok())
}

/// The runner-up, when the winner cannot be told apart from it and it uses fewer resources.
fn cheaper_equivalent(report: &ProfileReport) -> Option<Flag> {
    let conf = report.confidence.as_ref().filter(|c| !c.distinguishable)?;
    let runner_name = conf.runner_up.as_deref()?;
    let winner = report.candidates.iter().find(|c| c.chosen)?;
    let runner = report
        .candidates
        .iter()
        .find(|c| c.name == runner_name && c.meets_slo)?;
    let mem = |c: &CandidateReport| c.metric(Metric::PEAK_MEMORY);
    let mut cheaper = Vec::new();
    if let (Some(w), Some(r)) = (mem(winner), mem(runner)) {
        // Below 5% the difference is within what one sample of RSS or GPU memory moves.
        if r < 0.95 * w {
            cheaper.push(format!(
                "peak memory {} MB vs {} MB",
                format_number(r),
                format_number(w)
            ));
        }
    }
    if let (Some(w), Some(r)) = (
        knob_number(winner.value.as_ref()),
        knob_number(runner.value.as_ref()),
    ) {
        if r < w {
            cheaper.push(format!(
                "{} {} vs {}",
                report.knob.as_deref().unwrap_or("knob"),
                format_number(r),
                format_number(w)
            ));
        }
    }
    if cheaper.is_empty() {
        return None;
    }
    Some(flag(
        Code::EquivalentCheaper,
        runner_name,
        format!(
            "{runner_name} meets every SLO, cannot be told apart from {} on {}, and is cheaper \
             ({}): an equivalent, cheaper choice",
            winner.name,
            conf.metric,
            cheaper.join(", ")
        ),
    ))
}

/// A kind of pressure the data shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pressure {
    /// Requests wait for a slot.
    Queue,
    /// Requests fail.
    Failures,
    /// Memory is near its limit.
    Memory,
}

/// The pressure behind a `tune` and a concrete retest path.
fn next_step(report: &ProfileReport) -> Option<Flag> {
    let knob = report.knob.as_deref().unwrap_or("the knob");
    let Some(b) = &report.binding_slo else {
        // Feasible but not real evidence, or no primary value: the reason says what to do.
        return None;
    };
    let c = report.candidates.iter().find(|c| c.name == b.candidate)?;
    // What the data shows, each kind with its words: the retest path follows the kind.
    let mut pressure: Vec<(Pressure, String)> = Vec::new();
    let queue = c.metric(Metric::QUEUE_WAIT_P95);
    let ttft = c.metric(Metric::TTFT_P95);
    if let (Some(q), Some(t)) = (queue, ttft) {
        if t > 0.0 && q >= 0.5 * t {
            pressure.push((
                Pressure::Queue,
                format!(
                    "queue wait p95 {} ms is {}% of TTFT p95: requests wait for a slot",
                    format_number(q),
                    format_number(100.0 * q / t)
                ),
            ));
        }
    }
    if let Some(f) = c.metric(Metric::FAILURE_RATE).filter(|&f| f > 0.0) {
        pressure.push((
            Pressure::Failures,
            format!("failure rate {}", format_number(f)),
        ));
    }
    let memory_limit = report.slo.iter().find(|s| s.metric == Metric::PEAK_MEMORY);
    if let (Some(l), Some(m)) = (memory_limit, c.metric(Metric::PEAK_MEMORY)) {
        if m >= 0.9 * l.limit {
            pressure.push((
                Pressure::Memory,
                format!(
                    "peak memory {} MB is near its limit {} MB",
                    format_number(m),
                    format_number(l.limit)
                ),
            ));
        }
    }
    let has = |k: Pressure| pressure.iter().any(|(p, _)| *p == k);
    let retest = if has(Pressure::Queue) {
        format!("retest with a larger {knob} (more parallel slots) or a lower load")
    } else if has(Pressure::Memory) {
        format!("retest with a smaller {knob} or KV-cache budget")
    } else if b.missed_by_ratio.is_some_and(|r| r < 0.1) {
        "the miss is under 10%: retest with more repeats before changing the configuration"
            .to_string()
    } else {
        format!("retest with other {knob} values around {}", b.candidate)
    };
    let pressure: Vec<String> = pressure.into_iter().map(|(_, words)| words).collect();
    let shown = if pressure.is_empty() {
        "no queueing, memory or failure pressure in the data".to_string()
    } else {
        pressure.join("; ")
    };
    Some(flag(
        Code::NextStep,
        &b.candidate,
        format!(
            "{} misses {} (limit {}): {shown}; {retest}",
            b.candidate,
            b.metric,
            format_number(b.limit)
        ),
    ))
}
