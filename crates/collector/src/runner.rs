//! The whole collection: for each candidate (and the float baseline) start or reach its server,
//! run every profile's repeats, and write one run file per candidate × profile, plus copies of
//! the plan and the lineage records. Requests are journaled as they finish; run files are
//! written atomically; an interruption leaves every finished request on disk, marked partial.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use sloscope_core::contract::Profile;
use sloscope_core::schema::{
    CandidateRef, EndpointInfo, EvidenceLevel, Kind, Role, Run, RunSource, RunStatus, ServerInfo,
    ToolInfo, SCHEMA_VERSION,
};

use crate::cancel::Cancel;
use crate::client::Client;
use crate::clock::rfc3339_now;
use crate::config::RunPlan;
use crate::error::CollectError;
use crate::failure::StopReason;
use crate::journal::Journal;
use crate::layout::{Layout, LINEAGE_COPIES};
use crate::progress::Progress;
use crate::secret::{redact_url, Secret};
use crate::server::{self, Launched};
use crate::target::TargetSpec;
use crate::telemetry::Gpu;
use crate::write;

/// Settings that are not in the plan.
pub struct Options {
    /// Output directory.
    pub out: PathBuf,
    /// API key, if the endpoint needs one.
    pub api_key: Option<Secret>,
    /// No progress output.
    pub quiet: bool,
}

/// What was written.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Run files written.
    pub runs: Vec<PathBuf>,
    /// Runs that did not finish (partial or failed).
    pub incomplete: Vec<String>,
}

/// Writes the plan as run (only the selected profiles and candidates) and the lineage copies.
pub fn write_copies(plan: &RunPlan, layout: &Layout) -> Result<(), CollectError> {
    layout.create()?;
    let mut effective = plan.raw.clone();
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
    let path = layout.plan();
    write::json(&path, &effective).map_err(CollectError::write(path))?;
    for ((_, bytes), kind) in plan.lineage_files.iter().zip(LINEAGE_COPIES) {
        let path = layout.lineage(kind);
        write::atomic(&path, bytes).map_err(CollectError::write(path))?;
    }
    Ok(())
}

/// The candidates, then the float baseline when it is run.
fn targets(plan: &RunPlan) -> Vec<TargetSpec> {
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
        });
    }
    out
}

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
    per_target.max(0) as u64 * targets as u64
}

/// Runs the plan.
pub async fn run(plan: RunPlan, opts: Options, cancel: Cancel) -> Result<Outcome, CollectError> {
    let layout = Layout::new(&opts.out);
    write_copies(&plan, &layout)?;
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
    for t in &targets {
        if cancel.is_cancelled() {
            break;
        }
        ctx.run_target(t).await?;
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
    /// Reaches or launches the target's server, runs every profile, stops the server.
    async fn run_target(&mut self, t: &TargetSpec) -> Result<(), CollectError> {
        let (base, launched) = match self.reach(t).await? {
            Some(reached) => reached,
            None => return Ok(()),
        };
        let tgt = &self.plan.raw.target;
        let max_conc = self
            .plan
            .profiles
            .iter()
            .filter_map(|p| p.workload.concurrency)
            .max()
            .unwrap_or(1) as usize;
        let client = Client::new(
            &base,
            tgt.api,
            self.opts.api_key.clone(),
            max_conc,
            Duration::from_secs_f64(tgt.request_timeout_s),
            Duration::from_secs_f64(tgt.stall_timeout_s.unwrap_or(tgt.request_timeout_s)),
        )?;
        let mut written: Vec<(PathBuf, Run)> = Vec::new();
        for p in &self.plan.profiles {
            if self.cancel.is_cancelled() {
                break;
            }
            let done = self
                .run_profile(t, p, &client, &base, launched.as_ref())
                .await?;
            written.push(done);
        }
        if let Some(l) = launched {
            let (code, tail) = l.stop().await;
            for (path, run) in &mut written {
                if let Some(s) = &mut run.server {
                    s.exit_status = code;
                    s.log_tail = tail.clone();
                }
                write::json_compact(path, run).map_err(CollectError::write(path.clone()))?;
            }
        }
        Ok(())
    }

    /// The base URL of the target's server, launching it when the plan says so. `None` when
    /// the launch failed (a failed run file per profile is written instead).
    async fn reach(
        &mut self,
        t: &TargetSpec,
    ) -> Result<Option<(String, Option<Launched>)>, CollectError> {
        let cmd = match (&t.command, &t.endpoint) {
            (Some(cmd), _) => cmd,
            (None, Some(ep)) => return Ok(Some((ep.clone(), None))),
            (None, None) => {
                return Err(CollectError::Plan(format!(
                    "target {}: no endpoint and no server command",
                    t.name
                )))
            }
        };
        let knob = &self.plan.raw.plan.knob;
        let mut vars: BTreeMap<String, String> = self.plan.raw.vars.clone();
        vars.insert("value".into(), t.value.to_string());
        vars.insert(knob.clone(), t.value.to_string());
        vars.insert("name".into(), t.name.clone());
        if let Some(m) = &t.model_path {
            vars.insert("model_path".into(), m.clone());
        }
        let log = self.layout.server_log(&t.name);
        self.progress.say(&format!(
            "starting server for {} ({knob} = {})",
            t.name, t.value
        ));
        let tgt = &self.plan.raw.target;
        let timeout = Duration::from_secs_f64(tgt.health_timeout_s);
        match server::launch(cmd, &vars, &log, &tgt.health_path, timeout).await {
            Ok(l) => {
                self.progress.say(&format!(
                    "  healthy after {:.1}s at {} (pid {})",
                    l.startup_s, l.base_url, l.pid
                ));
                Ok(Some((l.base_url.clone(), Some(l))))
            }
            Err(e) => {
                self.progress
                    .say(&format!("  server for {} failed to start: {e}", t.name));
                self.record_failed_start(t, cmd, &log, &e)?;
                Ok(None)
            }
        }
    }

    fn record_failed_start(
        &mut self,
        t: &TargetSpec,
        cmd: &str,
        log: &std::path::Path,
        why: &str,
    ) -> Result<(), CollectError> {
        for p in &self.plan.profiles {
            let mut run = skeleton(self.plan, t, p, None);
            run.status = RunStatus::Failed;
            run.evidence_level = EvidenceLevel::FailedBackendProfile;
            run.failure = Some(format!("server did not start: {why}"));
            run.server = Some(ServerInfo {
                command: shell_words::split(cmd).unwrap_or_default(),
                exit_status: None,
                startup_s: None,
                log_tail: server::log_tail(log, 20),
            });
            let path = self.layout.run(p.name.as_str(), t.role, &t.name);
            write::json_compact(&path, &run).map_err(CollectError::write(path.clone()))?;
            self.outcome.incomplete.push(path.display().to_string());
            self.outcome.runs.push(path);
        }
        Ok(())
    }

    /// One profile of one target: journal, collect, write the run file, drop the journal.
    async fn run_profile(
        &mut self,
        t: &TargetSpec,
        p: &Profile,
        client: &Client,
        base: &str,
        launched: Option<&Launched>,
    ) -> Result<(PathBuf, Run), CollectError> {
        let tgt = &self.plan.raw.target;
        let mut run = skeleton(self.plan, t, p, Some(base));
        if let Some(l) = launched {
            run.server = Some(ServerInfo {
                command: l.command.clone(),
                exit_status: None,
                startup_s: Some(l.startup_s),
                log_tail: None,
            });
        }
        run.notes.extend(self.gpu.note.clone());
        let path = self.layout.run(p.name.as_str(), t.role, &t.name);
        let journal_path = self.layout.journal(p.name.as_str(), &t.name);
        let mut journal =
            Journal::create(&journal_path, &run).map_err(CollectError::write(&journal_path))?;
        let ctx = crate::collect::ProfileCtx {
            client,
            profile: p,
            target: t,
            pid: launched.map(|l| l.pid),
            gpu: self.gpu,
            api: tgt.api,
            ignore_eos: tgt.ignore_eos,
            extra: &tgt.extra_body,
            metrics_url: (!tgt.metrics_path.is_empty())
                .then(|| format!("{base}{}", tgt.metrics_path)),
            health_path: &tgt.health_path,
        };
        crate::collect::collect_profile(&ctx, &mut run, &mut journal, self.cancel, self.progress)
            .await;
        if run.status != RunStatus::Ok {
            self.outcome.incomplete.push(path.display().to_string());
        }
        if let Err(source) = write::json_compact(&path, &run) {
            self.cancel.cancel(StopReason::RunFileWrite(format!(
                "{}: {source}",
                path.display()
            )));
            return Err(CollectError::RunFile {
                path,
                journal: journal_path,
                source,
            });
        }
        journal.remove();
        self.outcome.runs.push(path.clone());
        Ok((path, run))
    }
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
            knob: Some(plan.raw.plan.knob.clone()),
            value: Some(t.value.clone()),
        },
        backend: t.artifact.backend.clone(),
        backend_version: t.artifact.backend_version.clone(),
        hardware: t.artifact.hardware.clone(),
        endpoint: base.map(|b| EndpointInfo {
            url: redact_url(b),
            api: plan.raw.target.api.as_str().into(),
            model: t.model.clone(),
        }),
        status: RunStatus::Ok,
        failure: None,
        evidence_level: EvidenceLevel::RealBackendProfile,
        source: RunSource::Measured,
        imported_from: None,
        started_at: Some(rfc3339_now()),
        finished_at: None,
        server: None,
        notes: Vec::new(),
        repeats: Vec::new(),
        reported: None,
    }
}
