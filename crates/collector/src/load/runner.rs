//! The whole collection: for each candidate (and the float baseline) start or reach its server,
//! run every profile's repeats, and write one run file per candidate × profile, plus copies of
//! the plan and the lineage records. Requests are journaled as they finish; run files are
//! written atomically; an interruption leaves every finished request on disk, marked partial.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sloscope_core::analysis;
use sloscope_core::checks::Profile;
use sloscope_core::schema::{
    CandidateRef, EndpointInfo, EvidenceLevel, Kind, LeftOut, Role, Run, RunSource, RunStatus,
    ToolInfo, SCHEMA_VERSION,
};

use crate::cancel::Cancel;
use crate::clock::rfc3339_now;
use crate::error::CollectError;
use crate::plan::config::RunPlan;
use crate::plan::target::TargetSpec;
use crate::progress::Progress;
use crate::record::layout::{Layout, LINEAGE_COPIES};
use crate::record::write;
use crate::server::process::{self, Launched};
use crate::server::telemetry::Gpu;
use crate::wire::client::Client;
use crate::wire::secret::{redact_url, Redactor, Secret};

mod launch;
use launch::Reached;
mod measure;
mod search;
mod space;

/// Settings that are not in the plan.
pub struct Options {
    /// Output directory.
    pub out: PathBuf,
    /// API key, if the endpoint needs one (also `{api_key}` in server commands).
    pub api_key: Option<Secret>,
    /// Every credential to keep out of what is written (the key and the plan's secret vars).
    pub redactor: Redactor,
    /// No progress output.
    pub quiet: bool,
}

/// What was written, and what was not run.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Run files written.
    pub runs: Vec<PathBuf>,
    /// Runs that did not finish (partial or failed).
    pub incomplete: Vec<String>,
    /// `profile / target: reason` for each run the plan asked for that was not started.
    pub not_run: Vec<String>,
}

/// Writes the plan as run (only the selected profiles and candidates, credentials redacted)
/// and the lineage copies; returns the copy's content sha256 as the analysis will hash it when
/// the copy is loaded (each run records it).
pub fn write_copies(
    plan: &RunPlan,
    layout: &Layout,
    redactor: &Redactor,
) -> Result<Option<String>, CollectError> {
    layout.create()?;
    let path = layout.plan();
    let value = plan_copy(plan, redactor)
        .map_err(|e| CollectError::write(path.clone())(std::io::Error::other(e)))?;
    write::json(&path, &value).map_err(CollectError::write(path.clone()))?;
    for ((_, bytes), kind) in plan.lineage_files.iter().zip(LINEAGE_COPIES) {
        let path = layout.lineage(kind);
        write::atomic(&path, bytes).map_err(CollectError::write(path))?;
    }
    // A narrowed copy's runs record the whole plan's hash, so that they match the whole plan.
    Ok(narrowed_whole(&value).or_else(|| content_sha256(&path, &value)))
}

/// The whole plan's hash a narrowed copy records.
fn narrowed_whole(value: &serde_json::Value) -> Option<String> {
    value
        .pointer("/left_out/whole_content_sha256")
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// The plan copy's content sha256, read back through the core's own reader (its checks and
/// normal form), so that it is the hash the analysis gives the same file.
fn content_sha256(path: &Path, value: &serde_json::Value) -> Option<String> {
    let bytes = serde_json::to_vec(value).ok()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    match sloscope_core::read_document(&name, bytes).ok()? {
        sloscope_core::Document::Plan(p) => sloscope_core::analysis::plan_content_sha256(&p),
        _ => None,
    }
}

/// The plan as run: only the selected profiles and candidates, credentials redacted. Every
/// shard of one split writes the same copy (all the split's candidates), so its sha256 names
/// the split.
pub fn plan_copy(plan: &RunPlan, redactor: &Redactor) -> Result<serde_json::Value, String> {
    let mut effective = plan.raw.clone();
    let mut left = left_out(plan);
    if left != LeftOut::default() {
        let whole = redactor.to_value(&plan.raw).map_err(|e| e.to_string())?;
        // A copy narrowed again keeps naming the plan it was first narrowed from.
        left.whole_content_sha256 = match &plan.raw.plan.left_out {
            Some(l) => l.whole_content_sha256.clone(),
            None => content_sha256(Path::new("plan.json"), &whole),
        };
        effective.plan.left_out = Some(Box::new(left));
    }
    effective.plan.profiles.retain(|s| {
        plan.profiles
            .iter()
            .any(|p| s.name.as_deref() == Some(p.name.as_str()))
    });
    effective
        .plan
        .candidates
        .retain(|c| plan.candidates.iter().any(|k| k.name == c.name));
    if plan.baseline.is_none() {
        effective.baseline = None;
    }
    redactor.to_value(&effective).map_err(|e| e.to_string())
}

/// What `--profiles`, `--candidates` and `--no-baseline` left out of the plan.
fn left_out(plan: &RunPlan) -> LeftOut {
    let raw = &plan.raw;
    LeftOut {
        profiles: raw
            .plan
            .profiles
            .iter()
            .filter_map(|s| s.name.clone())
            .filter(|n| !plan.profiles.iter().any(|p| p.name.as_str() == n))
            .collect(),
        candidates: raw
            .plan
            .candidates
            .iter()
            .filter(|c| !plan.candidates.iter().any(|k| k.name == c.name))
            .map(|c| c.name.clone())
            .collect(),
        baseline: raw
            .baseline
            .as_ref()
            .filter(|_| plan.baseline.is_none())
            .map(|b| b.name.clone()),
        whole_content_sha256: None,
    }
}

/// The candidates, then the float baseline when it is run.
/// The candidates' and the baseline's targets (a shard's own only).
pub(crate) fn targets(plan: &RunPlan) -> Vec<TargetSpec> {
    let t = &plan.raw.target;
    let mut out: Vec<TargetSpec> = plan
        .candidates
        .iter()
        .map(|c| TargetSpec {
            role: Role::Candidate,
            name: c.name.clone(),
            value: c.value.clone(),
            artifact: plan.deployment.artifact.clone(),
            endpoint: t.endpoint.clone(),
            command: t.server_command.clone(),
            model_path: t.model_path.clone(),
            model: t.model.clone(),
            search: None,
        })
        .collect();
    if let Some(b) = &plan.baseline {
        out.push(TargetSpec {
            role: Role::Baseline,
            name: b.name.clone(),
            value: b.value.clone(),
            artifact: plan.baseline_record.artifact.clone(),
            endpoint: b
                .endpoint
                .clone()
                .or_else(|| t.endpoint.clone().filter(|_| b.server_command.is_none())),
            command: b
                .server_command
                .clone()
                .or_else(|| t.server_command.clone()),
            model_path: b.model_path.clone(),
            model: b.model.clone().or_else(|| t.model.clone()),
            search: None,
        });
    }
    if let Some(only) = &plan.only {
        out.retain(|t| only.iter().any(|(r, n)| *r == t.role && *n == t.name));
    }
    out
}

/// Requests the plan will send, for the progress estimate. A capacity search's trials are
/// counted as a typical search takes them: doubling from `min` to `max`, then as many bisection
/// steps, each one repeat with its warm-up (capped at `max_trials`; candidates only).
fn total_requests(plan: &RunPlan, targets: usize) -> u64 {
    let per_target: i64 = plan
        .profiles
        .iter()
        .map(|p| {
            let w = &p.workload;
            (w.requests_per_repeat.unwrap_or(0) + w.warmup_requests.unwrap_or(0))
                * w.repeats.unwrap_or(1)
        })
        .sum();
    let searches: i64 = plan
        .profiles
        .iter()
        .filter_map(|p| {
            let s = p.search.as_ref()?;
            let w = &p.workload;
            let doublings = (s.max / s.min).log2().ceil().max(0.0) as i64 + 1;
            let trials = (2 * doublings).min(i64::from(s.max_trials));
            Some(trials * (w.requests_per_repeat.unwrap_or(0) + w.warmup_requests.unwrap_or(0)))
        })
        .sum();
    let candidates = plan.candidates.len().min(targets) as i64;
    (per_target.max(0) as u64 * targets as u64) + (searches.max(0) * candidates) as u64
}

/// Whether the plan's configuration search serves profile `p` (its listed candidates are then
/// not run under it: the search finds the configuration instead).
pub fn searched(plan: &RunPlan, p: &Profile) -> bool {
    plan.raw
        .plan
        .space
        .as_ref()
        .is_some_and(|s| s.profiles.iter().any(|n| n == p.name.as_str()))
}

/// Runs the plan. `cancel` is the whole collection's flag; each target gets a child of it.
pub async fn run(
    mut plan: RunPlan,
    opts: Options,
    cancel: Cancel,
) -> Result<Outcome, CollectError> {
    let layout = Layout::new(&opts.out);
    plan.content_sha256 = write_copies(&plan, &layout, &opts.redactor)?;
    let targets = targets(&plan);
    let mut progress = Progress::new(opts.quiet, total_requests(&plan, targets.len()));
    let gpu = Gpu::init();
    if let Some(d) = gpu.describe() {
        progress.say(&format!("GPU memory sampled through NVML: {d}"));
    }
    let mut ctx = RunCtx {
        plan: &plan,
        layout: &layout,
        opts: &opts,
        gpu: &gpu,
        cancel: &cancel,
        progress: &mut progress,
        outcome: Outcome::default(),
    };
    let targets: Vec<TargetSpec> = targets
        .into_iter()
        .filter(|t| t.role == Role::Baseline || plan.profiles.iter().any(|p| !searched(&plan, p)))
        .collect();
    for t in &targets {
        if cancel.is_cancelled() {
            ctx.not_run(t, &cancel.message());
            continue;
        }
        ctx.run_target(t).await?;
    }
    if let Some(spec) = &plan.raw.plan.space {
        for p in plan.profiles.iter().filter(|p| searched(&plan, p)) {
            ctx.run_space_search(spec, p).await?;
        }
    }
    Ok(ctx.outcome)
}

/// What every target's collection shares.
struct RunCtx<'a> {
    plan: &'a RunPlan,
    layout: &'a Layout,
    opts: &'a Options,
    gpu: &'a Gpu,
    cancel: &'a Cancel,
    progress: &'a mut Progress,
    outcome: Outcome,
}

impl RunCtx<'_> {
    /// Lists every profile of `t` as not run.
    fn not_run(&mut self, t: &TargetSpec, why: &str) {
        for p in &self.plan.profiles {
            self.outcome
                .not_run
                .push(format!("{} / {}: not run: {why}", p.name, t.name));
        }
    }

    /// Reaches or launches the target's server, runs every profile, stops the server (on every
    /// path, errors included).
    async fn run_target(&mut self, t: &TargetSpec) -> Result<(), CollectError> {
        let tc = self.cancel.child();
        let (base, launched) = match self.reach(t, &tc).await? {
            Reached::Up(base, launched) => (base, launched),
            Reached::Failed => return Ok(()),
            Reached::Cancelled => {
                self.not_run(t, &self.cancel.message());
                return Ok(());
            }
        };
        let measured = self.run_profiles(t, &tc, &base, launched.as_ref()).await;
        let mut written = match measured {
            Ok(w) => w,
            Err(e) => {
                if let Some(l) = launched {
                    l.stop().await;
                }
                return Err(e);
            }
        };
        if let Some(l) = launched {
            let log = l.log_path.clone();
            let (code, tail) = l.stop().await;
            self.redact_log(&log);
            let tail = tail.map(|s| self.opts.redactor.text(&s));
            for (path, run) in &mut written {
                if run.server.is_none() {
                    continue;
                }
                let before = run.clone();
                if let Some(s) = &mut run.server {
                    s.exit_status = code;
                    s.log_tail = tail.clone();
                }
                // The header only: the requests are streamed across unchanged.
                crate::record::spill::rewrite_header(path, &before, run)
                    .map_err(CollectError::write(path.clone()))?;
            }
        }
        Ok(())
    }

    /// Every profile of one target, in plan order; after the target's flag is cancelled (its
    /// server exited, its endpoint failed) the rest are listed as not run.
    async fn run_profiles(
        &mut self,
        t: &TargetSpec,
        tc: &Cancel,
        base: &str,
        launched: Option<&Launched>,
    ) -> Result<Vec<(PathBuf, Run)>, CollectError> {
        let tgt = &self.plan.raw.target;
        let max_conc = self
            .plan
            .profiles
            .iter()
            .filter_map(|p| {
                let searched = p
                    .search
                    .as_ref()
                    .filter(|s| s.over == analysis::LoadAxis::Concurrency)
                    .map(|s| s.max as i64);
                p.workload.concurrency.max(searched)
            })
            .max()
            .unwrap_or(1) as usize;
        let client = Client::new(
            base,
            tgt.api,
            self.opts.api_key.clone(),
            max_conc,
            Duration::from_secs_f64(tgt.request_timeout_s),
            Duration::from_secs_f64(tgt.stall_timeout_s.unwrap_or(tgt.request_timeout_s)),
        )?;
        let reported = crate::server::identity::probe(client.http(), base).await;
        let mut written: Vec<(PathBuf, Run)> = Vec::new();
        for p in &self.plan.profiles {
            if t.role == Role::Candidate && searched(self.plan, p) {
                continue;
            }
            if tc.is_cancelled() {
                let why = tc.message();
                self.outcome
                    .not_run
                    .push(format!("{} / {}: not run: {why}", p.name, t.name));
                continue;
            }
            let m = Measure {
                t,
                client: &client,
                base,
                launched,
                tc,
                reported: &reported,
            };
            let done = self.measure(&m, p, None).await?;
            self.say_failures(t, p, &done.1, launched);
            written.push(done);
            let trials = self.run_search(&m, p).await?;
            written.extend(trials);
        }
        Ok(written)
    }

    /// One line on stderr (even with `--quiet`) when a run stopped early or every request
    /// failed, with the cause; the server's exit status and log tail when it died.
    fn say_failures(
        &mut self,
        t: &TargetSpec,
        p: &Profile,
        run: &Run,
        launched: Option<&Launched>,
    ) {
        let Some(why) = &run.failure else {
            return;
        };
        self.progress.warn(&format!(
            "{} / {}: {} run: {why}",
            p.name,
            t.name,
            run.status.as_str()
        ));
        if let Some(l) = launched.filter(|l| l.exit_status().is_some()) {
            let tail = process::log_tail(&l.log_path, 20).unwrap_or_default();
            let tail = self.opts.redactor.text(&tail);
            self.progress.warn(&format!(
                "the server's log ({}) ends:\n{tail}",
                l.log_path.display()
            ));
        }
    }
}

/// What collecting profile `p` of the target of `m` needs.
fn profile_ctx<'b>(
    plan: &'b RunPlan,
    gpu: &'b Gpu,
    opts: &'b Options,
    m: &Measure<'b>,
    p: &'b Profile,
) -> crate::load::collect::ProfileCtx<'b> {
    let tgt = &plan.raw.target;
    crate::load::collect::ProfileCtx {
        client: m.client,
        profile: p,
        target: m.t,
        server: m.launched,
        gpu,
        api: tgt.api,
        ignore_eos: tgt.ignore_eos,
        extra: &tgt.extra_body,
        metrics_url: (!tgt.metrics_path.is_empty())
            .then(|| format!("{}{}", m.base, tgt.metrics_path)),
        health_path: &tgt.health_path,
        timeout: Duration::from_secs_f64(tgt.request_timeout_s),
        redactor: &opts.redactor,
        first_repeat: 0,
        replay: plan.replays.get(&p.name).cloned(),
        missed_scrapes: std::sync::atomic::AtomicU32::new(0),
    }
}

/// The target being measured and how to reach it.
#[derive(Clone, Copy)]
struct Measure<'a> {
    t: &'a TargetSpec,
    client: &'a Client,
    base: &'a str,
    launched: Option<&'a Launched>,
    tc: &'a Cancel,
    /// What the server said it is.
    reported: &'a sloscope_core::schema::ServerReport,
}

/// A run of plan candidate `c` under profile `p` with nothing measured yet (external imports).
pub fn skeleton_for(plan: &RunPlan, c: &sloscope_core::schema::Candidate, p: &Profile) -> Run {
    let t = TargetSpec {
        role: Role::Candidate,
        name: c.name.clone(),
        value: c.value.clone(),
        artifact: plan.deployment.artifact.clone(),
        endpoint: plan.raw.target.endpoint.clone(),
        command: None,
        model_path: None,
        model: plan.raw.target.model.clone(),
        search: None,
    };
    skeleton(plan, &t, p, None)
}

fn skeleton(plan: &RunPlan, t: &TargetSpec, p: &Profile, base: Option<&str>) -> Run {
    let spec = plan
        .raw
        .plan
        .profiles
        .iter()
        .find(|s| s.name.as_deref() == Some(p.name.as_str()))
        .cloned();
    Run {
        kind: Kind::Run,
        schema_version: SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "sloscope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        artifact_id: t.artifact.artifact_id.clone(),
        role: t.role,
        profile: p.name.as_str().into(),
        workload_id: p.workload_id.clone(),
        profile_spec: spec,
        candidate: CandidateRef {
            name: t.name.clone(),
            knob: Some(match &t.search {
                Some(s) => s.step.config.keys().cloned().collect::<Vec<_>>().join("+"),
                None => plan.raw.plan.knob.clone(),
            }),
            value: Some(t.value.clone()),
        },
        backend: t.artifact.backend.clone(),
        backend_version: t.artifact.backend_version.clone(),
        hardware: t.artifact.hardware.clone(),
        endpoint: base.map(|b| EndpointInfo {
            url: redact_url(b),
            api: plan.raw.target.api.as_str().into(),
            model: t.model.clone(),
            ignore_eos: Some(plan.raw.target.ignore_eos),
            reported: None,
        }),
        status: RunStatus::Ok,
        failure: None,
        evidence_level: EvidenceLevel::RealBackendProfile,
        source: RunSource::Measured,
        imported_from: None,
        import: None,
        started_at: Some(rfc3339_now()),
        finished_at: None,
        server: None,
        notes: Vec::new(),
        repeats: Vec::new(),
        reported: None,
        trial: None,
        search: t.search.as_ref().map(|s| s.step.clone()),
        shard: plan.shard.clone(),
        plan_content_sha256: plan.content_sha256.clone(),
    }
}
