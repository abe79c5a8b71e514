//! The collector's plan (TOML or JSON): the core plan plus where the lineage records are and
//! what to measure. Raw input becomes a checked [`RunPlan`] before anything runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sloscope_core::check::contract::{validate_profile, Profile};
use sloscope_core::schema::{Deployment, FloatBaseline, KnobValue, Plan, ProfileName, QualityGate};

pub use crate::api::Api;
use crate::replay::Replay;
pub use crate::template::{expand_env, fill_template};

/// Paths of the lineage records, relative to the plan file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineagePaths {
    /// Quality-gate record.
    pub gate: PathBuf,
    /// Float-baseline record.
    pub baseline: PathBuf,
    /// Deployment record.
    pub deployment: PathBuf,
}

fn default_health() -> String {
    "/health".into()
}
fn default_metrics() -> String {
    "/metrics".into()
}
fn default_timeout() -> f64 {
    120.0
}
fn default_true() -> bool {
    true
}

/// Where and how to send requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// API flavour.
    #[serde(default)]
    pub api: Api,
    /// `model` field of requests (and of `/tokenize`).
    #[serde(default)]
    pub model: Option<String>,
    /// An already running endpoint, e.g. `http://127.0.0.1:8000`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// A command template started once per candidate instead: placeholders `{port}`,
    /// `{value}` (the knob value), `{<knob>}`, `{name}`, `{model_path}` and any of `vars`.
    #[serde(default)]
    pub server_command: Option<String>,
    /// Health path polled after launch.
    #[serde(default = "default_health")]
    pub health_path: String,
    /// Prometheus path scraped every second; an empty string turns scraping off.
    #[serde(default = "default_metrics")]
    pub metrics_path: String,
    /// Seconds to wait for a launched server to become healthy.
    #[serde(default = "default_timeout")]
    pub health_timeout_s: f64,
    /// Seconds one request may take in all.
    #[serde(default = "default_timeout")]
    pub request_timeout_s: f64,
    /// Seconds without a byte before a stream counts as stalled.
    #[serde(default)]
    pub stall_timeout_s: Option<f64>,
    /// Send `ignore_eos: true` so every request generates exactly `max_output_tokens`
    /// (llama.cpp, vLLM and SGLang accept it).
    #[serde(default = "default_true")]
    pub ignore_eos: bool,
    /// Extra JSON fields merged into every request body.
    #[serde(default)]
    pub extra_body: BTreeMap<String, serde_json::Value>,
    /// Path of the model file the quantized server loads (`{model_path}`).
    #[serde(default)]
    pub model_path: Option<String>,
}

/// The float baseline's serving target (same profiles, one configuration).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineTarget {
    /// Name shown in reports.
    #[serde(default = "baseline_name")]
    pub name: String,
    /// Knob value the baseline is served with.
    pub value: KnobValue,
    /// A running endpoint for the float model.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Or a command template (same placeholders; `{model_path}` is this one's).
    #[serde(default)]
    pub server_command: Option<String>,
    /// Model file of the float baseline.
    #[serde(default)]
    pub model_path: Option<String>,
    /// `model` field of requests, if it differs.
    #[serde(default)]
    pub model: Option<String>,
}

fn baseline_name() -> String {
    "float-baseline".into()
}

/// `[gate]`: how `sloscope gate --plan` measures the quantized artifact against the float
/// baseline, on the servers the plan describes (a candidate's configuration for the quantized
/// model, the baseline's for the float one). Flags override each field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSection {
    /// The evaluation set, relative to the plan: plain text (texts separated by blank lines) or
    /// JSON Lines with `"text"`.
    pub eval: PathBuf,
    /// The candidate whose configuration serves the quantized model (default: the first).
    #[serde(default)]
    pub candidate: Option<String>,
    /// `llama` (default), `vllm` or `sglang`.
    #[serde(default)]
    pub backend: Option<String>,
    /// Log-probabilities per position and side (default 20).
    #[serde(default)]
    pub top_k: Option<u32>,
    /// Each text is cut to this many tokens (default 256).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Score in llama-perplexity's chunks of this many tokens.
    #[serde(default)]
    pub chunk: Option<usize>,
    /// Largest mean KL divergence, nats (default 0.05).
    #[serde(default)]
    pub kld_mean_max: Option<f64>,
    /// Smallest top-1 agreement (default 0.90).
    #[serde(default)]
    pub top1_min: Option<f64>,
    /// Largest perplexity ratio (default 1.05).
    #[serde(default)]
    pub ppl_ratio_max: Option<f64>,
    /// Notes for the record (the artifacts' provenance).
    #[serde(default)]
    pub notes: Option<String>,
}

/// The plan file as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CollectorPlan {
    /// Profiles, candidates, knob.
    #[serde(flatten)]
    pub plan: Plan,
    /// Lineage record paths.
    pub lineage: LineagePaths,
    /// Endpoint or server command.
    pub target: Target,
    /// Optional float baseline.
    #[serde(default)]
    pub baseline: Option<BaselineTarget>,
    /// How `sloscope gate --plan` measures the quality gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateSection>,
    /// Values for `{name}` placeholders in commands (environment variables are expanded:
    /// `"$LLAMA_SERVER"`).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Names of `vars` whose values are credentials: replaced by `***` in everything sloscope
    /// writes (the plan copy, run files, journals, server command lines and logs). The
    /// `--api-key-env` key, `{api_key}` in commands, is always treated so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_vars: Vec<String>,
}

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
    /// With a shard: the cells (role, name) it runs; the other targets belong to other shards.
    pub only: Option<Vec<(sloscope_core::schema::Role, String)>>,
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
        only: None,
    })
}

/// Names that reach file names and server command lines: distinct (also to a reader: the
/// core's plan invariants), and plain tokens — letters, digits, `.`, `_`, `+`, `-`, not
/// starting with `.` or `-`, at most 64 characters — so no name can leave the output directory
/// (`../x`), add an argument to a command or break out of a shell's quotes. A plan is shared in
/// review like a result: what it names must be data, never a path or a command.
fn safe_names(path: &Path, raw: &CollectorPlan) -> Result<(), PlanError> {
    sloscope_core::check::plan::refusals(&raw.plan.clone())
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
                    crate::layout::shown(name)
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
        let loaded = crate::replay::load(dir, &mut p.workload, seed)
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
                    crate::secret::redact_url(&ep),
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
