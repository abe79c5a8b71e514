//! The collector's plan (TOML or JSON): the core plan plus where the lineage records are and
//! what to measure. Raw input becomes a checked [`RunPlan`] before anything runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use sloscope_core::checks::{validate_profile, Profile};
use sloscope_core::schema::{Deployment, FloatBaseline, KnobValue, ProfileName, QualityGate};

use crate::plan::replay::Replay;
pub use crate::plan::template::{expand_env, fill_template};
pub use crate::wire::api::Api;

mod sections;
pub use sections::{BaselineTarget, CollectorPlan, LineagePaths, Target};

/// Command-line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Replaces `target.endpoint` (and drops `server_command`).
    pub endpoint: Option<String>,
    /// Only these profiles.
    pub profiles: Option<Vec<String>>,
    /// Only these candidates.
    pub candidates: Option<Vec<String>>,
    /// Skip the float baseline.
    pub no_baseline: bool,
    /// An external benchmark command replaces the target.
    pub external: bool,
}

/// Everything checked and resolved; what the runner executes.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The plan as given (written next to the results).
    pub raw: CollectorPlan,
    /// Profiles that passed their contract, in plan order.
    pub profiles: Vec<Profile>,
    /// Candidates to run.
    pub candidates: Vec<sloscope_core::schema::Candidate>,
    /// Lineage records.
    pub gate: QualityGate,
    /// Float baseline record.
    pub baseline_record: FloatBaseline,
    /// Deployment record.
    pub deployment: Deployment,
    /// Lineage files as read (copied into the output).
    pub lineage_files: Vec<(String, Vec<u8>)>,
    /// Whether to run the float baseline.
    pub baseline: Option<BaselineTarget>,
    /// What each profile replays from files (datasets, traces), read when the plan loads.
    pub replays: BTreeMap<ProfileName, Arc<Replay>>,
    /// When this process runs one shard of the plan (`--shard`): which, stamped on every run.
    pub shard: Option<sloscope_core::schema::ShardRef>,
    /// sha256 of the content of the plan as run (its `plan.json` copy, as the analysis hashes
    /// a loaded plan), stamped on every run; set when the copy is written.
    pub content_sha256: Option<String>,
    /// With a shard: the cells (role, name) it runs; the other targets belong to other shards.
    pub only: Option<Vec<(sloscope_core::schema::Role, String)>>,
    /// The plan's configuration search space, checked.
    pub space: Option<sloscope_core::search::Space>,
}

/// A plan problem, naming the file and the field.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct PlanError {
    /// The file.
    pub file: String,
    /// What is wrong, with the field.
    pub message: String,
}

fn perr(file: &Path, message: impl Into<String>) -> PlanError {
    PlanError {
        file: file.display().to_string(),
        message: message.into(),
    }
}

/// Reads, checks and resolves a plan.
pub fn load_plan(path: &Path, o: &Overrides) -> Result<RunPlan, PlanError> {
    let mut raw = read_raw(path)?;
    if let Some(ep) = &o.endpoint {
        raw.target.endpoint = Some(ep.clone());
        raw.target.server_command = None;
    }
    if raw.target.endpoint.is_none() && raw.target.server_command.is_none() {
        return Err(perr(
            path,
            "target: expected `endpoint` or `server_command`",
        ));
    }
    safe_names(path, &raw)?;
    sloscope_core::schema::price(&raw.plan).map_err(|e| perr(path, e))?;
    let mut profiles = profiles(path, &raw, o)?;
    let space = space(path, &raw)?;
    let replays = replays(path, &mut raw, &mut profiles)?;
    let candidates = candidates(path, &raw, o)?;
    for v in &raw.secret_vars {
        if !raw.vars.contains_key(v) {
            return Err(perr(
                path,
                format!("secret_vars: {v:?} is not a key of `vars`"),
            ));
        }
    }
    let (files, gate, baseline_record, deployment) = lineage(path, &raw)?;
    let baseline = if o.no_baseline {
        None
    } else {
        raw.baseline.clone()
    };
    if !o.external {
        one_configuration_per_endpoint(path, &raw, &candidates, baseline.as_ref(), o)?;
    }
    let baseline = expand_vars(path, &mut raw, baseline)?;
    Ok(RunPlan {
        raw,
        profiles,
        candidates,
        gate,
        baseline_record,
        deployment,
        lineage_files: files,
        baseline,
        replays,
        shard: None,
        content_sha256: None,
        only: None,
        space,
    })
}

/// Names that reach file names and server command lines: distinct (also to a reader: the
/// core's plan invariants), and plain tokens — letters, digits, `.`, `_`, `+`, `-`, not
/// starting with `.` or `-`, at most 64 characters — so no name can leave the output directory
/// (`../x`), add an argument to a command or break out of a shell's quotes. A plan is shared in
/// review like a result: what it names must be data, never a path or a command.
fn safe_names(path: &Path, raw: &CollectorPlan) -> Result<(), PlanError> {
    sloscope_core::checks::refusals(&raw.plan.clone())
        .map_err(|v| perr(path, format!("{}: {}", v.path, v.message)))?;
    let mut names: Vec<(String, &str)> = raw
        .plan
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("candidates[{i}].name"), c.name.as_str()))
        .collect();
    let values = raw
        .plan
        .candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match &c.value {
            KnobValue::Text(t) => Some((format!("candidates[{i}].value"), t.as_str())),
            _ => None,
        });
    names.extend(values);
    if let Some(b) = &raw.baseline {
        names.push(("baseline.name".into(), b.name.as_str()));
        if raw.plan.candidates.iter().any(|c| c.name == b.name) {
            return Err(perr(
                path,
                format!(
                    "baseline.name {:?} is also a candidate's name: expected its own",
                    b.name
                ),
            ));
        }
    }
    for (field, name) in names {
        if let Some(why) = unsafe_token(name) {
            return Err(perr(
                path,
                format!(
                    "{field} {:?}: {why}; expected letters, digits, `.`, `_`, `+` or `-`, not \
                     starting with `.` or `-`, at most 64 characters (names become file names and \
                     command-line values)",
                    crate::record::layout::shown(name)
                ),
            ));
        }
    }
    Ok(())
}

/// Why a name is not a plain token (`None`: it is).
pub fn unsafe_token(name: &str) -> Option<&'static str> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-');
    if name.is_empty() {
        Some("empty")
    } else if name.chars().count() > 64 {
        Some("longer than 64 characters")
    } else if name.starts_with(['.', '-']) {
        Some("starts with `.` or `-`")
    } else if !name.chars().all(ok) {
        Some("holds a character that is not a plain token's (a path separator, space, quote or symbol)")
    } else {
        None
    }
}

/// Reads each profile's dataset and trace (relative to the plan) and records what was read —
/// the files' sha256 and a trace's request count — in the profile and in the plan as written
/// beside the results, so every run names the bytes it replayed.
fn replays(
    path: &Path,
    raw: &mut CollectorPlan,
    profiles: &mut [Profile],
) -> Result<BTreeMap<ProfileName, Arc<Replay>>, PlanError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = BTreeMap::new();
    for p in profiles.iter_mut() {
        let seed = p.name.request_salt();
        let loaded = crate::plan::replay::load(dir, &mut p.workload, seed)
            .map_err(|e| perr(path, format!("profile {}: {e}", p.name)))?;
        let Some(replay) = loaded else { continue };
        if let Some(w) = raw
            .plan
            .profiles
            .iter_mut()
            .find(|s| s.name.as_deref() == Some(p.name.as_str()))
            .and_then(|s| s.workload.as_mut())
        {
            w.dataset.clone_from(&p.workload.dataset);
            w.trace.clone_from(&p.workload.trace);
            w.requests_per_repeat = p.workload.requests_per_repeat;
        }
        out.insert(p.name, Arc::new(replay));
    }
    Ok(out)
}

/// An endpoint serves one configuration: measuring several candidates (or a candidate and the
/// float baseline) at one running endpoint would label one server with knob values and an
/// artifact it was not served with. Launched servers are one per target, so only endpoints
/// are checked.
fn one_configuration_per_endpoint(
    path: &Path,
    raw: &CollectorPlan,
    candidates: &[sloscope_core::schema::Candidate],
    baseline: Option<&BaselineTarget>,
    o: &Overrides,
) -> Result<(), PlanError> {
    let mut at: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let (Some(ep), None) = (&raw.target.endpoint, &raw.target.server_command) {
        for c in candidates {
            at.entry(ep.clone()).or_default().push(c.name.clone());
        }
    }
    if let Some(b) = baseline {
        // As the runner resolves it: a command (its own or the target's) launches a server.
        let launches = b.server_command.is_some() || raw.target.server_command.is_some();
        let ep = b.endpoint.clone().or_else(|| raw.target.endpoint.clone());
        if let Some(ep) = ep.filter(|_| !launches) {
            at.entry(ep).or_default().push(b.name.clone());
        }
    }
    for (ep, names) in at {
        if names.len() > 1 {
            let from = if o.endpoint.is_some() {
                "--endpoint"
            } else {
                "target.endpoint"
            };
            return Err(perr(
                path,
                format!(
                    "{from} {}: one running server is one configuration, but {} would be measured there ({}); pick one with --candidates NAME (and --no-baseline), or give the float baseline its own `baseline.endpoint` or `baseline.server_command`",
                    crate::wire::secret::redact_url(&ep),
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The plan file as written (TOML, or JSON for `*.json`).
fn read_raw(path: &Path) -> Result<CollectorPlan, PlanError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| perr(path, format!("cannot read: {e}")))?;
    let raw: CollectorPlan = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|e| perr(path, e.to_string()))?
    } else {
        toml::from_str(&text).map_err(|e| perr(path, e.to_string()))?
    };
    if raw.plan.kind != sloscope_core::schema::Kind::Plan {
        return Err(perr(
            path,
            format!("kind is {}: expected plan", raw.plan.kind),
        ));
    }
    Ok(raw)
}

/// Profiles that pass their contract (every problem listed), narrowed by `--profiles`.
/// Checks the plan's `[space]`: the space itself (every problem named by its field), the
/// profiles it serves, and a `{knob}` placeholder in the server command for each knob.
pub fn space(
    path: &Path,
    raw: &CollectorPlan,
) -> Result<Option<sloscope_core::search::Space>, PlanError> {
    let Some(spec) = &raw.plan.space else {
        return Ok(None);
    };
    let mut issues = Vec::new();
    let space = sloscope_core::search::Space::new(spec)
        .map_err(|e| issues.extend(e))
        .ok();
    for (i, name) in spec.profiles.iter().enumerate() {
        if !raw
            .plan
            .profiles
            .iter()
            .any(|p| p.name.as_deref() == Some(name.as_str()))
        {
            issues.push(format!(
                "space.profiles[{i}]: no profile named {name:?} in the plan"
            ));
        }
    }
    issues.extend(capacity_in_space(raw, spec));
    if let Some(cmd) = &raw.target.server_command {
        for knob in spec.knobs.keys() {
            if !cmd.contains(&format!("{{{knob}}}")) {
                issues.push(format!(
                    "space.knobs.{knob}: target.server_command has no {{{knob}}} placeholder, so the knob would change nothing"
                ));
            }
        }
    }
    if spec.budget.launches == Some(0) {
        issues.push("space.budget.launches: 0: expected at least 1".into());
    }
    if spec.budget.confirm_requests == Some(0) {
        issues.push("space.budget.confirm_requests: 0: expected at least 1".into());
    }
    if !issues.is_empty() {
        return Err(perr(path, issues.join("; ")));
    }
    Ok(space)
}

/// A searched profile's trials measure its fixed workload per configuration: a capacity search
/// (`profiles[i].search`) on a profile the space serves would be silently not run, so it is a
/// problem of the plan, named by its field.
fn capacity_in_space(raw: &CollectorPlan, spec: &sloscope_core::schema::SpaceSpec) -> Vec<String> {
    raw.plan
        .profiles
        .iter()
        .enumerate()
        .filter(|(_, p)| p.search.is_some())
        .filter(|(_, p)| p.name.as_ref().is_some_and(|n| spec.profiles.contains(n)))
        .map(|(i, p)| {
            format!(
                "profiles[{i}].search: {:?} is searched over the space, whose trials measure its fixed workload per configuration; a capacity search per configuration is not supported: remove profiles[{i}].search, or {:?} from space.profiles",
                p.name.as_deref().unwrap_or_default(),
                p.name.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

fn profiles(path: &Path, raw: &CollectorPlan, o: &Overrides) -> Result<Vec<Profile>, PlanError> {
    let mut issues = Vec::new();
    let mut profiles = Vec::new();
    for (i, spec) in raw.plan.profiles.iter().enumerate() {
        match validate_profile(spec) {
            Ok(p) => profiles.push(p),
            Err(errs) => issues.extend(errs.into_iter().map(|e| format!("profiles[{i}]: {e}"))),
        }
    }
    for p in &profiles {
        if p.workload.requests_per_repeat.is_none() && p.workload.trace.is_none() {
            issues.push(format!(
                "profiles[{}].workload.requests_per_repeat: required by the collector",
                p.name
            ));
        }
    }
    if !issues.is_empty() {
        return Err(perr(path, issues.join("; ")));
    }
    if let Some(only) = &o.profiles {
        for n in only {
            if !profiles.iter().any(|p| p.name.as_str() == n) {
                return Err(perr(
                    path,
                    format!("--profiles: no profile named {n:?} in the plan"),
                ));
            }
        }
        profiles.retain(|p| only.iter().any(|n| n == p.name.as_str()));
    }
    Ok(profiles)
}

/// The plan's candidates, narrowed by `--candidates`.
fn candidates(
    path: &Path,
    raw: &CollectorPlan,
    o: &Overrides,
) -> Result<Vec<sloscope_core::schema::Candidate>, PlanError> {
    let mut candidates = raw.plan.candidates.clone();
    if candidates.is_empty() {
        return Err(perr(path, "candidates: expected at least one"));
    }
    if let Some(only) = &o.candidates {
        candidates.retain(|c| only.contains(&c.name));
        if candidates.is_empty() {
            return Err(perr(path, "--candidates: none of these are in the plan"));
        }
    }
    Ok(candidates)
}

type LineageFiles = (
    Vec<(String, Vec<u8>)>,
    QualityGate,
    FloatBaseline,
    Deployment,
);

/// The three lineage records the plan names, read through the core's one read path.
fn lineage(path: &Path, raw: &CollectorPlan) -> Result<LineageFiles, PlanError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let read = |p: &Path| -> Result<(String, Vec<u8>), PlanError> {
        let full = dir.join(p);
        let bytes = std::fs::read(&full).map_err(|e| {
            perr(
                &full,
                format!(
                    "lineage record: cannot read: {e} (write the gate, baseline and deployment \
                     records first: scripts/make-lineage.sh shows how, static/schema/ has their schemas)"
                ),
            )
        })?;
        Ok((full.display().to_string(), bytes))
    };
    let files = vec![
        read(&raw.lineage.gate)?,
        read(&raw.lineage.baseline)?,
        read(&raw.lineage.deployment)?,
    ];
    let parse = |(name, bytes): &(String, Vec<u8>)| {
        sloscope_core::read_document(name, bytes.clone()).map_err(|e| PlanError {
            file: e.file.clone(),
            message: format!("{}: {}", e.path, e.message),
        })
    };
    use sloscope_core::Document as D;
    match (parse(&files[0])?, parse(&files[1])?, parse(&files[2])?) {
        (D::QualityGate(g), D::FloatBaseline(b), D::Deployment(d)) => Ok((files, g, b, d)),
        _ => Err(perr(
            path,
            "lineage: expected gate → quality_gate, baseline → float_baseline, deployment → deployment records",
        )),
    }
}

/// Expands `$NAME` in variables and model paths. Variables feed server commands only; with an
/// endpoint given they may stay unexpanded.
fn expand_vars(
    path: &Path,
    raw: &mut CollectorPlan,
    mut baseline: Option<BaselineTarget>,
) -> Result<Option<BaselineTarget>, PlanError> {
    let launches = raw.target.server_command.is_some()
        || baseline
            .as_ref()
            .is_some_and(|b| b.server_command.is_some());
    if launches {
        for (k, v) in raw.vars.iter_mut() {
            *v = expand_env(v).map_err(|e| perr(path, format!("vars.{k}: {e}")))?;
        }
    }
    if let Some(m) = &mut raw.target.model_path {
        *m = expand_env(m).map_err(|e| perr(path, format!("target.model_path: {e}")))?;
    }
    if let Some(b) = &mut baseline {
        if let Some(m) = &mut b.model_path {
            *m = expand_env(m).map_err(|e| perr(path, format!("baseline.model_path: {e}")))?;
        }
    }
    Ok(baseline)
}
