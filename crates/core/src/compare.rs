//! Which runs are comparable within a profile, and the per-candidate and float-baseline
//! reports built from the comparable ones.

use std::collections::BTreeMap;

use crate::baseline::{self, BaselineReport};
use crate::contract::Profile;
use crate::lineage::LineageReport;
use crate::metric::Metric;
use crate::report::{CandidateReport, Disagreement, Excluded, ProfileReport, SummarySource};
use crate::schema::{EvidenceLevel, Plan, ProfileSpec, Run, RunStatus, WorkloadSpec};
use crate::summary::{summarize, Summary, Thresholds};
use crate::verdict::slo_checks;

/// What every profile's comparison shares.
pub(crate) struct Ctx<'a> {
    pub(crate) plan: Option<(&'a str, &'a Plan)>,
    pub(crate) runs: &'a [(&'a str, &'a Run)],
    pub(crate) lineage: &'a LineageReport,
    pub(crate) quantized_artifact: Option<String>,
}

/// Why a candidate run cannot be compared, or `Ok`.
pub(crate) fn comparable(
    ctx: &Ctx<'_>,
    spec: Option<&ProfileSpec>,
    knob: Option<&str>,
    run: &Run,
    taken: &[&str],
) -> Result<(), String> {
    match run.status {
        RunStatus::Ok => {}
        RunStatus::Failed => {
            return Err(format!(
                "status failed: {}",
                run.failure.as_deref().unwrap_or("no reason given")
            ))
        }
        RunStatus::Partial => {
            let n: usize = run.repeats.iter().map(|r| r.requests.len()).sum();
            return Err(format!(
                "partial run ({n} requests kept): {}",
                run.failure.as_deref().unwrap_or("interrupted")
            ));
        }
    }
    if run.evidence_level == EvidenceLevel::FailedBackendProfile {
        return Err("evidence level failed_backend_profile".into());
    }
    if let Some(want) = &ctx.quantized_artifact {
        if &run.artifact_id != want {
            return Err(format!(
                "artifact {:?}, not the deployed {want:?}",
                run.artifact_id
            ));
        }
    }
    if let Some(spec) = spec {
        let wid = spec.workload.as_ref().and_then(|w| w.id.as_deref());
        if wid.is_some_and(|w| w != run.workload_id) {
            return Err(format!(
                "workload {:?}, the profile's is {:?}",
                run.workload_id,
                wid.unwrap_or("")
            ));
        }
        if let (Some(want), Some(got)) = (
            spec.workload.as_ref(),
            run.profile_spec.as_ref().and_then(|s| s.workload.as_ref()),
        ) {
            let diffs = workload_diffs(want, got);
            if !diffs.is_empty() {
                return Err(format!(
                    "workload differs from the profile: {}",
                    diffs.join(", ")
                ));
            }
        }
    }
    if let (Some(k), Some(rk)) = (knob, run.candidate.knob.as_deref()) {
        if k != rk {
            return Err(format!("varies knob {rk:?}; the plan declares {k:?}"));
        }
    }
    if taken.contains(&run.candidate.name.as_str()) {
        return Err(format!(
            "a second run of candidate {:?} in this profile; the first one loaded is used",
            run.candidate.name
        ));
    }
    if run.repeats.is_empty() && run.reported.is_none() {
        return Err("no requests and no reported summaries".into());
    }
    if !run.repeats.is_empty()
        && run
            .repeats
            .iter()
            .all(|r| r.requests.error.iter().all(Option::is_some))
    {
        return Err("every request failed".into());
    }
    Ok(())
}

fn workload_diffs(want: &WorkloadSpec, got: &WorkloadSpec) -> Vec<String> {
    let mut d = Vec::new();
    let mut cmp = |name: &str, a: Option<String>, b: Option<String>| {
        if a.is_some() && a != b {
            d.push(format!(
                "{name} {} (profile {})",
                b.unwrap_or_else(|| "unset".into()),
                a.unwrap_or_default()
            ));
        }
    };
    let s = |v: Option<i64>| v.map(|x| x.to_string());
    cmp("concurrency", s(want.concurrency), s(got.concurrency));
    cmp("prompt_tokens", s(want.prompt_tokens), s(got.prompt_tokens));
    cmp(
        "max_output_tokens",
        s(want.max_output_tokens),
        s(got.max_output_tokens),
    );
    cmp(
        "requests_per_repeat",
        s(want.requests_per_repeat),
        s(got.requests_per_repeat),
    );
    cmp(
        "request_rate_rps",
        want.request_rate_rps.map(|x| x.to_string()),
        got.request_rate_rps.map(|x| x.to_string()),
    );
    d
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
        let (s, per) = summarize(&run.repeats, th);
        (Some(s), per, SummarySource::Recomputed)
    };
    let disagreements = summary
        .as_ref()
        .map(|s| disagreements(&reported, s))
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
    };
    if let Some(p) = profile {
        c.slo_checks = slo_checks(p, &|m| c.metric(m));
        c.meets_slo = c.slo_checks.iter().all(|x| x.pass);
        c.primary_value = c.metric(p.primary_metric);
        let per: Vec<f64> = c
            .per_repeat
            .iter()
            .filter_map(|s| s.metric(p.primary_metric))
            .collect();
        if per.len() >= 3 {
            c.primary_interval = crate::stats::mean_interval_95(&per);
        }
    }
    c
}

/// Reported values further from the recomputed ones than rounding explains: 0.5% relative, or
/// half a unit of the usual last decimal (0.05 ms, tok/s, req/s; 0.5 MB; 0.0005 for ratios).
fn disagreements(reported: &BTreeMap<String, Option<f64>>, s: &Summary) -> Vec<Disagreement> {
    let mut out = Vec::new();
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
        let tol = (0.005 * c.abs().max(r.abs())).max(abs_tol);
        if (r - c).abs() > tol {
            out.push(Disagreement {
                metric: m.name(),
                reported: r,
                recomputed: c,
            });
        }
    }
    out
}

pub(crate) fn baseline_report(
    spec: Option<&ProfileSpec>,
    th: &Thresholds,
    runs: &[(&str, &Run)],
    report: &mut ProfileReport,
) -> Option<BaselineReport> {
    let wid = spec
        .and_then(|s| s.workload.as_ref())
        .and_then(|w| w.id.clone());
    let mut chosen: Option<(&str, &Run)> = None;
    for &(file, run) in runs {
        let why = if run.status != RunStatus::Ok {
            Some(format!("baseline run status {}", run.status.as_str()))
        } else if wid.as_deref().is_some_and(|w| w != run.workload_id) {
            Some(format!("baseline run of workload {:?}", run.workload_id))
        } else if run.repeats.is_empty() {
            Some("baseline run without raw requests".into())
        } else if chosen.is_some() {
            Some("a second baseline run for this profile; the first one loaded is used".into())
        } else {
            None
        };
        match why {
            Some(reason) => report.excluded.push(Excluded {
                file: file.to_string(),
                candidate: run.candidate.name.clone(),
                reason,
            }),
            None => chosen = Some((file, run)),
        }
    }
    let (file, run) = chosen?;
    let (bs, bper) = summarize(&run.repeats, th);
    let q = report
        .recommended_name
        .as_deref()
        .and_then(|n| report.candidates.iter().find(|c| c.name == n))
        .and_then(|c| {
            c.summary
                .as_ref()
                .map(|s| (c.name.clone(), s, c.per_repeat.as_slice()))
        });
    let rows = baseline::compare(q.as_ref().map(|(_, s, p)| (*s, *p)), (&bs, &bper));
    Some(BaselineReport {
        file: file.to_string(),
        artifact_id: run.artifact_id.clone(),
        compared_with: q.map(|(n, _, _)| n),
        summary: bs,
        rows,
    })
}
