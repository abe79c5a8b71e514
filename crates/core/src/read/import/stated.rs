//! A plan stated for other tools' files that came without one (in the page, or by `sloscope
//! import --profile --slo`): per profile the
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
    /// The file: its position in the files given with the statement (two files may share a
    /// name).
    pub file: usize,
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

/// The name every stated plan carries (the page's, `sloscope import --slo`'s), so a reader of
/// the report sees where it came from, and the page shows its statement again.
pub const STATED_PLAN_NAME: &str = "SLOs stated for other tools' files, without a plan";

/// The knob a stated plan's candidates vary: which file measured what.
pub const STATED_KNOB: &str = "candidate";

/// The plan the statement makes of `files` (each file's name and runs as read without a
/// plan). The error names the file or profile and what is missing. A plan measures every
/// candidate under every profile, so each profile stated must be given the same candidates.
pub fn stated_plan(st: &Statement, files: &[(&str, &[(String, Run)])]) -> Result<Plan, String> {
    if st.places.is_empty() {
        return Err("no file was given a profile and candidate".into());
    }
    let name = |i: usize| files.get(i).map_or("(a file not loaded)", |f| f.0);
    let mut candidates: Vec<Candidate> = Vec::new();
    for p in &st.places {
        if p.file >= files.len() {
            return Err(format!("file {} is not loaded", p.file));
        }
        plain(&p.candidate)
            .map_err(|why| format!("{}: candidate {:?}: {why}", name(p.file), p.candidate))?;
        if !st.profiles.iter().any(|s| s.name == p.profile) {
            return Err(format!(
                "{}: profile {:?} has no SLOs stated",
                name(p.file),
                p.profile
            ));
        }
        if !candidates.iter().any(|c| c.name == p.candidate) {
            candidates.push(Candidate {
                name: p.candidate.clone(),
                value: KnobValue::Text(p.candidate.clone()),
            });
        }
    }
    same_candidates(st)?;
    let mut profiles = Vec::new();
    for s in &st.profiles {
        let placed: Vec<usize> = st
            .places
            .iter()
            .filter(|p| p.profile == s.name)
            .map(|p| p.file)
            .collect();
        let Some(&first) = placed.first() else {
            continue;
        };
        let all: Vec<&Run> = placed
            .iter()
            .flat_map(|&i| files[i].1.iter().map(|r| &r.1))
            .collect();
        let spec = ProfileSpec {
            name: Some(s.name.clone()),
            workload: Some(workload(name(first), &s.name, files[first].1, &all)?),
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

/// Every profile given files has the same candidates: a plan's candidates are serving
/// configurations, each measured under every profile, so a candidate named under one profile
/// only would be a cell planned and never measured under the others.
fn same_candidates(st: &Statement) -> Result<(), String> {
    let of = |profile: &str| {
        let mut c: Vec<&str> = st
            .places
            .iter()
            .filter(|p| p.profile == profile)
            .map(|p| p.candidate.as_str())
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    let used: Vec<&str> = st
        .profiles
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| st.places.iter().any(|p| p.profile == *n))
        .collect();
    for pair in used.windows(2) {
        let (a, b) = (of(pair[0]), of(pair[1]));
        if a != b {
            return Err(format!(
                "{}'s candidates ({}) are not {}'s ({}): a plan measures every candidate under \
                 every profile; name the files' candidates alike across profiles (a candidate is \
                 a serving configuration), or judge one profile at a time",
                pair[0],
                a.join(", "),
                pair[1],
                b.join(", ")
            ));
        }
    }
    Ok(())
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
    let (prompt, output, from_requests) = lengths(stated, &others, all);
    // The requests the file states it sent, else those it records; the collector needs a count.
    let recorded: usize = run.repeats.iter().map(|r| r.requests.len()).sum();
    let requests = stated
        .requests
        .and_then(|n| i64::try_from(n).ok())
        .or_else(|| (recorded > 0).then_some(recorded as i64))
        .ok_or_else(|| {
            format!(
                "{file} states no request count and records no request: the profile's workload \
                 is what its first file states; load a plan that defines the {profile} profile \
                 instead"
            )
        })?;
    let load = load(stated, &others);
    // Under an arrival rate with no cap on requests in flight, every request may be in flight.
    let concurrency = match load {
        (Some(c), _) => i64::from(c),
        (None, Some(_)) => requests,
        _ => need(None, "concurrency", "load (concurrency or arrival rate)")?,
    };
    let id = if from_requests {
        format!("{profile} as {file} states it, lengths as the requests recorded them")
    } else {
        format!("{profile} as {file} states it")
    };
    Ok(WorkloadSpec {
        id: Some(id),
        concurrency: Some(concurrency),
        prompt_tokens: Some(need(prompt, "prompt_tokens", "prompt length")?),
        max_output_tokens: Some(need(output, "max_output_tokens", "output length")?),
        repeats: Some(1),
        requests_per_repeat: Some(requests),
        request_rate_rps: load.1,
        ..Default::default()
    })
}

/// The prompt and output lengths: as the first file states them, else as another file under
/// the profile does, else as the profile's requests recorded them (the median prompt, the
/// longest output: no file's outputs run past the cap so made); and whether any came from the
/// requests.
fn lengths(
    stated: &ForeignWorkload,
    others: &[&ForeignWorkload],
    all: &[&Run],
) -> (Option<u32>, Option<u32>, bool) {
    let recorded = |pick: fn(&crate::schema::RequestColumns) -> &Vec<Option<u32>>| {
        let mut v: Vec<u32> = all
            .iter()
            .flat_map(|r| &r.repeats)
            .flat_map(|r| pick(&r.requests).iter().flatten().copied())
            .collect();
        v.sort_unstable();
        v
    };
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
    (
        prompt_stated.or(prompts.get(prompts.len() / 2).copied()),
        output_stated.or(outputs.last().copied()),
        from_requests,
    )
}

/// The load (streams, rate) the first file states, else the one another file under the
/// profile states (llmperf's per-request file, whose summary states it).
fn load(stated: &ForeignWorkload, others: &[&ForeignWorkload]) -> (Option<u32>, Option<f64>) {
    let of = |w: &ForeignWorkload| (w.concurrency, w.request_rate_rps);
    let none = |l: &(Option<u32>, Option<f64>)| l.0.is_none() && l.1.is_none();
    let first = of(stated);
    if !none(&first) {
        return first;
    }
    others
        .iter()
        .map(|w| of(w))
        .find(|l| !none(l))
        .unwrap_or(first)
}

/// The metric a profile is ranked by unless stated: the seed's — time to first token for
/// `latency`, time per output token for `balanced`, output throughput for `throughput`.
pub fn default_primary(profile: &str) -> &'static str {
    match profile {
        "latency" => "ttft_p95_ms",
        "balanced" => "tpot_p95_ms",
        _ => "throughput_tps",
    }
}

/// A candidate name for each file, made of its name (its stem as a plain token, at most 48
/// characters), distinct from one another and from `taken`: two files of one stem (`out.json`
/// in two folders) would otherwise be one candidate measured twice.
pub fn default_candidates(names: &[&str], taken: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let base = stem_token(name).unwrap_or_else(|| format!("file{}", i + 1));
        let mut made = base.clone();
        let mut n = 2;
        while out.contains(&made) || taken.contains(&made.as_str()) {
            made = format!("{base}-{n}");
            n += 1;
        }
        out.push(made);
    }
    out
}

fn stem_token(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = [".jsonl", ".json", ".csv", ".yaml"]
        .iter()
        .find_map(|x| base.strip_suffix(x))
        .unwrap_or(base);
    let token: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    let token = token.trim_start_matches(['.', '-']);
    (!token.is_empty()).then(|| token.to_string())
}
