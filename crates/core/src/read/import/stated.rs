//! A plan stated in the page for other tools' files that came without one: per profile the
//! primary metric and the SLOs the reviewer states, per file the profile and candidate it
//! measured. The profile's workload is the one its first file states (the tool's own words),
//! so every other file placed under it is held to that workload as `sloscope import --plan`
//! holds a file to a plan's; what the files do not state cannot be made up, so a file that
//! states no prompt or output length, or no load, cannot define a profile (load a plan that
//! defines it instead). The result is an ordinary plan, read and checked like a dropped one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::{
    Candidate, ForeignWorkload, Kind, KnobValue, Plan, ProfileSpec, Run, WorkloadSpec,
};

/// One profile's SLOs as stated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatedProfile {
    /// `latency`, `balanced` or `throughput`.
    pub name: String,
    /// The metric candidates are ranked by.
    pub primary_metric: String,
    /// Metric name → limit (a ceiling, or a floor for higher-is-better metrics).
    pub slo: BTreeMap<String, f64>,
}

/// Where one file goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatedPlace {
    /// The file's name as loaded.
    pub file: String,
    /// The profile it measured.
    pub profile: String,
    /// The candidate it measured (a plain token: it becomes a run's candidate name).
    pub candidate: String,
}

/// What the reviewer stated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// The profiles judged, with their SLOs.
    pub profiles: Vec<StatedProfile>,
    /// Each file's place.
    pub places: Vec<StatedPlace>,
}

/// The name every stated plan carries, so a reader of the report sees where it came from.
pub const STATED_PLAN_NAME: &str = "stated in the page for other tools' files";

/// The knob a stated plan's candidates vary: which file measured what.
pub const STATED_KNOB: &str = "candidate";

/// The plan the statement makes of `files` (each file's runs as read without a plan). The
/// error names the file or profile and what is missing.
pub fn stated_plan(st: &Statement, files: &[(&str, &[(String, Run)])]) -> Result<Plan, String> {
    if st.places.is_empty() {
        return Err("no file was given a profile and candidate".into());
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    for p in &st.places {
        plain(&p.candidate)
            .map_err(|why| format!("{}: candidate {:?}: {why}", p.file, p.candidate))?;
        if !st.profiles.iter().any(|s| s.name == p.profile) {
            return Err(format!(
                "{}: profile {:?} has no SLOs stated",
                p.file, p.profile
            ));
        }
        if !candidates.iter().any(|c| c.name == p.candidate) {
            candidates.push(Candidate {
                name: p.candidate.clone(),
                value: KnobValue::Text(p.candidate.clone()),
            });
        }
    }
    let mut profiles = Vec::new();
    for s in &st.profiles {
        let Some(first) = st.places.iter().find(|p| p.profile == s.name) else {
            continue;
        };
        let runs_of = |file: &str| files.iter().find(|(name, _)| *name == file).map(|f| f.1);
        let runs = runs_of(&first.file).ok_or_else(|| format!("{}: not loaded", first.file))?;
        let all: Vec<&Run> = st
            .places
            .iter()
            .filter(|p| p.profile == s.name)
            .filter_map(|p| runs_of(&p.file))
            .flat_map(|runs| runs.iter().map(|r| &r.1))
            .collect();
        let spec = ProfileSpec {
            name: Some(s.name.clone()),
            workload: Some(workload(&first.file, &s.name, runs, &all)?),
            primary_metric: Some(s.primary_metric.clone()),
            slo: Some(s.slo.clone()),
            search: None,
        };
        crate::check::contract::validate_profile(&spec).map_err(|issues| {
            let said: Vec<String> = issues
                .iter()
                .map(|p| format!("{}: {}", p.field, p.message))
                .collect();
            format!("profile {}: {}", s.name, said.join("; "))
        })?;
        profiles.push(spec);
    }
    Ok(Plan {
        kind: Kind::Plan,
        schema_version: crate::schema::SCHEMA_VERSION.into(),
        name: Some(STATED_PLAN_NAME.into()),
        knob: STATED_KNOB.into(),
        candidates,
        profiles,
        gpu_hour_usd: None,
        gpus_per_server: None,
        baseline: None,
        gate: None,
        space: None,
        left_out: None,
        file_sha256: Default::default(),
    })
}

/// A candidate name is a plain token, as a plan's must be (it names files and reports).
fn plain(name: &str) -> Result<(), &'static str> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-');
    if name.is_empty() {
        Err("empty: expected a name")
    } else if name.chars().count() > 64 {
        Err("longer than 64 characters")
    } else if name.starts_with(['.', '-']) || !name.chars().all(ok) {
        Err("expected letters, digits, `.`, `_`, `+` or `-`, not starting with `.` or `-`")
    } else {
        Ok(())
    }
}

/// The workload `file`'s first benchmark states, as a profile's: its load, lengths and
/// request count, one repeat. A length it does not state is another file's under the profile
/// that does, else what the profile's requests recorded (the median prompt, the longest
/// output), and the workload's id says so; what is neither stated nor recorded is an error
/// naming the field.
fn workload(
    file: &str,
    profile: &str,
    runs: &[(String, Run)],
    all: &[&Run],
) -> Result<WorkloadSpec, String> {
    let (_, run) = runs
        .first()
        .ok_or_else(|| format!("{file}: holds no benchmark"))?;
    let stated = run
        .import
        .as_ref()
        .map(|i| &i.workload)
        .ok_or_else(|| format!("{file}: not another tool's file with a stated workload"))?;
    let need = |v: Option<u32>, field: &str, what: &str| {
        v.map(i64::from).ok_or_else(|| {
            format!(
                "{file} states no {what} (`{field}`) and records none: the profile's workload \
                 is what its first file states; load a plan that defines the {profile} profile \
                 instead"
            )
        })
    };
    let others: Vec<&ForeignWorkload> = all
        .iter()
        .filter_map(|r| r.import.as_ref())
        .map(|i| &i.workload)
        .collect();
    // Every file's requests under the profile: no file's outputs run past the cap so made.
    let recorded = |pick: fn(&crate::schema::RequestColumns) -> &Vec<Option<u32>>| {
        let mut v: Vec<u32> = all
            .iter()
            .flat_map(|r| &r.repeats)
            .flat_map(|r| pick(&r.requests).iter().flatten().copied())
            .collect();
        v.sort_unstable();
        v
    };
    // A length the first file leaves unstated, another file under the profile may state.
    let prompt_stated = stated
        .prompt_tokens
        .or(others.iter().find_map(|w| w.prompt_tokens));
    let output_stated = stated
        .max_output_tokens
        .or(others.iter().find_map(|w| w.max_output_tokens));
    let prompts = recorded(|c| &c.prompt_tokens);
    let outputs = recorded(|c| &c.output_tokens);
    let from_requests = (prompt_stated.is_none() && !prompts.is_empty())
        || (output_stated.is_none() && !outputs.is_empty());
    let prompt = prompt_stated.or(prompts.get(prompts.len() / 2).copied());
    let output = output_stated.or(outputs.last().copied());
    let requests = stated.requests.and_then(|n| i64::try_from(n).ok());
    // Under an arrival rate with no cap on requests in flight, every request may be in flight.
    let concurrency = match (stated.concurrency, stated.request_rate_rps, requests) {
        (Some(c), _, _) => i64::from(c),
        (None, Some(_), Some(n)) => n,
        _ => need(None, "concurrency", "load (concurrency or arrival rate)")?,
    };
    let id = if from_requests {
        format!("{profile} as {file} states it, lengths as its requests recorded them")
    } else {
        format!("{profile} as {file} states it")
    };
    Ok(WorkloadSpec {
        id: Some(id),
        concurrency: Some(concurrency),
        prompt_tokens: Some(need(prompt, "prompt_tokens", "prompt length")?),
        max_output_tokens: Some(need(output, "max_output_tokens", "output length")?),
        repeats: Some(1),
        requests_per_repeat: requests,
        request_rate_rps: stated.request_rate_rps,
        ..Default::default()
    })
}
