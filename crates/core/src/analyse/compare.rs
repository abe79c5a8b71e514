//! Which runs are comparable within a profile, and the per-candidate and float-baseline
//! reports built from the comparable ones.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::analyse::baseline::{self, BaselineReport};
use crate::analyse::report::{
    CandidateReport, Code, Disagreement, Excluded, Flag, ProfileReport, SummarySource,
};
use crate::analyse::summary::{summarize, Summary, Thresholds};
use crate::base::metric::Metric;
use crate::check::contract::Profile;
use crate::check::lineage::LineageReport;
use crate::schema::{EvidenceLevel, Plan, Run, RunStatus};

/// What every profile's comparison shares.
pub(crate) struct Ctx<'a> {
    pub(crate) plan: Option<(&'a str, &'a Plan)>,
    pub(crate) runs: &'a [(&'a str, &'a Run)],
    pub(crate) lineage: &'a LineageReport,
    pub(crate) quantized_artifact: Option<String>,
    /// The float baseline record's artifact.
    pub(crate) baseline_artifact: Option<String>,
    /// Pool different runs of one candidate instead of excluding it (asked for explicitly).
    pub(crate) pool_reruns: bool,
    /// Different plans were loaded: why no verdict is given.
    pub(crate) plan_conflict: Option<String>,
    /// A sharded results tree does not stand for the whole plan: why no verdict is given.
    pub(crate) held: Option<String>,
    /// No lineage record was loaded at all.
    pub(crate) no_records: bool,
    /// Where the runs each candidate report rests on are kept, when asked (by `compare`).
    pub(crate) kept: Option<&'a std::cell::RefCell<Vec<Kept>>>,
    /// The merge of a sharded results tree.
    pub(crate) shards: Option<&'a crate::analyse::shard::types::ShardReport>,
    /// Files that could not be read, each message naming its file.
    pub(crate) refused: &'a [String],
    /// The weight formats the deployment and float-baseline records state.
    pub(crate) formats: [Option<String>; 2],
}

/// The run a candidate's report rests on (a pooled run as pooled), kept for `compare`.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    /// Profile.
    pub(crate) profile: crate::schema::ProfileName,
    /// Candidate name.
    pub(crate) candidate: String,
    /// The run.
    pub(crate) run: Run,
}

/// Why a run that passed every invariant still cannot be compared (it did not finish, or
/// holds no successful request), or `Ok`.
pub(crate) fn comparable(run: &Run) -> Result<(), (Code, String)> {
    status_ok(run)?;
    if run.repeats.is_empty() && run.reported.is_none() {
        return Err((Code::NoData, "no requests and no reported summaries".into()));
    }
    if !run.repeats.is_empty()
        && run
            .repeats
            .iter()
            .all(|r| r.requests.error.iter().all(Option::is_some))
    {
        return Err((Code::AllFailed, "every request failed".into()));
    }
    Ok(())
}

fn status_ok(run: &Run) -> Result<(), (Code, String)> {
    match run.status {
        RunStatus::Ok => {}
        RunStatus::Failed => {
            return Err((
                Code::FailedRun,
                format!(
                    "status failed: {}",
                    run.failure.as_deref().unwrap_or("no reason given")
                ),
            ))
        }
        RunStatus::Partial => {
            let n: usize = run.repeats.iter().map(|r| r.requests.len()).sum();
            return Err((
                Code::PartialRun,
                format!(
                    "partial run ({n} requests kept): {}",
                    run.failure.as_deref().unwrap_or("no reason recorded")
                ),
            ));
        }
    }
    if run.evidence_level == EvidenceLevel::FailedBackendProfile {
        return Err((
            Code::FailedBackend,
            "evidence level failed_backend_profile".into(),
        ));
    }
    Ok(())
}

/// Runs of one role under one profile, grouped by candidate name: byte-identical copies are
/// counted once (flagged), and two different runs of one candidate are a conflict that
/// excludes that candidate with every file named — never resolved by load order. With
/// `pool`, asked for explicitly, finished runs of one workload are pooled instead: their
/// repeats become the repeats of one run (flagged `pooled_runs`, files named).
pub(crate) fn distinct_runs<'a>(
    runs: &[(&'a str, &'a Run)],
    pool: bool,
    flags: &mut Vec<Flag>,
    excluded: &mut Vec<Excluded>,
) -> Vec<(String, Cow<'a, Run>)> {
    let mut names: Vec<&str> = runs
        .iter()
        .map(|(_, r)| r.candidate.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let mut kept: Vec<(&str, &Run)> = Vec::new();
        for &(file, run) in runs.iter().filter(|(_, r)| r.candidate.name == name) {
            match kept.iter().find(|(_, k)| *k == run) {
                Some((first, _)) => flags.push(crate::analyse::flags::duplicate(file, first, name)),
                None => kept.push((file, run)),
            }
        }
        if kept.len() == 1 {
            out.push((kept[0].0.to_string(), Cow::Borrowed(kept[0].1)));
            continue;
        }
        // Deterministic whatever the load order: by file name.
        crate::base::order::sort_by(&mut kept, |a, b| a.0.cmp(b.0));
        let files: Vec<&str> = kept.iter().map(|(f, _)| *f).collect();
        let unpoolable = poolable(&kept).err();
        if pool && unpoolable.is_none() {
            flags.push(Flag {
                code: Code::PooledRuns,
                candidate: Some(name.to_string()),
                message: format!(
                    "{} runs of {name:?} pooled as asked ({}): their repeats, from different \
                     server instances, are treated as repeats of one run",
                    kept.len(),
                    files.join(", ")
                ),
            });
            out.push((files.join(" + "), Cow::Owned(pooled(&kept))));
            continue;
        }
        let how = match (pool, unpoolable) {
            (true, Some(why)) => format!("they cannot be pooled: {why}"),
            _ => "none is used; keep the one to compare and move the others away, or pool \
                  them explicitly (`sloscope analyze --pool-reruns`)"
                .to_string(),
        };
        for (file, run) in &kept {
            excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: Code::ConflictingRuns,
                reason: format!(
                    "{} different runs of {name:?} in this profile ({}): {how}",
                    kept.len(),
                    files.join(", ")
                ),
            });
        }
    }
    out
}

/// Whether runs of one candidate can be pooled: all finished, one workload, one knob value,
/// one artifact and one evidence level.
fn poolable(kept: &[(&str, &Run)]) -> Result<(), String> {
    let (f0, r0) = kept[0];
    for (f, r) in &kept[1..] {
        let differs = if r.status != RunStatus::Ok || r0.status != RunStatus::Ok {
            Some("a run that did not finish")
        } else if r.workload_id != r0.workload_id || r.profile_spec != r0.profile_spec {
            Some("another workload")
        } else if r.candidate != r0.candidate {
            Some("another knob value")
        } else if r.artifact_id != r0.artifact_id {
            Some("another artifact")
        } else if r.evidence_level != r0.evidence_level || r.source != r0.source {
            Some("another evidence level or source")
        } else {
            None
        };
        if let Some(d) = differs {
            return Err(format!("{f} and {f0} differ ({d})"));
        }
    }
    Ok(())
}

/// One run holding every repeat of `kept`, renumbered in file order.
pub(crate) fn pooled(kept: &[(&str, &Run)]) -> Run {
    let mut run = kept[0].1.clone();
    run.repeats = kept
        .iter()
        .flat_map(|(_, r)| r.repeats.iter().cloned())
        .collect();
    for (i, rep) in run.repeats.iter_mut().enumerate() {
        rep.index = i as u32;
    }
    run.reported = None;
    // Runs of different times have no one window; each was held to its own before pooling.
    run.started_at = None;
    run.finished_at = None;
    run
}

pub(crate) fn candidate_report(
    file: &str,
    run: &Run,
    profile: Option<&Profile>,
    th: &Thresholds,
) -> CandidateReport {
    let reported = run.reported.clone().unwrap_or_default();
    let (summary, per_repeat, source) = if run.repeats.is_empty() {
        (None, Vec::new(), SummarySource::Reported)
    } else {
        let (s, per) = summarize_believed(run, th);
        (Some(s), per, SummarySource::Recomputed)
    };
    let disagreements = summary
        .as_ref()
        .map(|s| disagreements(&reported, s, run))
        .unwrap_or_default();
    let mut c = CandidateReport {
        name: run.candidate.name.clone(),
        file: file.to_string(),
        knob: run.candidate.knob.clone(),
        value: run.candidate.value.clone(),
        evidence_level: run.evidence_level,
        source,
        repeats: run.repeats.len() as u32,
        summary,
        per_repeat,
        reported,
        disagreements,
        slo_checks: Vec::new(),
        meets_slo: false,
        primary_value: None,
        primary_interval: None,
        chosen: false,
        cost_per_million_output_tokens_usd: None,
        notes: run_notes(run),
    };
    if let Some(p) = profile {
        c.slo_checks = p
            .slo
            .iter()
            .map(|&(m, limit)| {
                let value = c.metric(m);
                let decided = match value {
                    Some(v) => {
                        let b = crate::analyse::evidence::basis(run, &c.per_repeat, m);
                        Some(crate::analyse::evidence::decide(&b, m, v, limit))
                    }
                    None => by_neighbours(&c, m, limit),
                };
                crate::analyse::verdict::SloCheck::new(m, limit, value, decided)
            })
            .collect();
        c.meets_slo = c.slo_checks.iter().all(|x| x.pass);
        c.primary_value = c.metric(p.primary_metric);
        c.primary_interval = metric_interval(run, &c, p.primary_metric);
    }
    c
}

/// A run's summaries, pooled and per repeat, with what its data cannot vouch for left `null`:
/// GPU energy that is not energy the recorded hardware drew (`energy_bounded`), a KV-cache fill
/// that is not a share (`shares_bounded`).
pub(crate) fn summarize_believed(run: &Run, th: &Thresholds) -> (Summary, Vec<Summary>) {
    let (mut s, mut per) = summarize(&run.repeats, th);
    if crate::check::run::signals::energy_doubt(run).is_some() {
        for x in std::iter::once(&mut s).chain(per.iter_mut()) {
            x.gpu_energy_j = None;
            x.energy_per_output_token_j = None;
            x.mean_gpu_power_w = None;
        }
    }
    if crate::check::run::signals::share_doubt(run).is_some() {
        for x in std::iter::once(&mut s).chain(per.iter_mut()) {
            x.kv_cache_usage_max = None;
        }
    }
    (s, per)
}

/// A percentile a run does not state, decided by those it does (another tool's summary that
/// gives p50 and p99 but no p95): percentiles are ordered, so a stated lower one past the
/// limit is a miss, a stated higher one within it a pass — as observed, said which decided.
/// `None` (undecided) when neither does.
fn by_neighbours(
    c: &CandidateReport,
    m: Metric,
    limit: f64,
) -> Option<crate::analyse::evidence::Decided> {
    use crate::base::metric::{Direction, Stat};
    let Metric::Latency(q, stat) = m else {
        return None;
    };
    let rank = |s: Stat| match s {
        Stat::P50 => Some(50),
        Stat::P90 => Some(90),
        Stat::P95 => Some(95),
        Stat::P99 => Some(99),
        Stat::Max => Some(100),
        Stat::Mean => None,
    };
    let want = rank(stat)?;
    if m.direction() != Direction::LowerIsBetter {
        return None;
    }
    let stated = |s: Stat| {
        c.metric(Metric::Latency(q, s))
            .map(|v| (Metric::Latency(q, s), v))
    };
    let below = Stat::ALL
        .into_iter()
        .filter(|s| rank(*s).is_some_and(|r| r < want))
        .filter_map(stated)
        .find(|(_, v)| *v > limit);
    let above = Stat::ALL
        .into_iter()
        .filter(|s| rank(*s).is_some_and(|r| r > want))
        .filter_map(stated)
        .find(|(_, v)| *v <= limit);
    let (outcome, (by, v), side) = match (below, above) {
        (Some(b), _) => (
            crate::analyse::evidence::SloOutcome::Fail,
            b,
            "already past the limit",
        ),
        (None, Some(a)) => (
            crate::analyse::evidence::SloOutcome::Pass,
            a,
            "within the limit",
        ),
        (None, None) => return None,
    };
    Some(crate::analyse::evidence::Decided {
        outcome,
        bounds: [None, None],
        needed_requests: None,
        needed_repeats: None,
        basis: format!(
            "as the tool reported it: no {m} stated, but its {by} ({}) is {side}, and percentiles are ordered",
            crate::base::fmt::format_number(v)
        ),
    })
}

/// The provenance of an imported run, then the run's notes.
fn run_notes(run: &Run) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(i) = &run.import {
        let sha: String = i.sha256.chars().take(12).collect();
        out.push(format!(
            "imported from {}{} ({}): {}{}, sha256 {sha}…; the tool's workload: {}",
            i.tool,
            i.tool_version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            i.format,
            i.file,
            i.benchmark
                .map(|b| format!(" benchmark {b}"))
                .unwrap_or_default(),
            i.workload.description.as_deref().unwrap_or("not stated")
        ));
    }
    out.extend(run.notes.iter().cloned());
    out
}

/// The 95% interval of `m` for a candidate's run ([`crate::analyse::evidence`]): `None` for a
/// figure with no sampling bound (a maximum, a peak, a tool's reported summary).
pub(crate) fn metric_interval(
    run: &Run,
    c: &CandidateReport,
    m: Metric,
) -> Option<crate::base::stats::Interval> {
    let value = c.metric(m)?;
    let b = crate::analyse::evidence::basis(run, &c.per_repeat, m);
    crate::analyse::evidence::interval(&b, m, value)
}

/// Reported values further from the recomputed ones than rounding explains: 0.5% relative, or
/// half a unit of the usual last decimal (0.05 ms, tok/s, req/s; 0.5 MB; 0.0005 for ratios). A
/// tool whose percentiles follow another rule than numpy's linear interpolation has its figure
/// checked by its own rule too (on the same requests): only a figure neither rule gives is a
/// disagreement.
fn disagreements(
    reported: &BTreeMap<String, Option<f64>>,
    s: &Summary,
    run: &Run,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let rule = run
        .import
        .as_ref()
        .map(|i| crate::read::import::registry::percentile_rule(&i.tool));
    for (k, v) in reported {
        let (Some(m), Some(r)) = (Metric::parse(k), *v) else {
            continue;
        };
        let Some(c) = s.metric(m) else { continue };
        let abs_tol = match m.unit() {
            "MB" => 0.51,
            "" => 0.000_51,
            _ => 0.051,
        };
        let off = |c: f64| (r - c).abs() > (0.005 * c.abs().max(r.abs())).max(abs_tol);
        let by_tool = rule
            .and_then(|rule| tool_percentile(run, m, rule))
            .is_some_and(|t| !off(t));
        if off(c) && !by_tool {
            out.push(Disagreement {
                metric: m,
                reported: r,
                recomputed: c,
            });
        }
    }
    out
}

/// A latency percentile of `m` over every successful request of `run`, by `rule` (for a tool
/// that does not interpolate); `None` for other metrics and for numpy's own rule.
fn tool_percentile(
    run: &Run,
    m: Metric,
    rule: crate::read::import::registry::PercentileRule,
) -> Option<f64> {
    use crate::base::metric::Stat;
    let Metric::Latency(q, stat) = m else {
        return None;
    };
    let p = match stat {
        Stat::P50 => 50.0,
        Stat::P90 => 90.0,
        Stat::P95 => 95.0,
        Stat::P99 => 99.0,
        Stat::Mean | Stat::Max => return None,
    };
    let mut values: Vec<f64> = run
        .repeats
        .iter()
        .flat_map(|r| crate::analyse::evidence::request_values(&r.requests, q))
        .collect();
    values.sort_by(f64::total_cmp);
    rule.percentile(&values, p)
}

/// The float baseline's report: its one usable run (the invariants passed, pooled reruns
/// passing them again) beside the chosen candidate.
pub(crate) fn baseline_report(
    expect: &crate::check::run::Expect<'_>,
    th: &Thresholds,
    (runs, quantized): (&[(&str, &Run)], Option<&Run>),
    pool: bool,
    report: &mut ProfileReport,
) -> Option<BaselineReport> {
    let runs = distinct_runs(runs, pool, &mut report.flags, &mut report.excluded);
    let mut eligible: Vec<(&str, &Run)> = Vec::new();
    for (file, run) in &runs {
        let pooled = matches!(run, Cow::Owned(_));
        let (file, run) = (file.as_str(), &**run);
        if pooled {
            let pooled_expect = crate::check::run::Expect {
                pooled: true,
                ..*expect
            };
            let found = crate::check::run::examine(run, &pooled_expect);
            let (ex, fl) = (&mut report.excluded, &mut report.flags);
            if !crate::analyse::screen::apply(file, run, found, ex, fl) {
                continue;
            }
        }
        let why = if run.status != RunStatus::Ok {
            Some(format!("baseline run status {}", run.status.as_str()))
        } else if run.repeats.is_empty() {
            Some("baseline run without raw requests".into())
        } else {
            None
        };
        match why {
            Some(reason) => report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: Code::BaselineNotUsed,
                reason,
            }),
            None => eligible.push((file, run)),
        }
    }
    if eligible.len() > 1 {
        let files: Vec<&str> = eligible.iter().map(|(f, _)| *f).collect();
        for (file, run) in &eligible {
            report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                code: Code::ConflictingRuns,
                reason: format!(
                    "{} different float-baseline runs in this profile ({}): none is used",
                    eligible.len(),
                    files.join(", ")
                ),
            });
        }
        return None;
    }
    let chosen = eligible.pop();
    let (file, run) = chosen?;
    let (bs, bper) = summarize_believed(run, th);
    let q = report
        .recommended_name
        .as_deref()
        .and_then(|n| report.candidates.iter().find(|c| c.name == n))
        .and_then(|c| {
            c.summary
                .as_ref()
                .map(|s| (c.name.clone(), s, c.per_repeat.as_slice()))
        });
    use crate::analyse::regression::change::Measured;
    let side = q.as_ref().zip(quantized).map(|((_, s, per), r)| {
        (
            *s,
            Measured {
                run: r,
                per_repeat: per,
            },
        )
    });
    let rows = baseline::compare(
        side,
        (
            &bs,
            Measured {
                run,
                per_repeat: &bper,
            },
        ),
    );
    Some(BaselineReport {
        file: file.to_string(),
        artifact_id: run.artifact_id.clone(),
        compared_with: q.map(|(n, _, _)| n),
        summary: bs,
        rows,
    })
}
