//! The whole collection: for each candidate (and the float baseline) start or reach its server,
//! run every profile's repeats, and write one run file per candidate × profile, plus copies of
//! the plan and the lineage records. Requests are journaled as they finish; run files are
//! written atomically; an interruption leaves every finished request on disk, marked partial.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use sloscope_core::analyse::capacity::{self, Search};
use sloscope_core::check::contract::Profile;
use sloscope_core::schema::{
    CandidateRef, EndpointInfo, EvidenceLevel, Kind, Role, Run, RunSource, RunStatus, ServerInfo,
    ToolInfo, Trial, SCHEMA_VERSION,
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
use crate::secret::{redact_run, redact_url, Redactor, Secret};
use crate::server::{self, LaunchError, Launched};
use crate::target::TargetSpec;
use crate::telemetry::Gpu;
use crate::write;

mod search;

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
/// and the lineage copies.
pub fn write_copies(
    plan: &RunPlan,
    layout: &Layout,
    redactor: &Redactor,
) -> Result<(), CollectError> {
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
    let value = redactor
        .to_value(&effective)
        .map_err(|e| CollectError::write(path.clone())(std::io::Error::other(e)))?;
    write::json(&path, &value).map_err(CollectError::write(path))?;
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

/// Runs the plan. `cancel` is the whole collection's flag; each target gets a child of it.
pub async fn run(plan: RunPlan, opts: Options, cancel: Cancel) -> Result<Outcome, CollectError> {
    let layout = Layout::new(&opts.out);
    write_copies(&plan, &layout, &opts.redactor)?;
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
            ctx.not_run(t, &cancel.message());
            continue;
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

/// How a target's server was reached.
enum Reached {
    /// At this base URL; `Some` when sloscope launched it.
    Up(String, Option<Launched>),
    /// The launch failed (failed run files are written).
    Failed,
    /// Cancelled before the server was healthy.
    Cancelled,
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
                crate::spill::rewrite_header(path, &before, run)
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
                    .filter(|s| s.over == capacity::LoadAxis::Concurrency)
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
        let mut written: Vec<(PathBuf, Run)> = Vec::new();
        for p in &self.plan.profiles {
            if tc.is_cancelled() {
                let why = tc.message();
                self.outcome
                    .not_run
                    .push(format!("{} / {}: not run: {why}", p.name, t.name));
                continue;
            }
            let done = self.run_profile(t, p, &client, base, launched, tc).await?;
            self.say_failures(t, p, &done.1, launched);
            written.push(done);
            let m = Measure {
                t,
                client: &client,
                base,
                launched,
                tc,
            };
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
            let tail = server::log_tail(&l.log_path, 20).unwrap_or_default();
            let tail = self.opts.redactor.text(&tail);
            self.progress.warn(&format!(
                "the server's log ({}) ends:\n{tail}",
                l.log_path.display()
            ));
        }
    }

    /// Rewrites the server's log with every credential redacted (a server may echo its
    /// command line).
    fn redact_log(&self, log: &std::path::Path) {
        if self.opts.redactor.is_empty() {
            return;
        }
        if let Ok(bytes) = std::fs::read(log) {
            let text = String::from_utf8_lossy(&bytes);
            let clean = self.opts.redactor.text(&text);
            if clean != text {
                let _ = write::atomic(log, clean.as_bytes());
            }
        }
    }

    /// The base URL of the target's server, launching it when the plan says so.
    async fn reach(&mut self, t: &TargetSpec, tc: &Cancel) -> Result<Reached, CollectError> {
        let cmd = match (&t.command, &t.endpoint) {
            (Some(cmd), _) => cmd,
            (None, Some(ep)) => return Ok(Reached::Up(ep.clone(), None)),
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
        if let Some(k) = &self.opts.api_key {
            vars.insert("api_key".into(), k.expose().to_string());
        }
        let log = self.layout.server_log(&t.name);
        self.progress.say(&format!(
            "starting server for {} ({knob} = {})",
            t.name, t.value
        ));
        let tgt = &self.plan.raw.target;
        let spec = server::LaunchSpec {
            template: cmd,
            vars: &vars,
            log_path: &log,
            health_path: &tgt.health_path,
            health_timeout: Duration::from_secs_f64(tgt.health_timeout_s),
            api_key: self.opts.api_key.as_ref(),
        };
        match server::launch(&spec, self.cancel, tc).await {
            Ok(mut l) => {
                l.command = l
                    .command
                    .iter()
                    .map(|a| self.opts.redactor.text(a))
                    .collect();
                self.progress.say(&format!(
                    "  healthy after {:.1}s at {} (pid {})",
                    l.startup_s, l.base_url, l.pid
                ));
                Ok(Reached::Up(l.base_url.clone(), Some(l)))
            }
            Err(LaunchError::Cancelled) => Ok(Reached::Cancelled),
            Err(LaunchError::Failed(e)) => {
                self.redact_log(&log);
                let e = self.opts.redactor.text(&e);
                self.progress
                    .warn(&format!("the server for {} did not start: {e}", t.name));
                self.record_failed_start(t, cmd, &log, &e)?;
                Ok(Reached::Failed)
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
            redact_run(&self.opts.redactor, &mut run);
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
        tc: &Cancel,
    ) -> Result<(PathBuf, Run), CollectError> {
        let m = Measure {
            t,
            client,
            base,
            launched,
            tc,
        };
        self.measure(&m, p, None).await
    }

    /// Collects `p` (the profile, or one trial's version of it) into a run file. A trial
    /// (`Some((trial, search))`) runs one repeat at a time, and more while its SLO interval
    /// straddles a limit, up to the search's request cap.
    async fn measure(
        &mut self,
        m: &Measure<'_>,
        p: &Profile,
        trial: Option<(Trial, &Search, &Profile)>,
    ) -> Result<(PathBuf, Run), CollectError> {
        let (mut run, path, mut journal) =
            self.open_run(m, p, trial.as_ref().map(|x| x.0.clone()))?;
        let mut ctx = profile_ctx(self.plan, self.gpu, self.opts, m, p);
        let mut rows = Vec::new();
        crate::collect::collect_profile(
            &ctx,
            &mut run,
            &mut rows,
            &mut journal,
            m.tc,
            self.progress,
        )
        .await;
        if let Some((_, search, planned)) = &trial {
            let file = path.display().to_string();
            while run.status == RunStatus::Ok && !m.tc.is_cancelled() {
                let full = crate::spill::materialize(&run, &rows, journal.path())
                    .map_err(CollectError::write(journal.path()))?;
                let report = capacity::evaluate_trial(&file, &full, planned);
                if !capacity::needs_more_requests(&report, search) {
                    break;
                }
                ctx.first_repeat = run.repeats.len() as u32;
                self.progress.say(&format!(
                    "  {} / {}: an SLO interval straddles its limit at {}; {} more requests",
                    p.name,
                    m.t.name,
                    capacity::load_text(search.over, run.trial.as_ref().map_or(0.0, |x| x.load)),
                    p.workload.requests_per_repeat.unwrap_or(1)
                ));
                let (c, tc) = (&ctx, m.tc);
                crate::collect::collect_profile(
                    c,
                    &mut run,
                    &mut rows,
                    &mut journal,
                    tc,
                    self.progress,
                )
                .await;
            }
            let mut seen = std::collections::BTreeSet::new();
            run.notes.retain(|n| seen.insert(n.clone()));
        }
        redact_run(&self.opts.redactor, &mut run);
        self.close_run(m.tc, path, run, &rows, journal, trial.is_some())
    }

    /// The run's header, its file's path and its journal, opened.
    fn open_run(
        &self,
        m: &Measure<'_>,
        p: &Profile,
        trial: Option<Trial>,
    ) -> Result<(Run, PathBuf, Journal), CollectError> {
        let mut run = skeleton(self.plan, m.t, p, Some(m.base));
        if let Some(l) = m.launched {
            run.server = Some(ServerInfo {
                command: l.command.clone(),
                exit_status: None,
                startup_s: Some(l.startup_s),
                log_tail: None,
            });
        }
        run.notes.extend(self.gpu.note.clone());
        let (name, t) = (p.name.as_str(), m.t);
        let (path, journal_path) = match &trial {
            None => (
                self.layout.run(name, t.role, &t.name),
                self.layout.journal(name, &t.name),
            ),
            Some(tr) => (
                self.layout
                    .trial(name, &t.name, tr.index, &tr.over, tr.load),
                self.layout.trial_journal(name, &t.name, tr.index),
            ),
        };
        run.trial = trial;
        let journal =
            Journal::create(&journal_path, &run).map_err(CollectError::write(&journal_path))?;
        Ok((run, path, journal))
    }

    /// Writes the run file from the journal, then drops the journal. A trial's run is returned
    /// with its requests (its search judges it by them); a fixed-load run as its header.
    fn close_run(
        &mut self,
        tc: &Cancel,
        path: PathBuf,
        run: Run,
        rows: &[crate::spill::RepeatRows],
        journal: Journal,
        with_requests: bool,
    ) -> Result<(PathBuf, Run), CollectError> {
        if run.status != RunStatus::Ok {
            self.outcome.incomplete.push(path.display().to_string());
        }
        let total: u64 = rows.iter().map(|r| r.len() as u64).sum();
        // Written from the journal in a stream: the collector never holds the run's requests.
        if let Err(source) = crate::spill::write_run(&path, &run, rows, journal.path()) {
            let e = CollectError::RunFile {
                path,
                journal: journal.path().to_path_buf(),
                journaled: journal.requests(),
                total,
                source,
            };
            self.cancel
                .cancel_all(StopReason::RunFileWrite(e.to_string()));
            return Err(e);
        }
        if matches!(tc.reason(), Some(StopReason::JournalWrite(_))) {
            self.progress.warn(&format!(
                "{}: the run file was written after all, with all {total} finished requests; its journal ({} of them) is removed",
                path.display(),
                journal.requests()
            ));
        }
        let run = match with_requests {
            true => crate::spill::materialize(&run, rows, journal.path())
                .map_err(CollectError::write(journal.path()))?,
            false => run,
        };
        journal.remove();
        self.outcome.runs.push(path.clone());
        Ok((path, run))
    }
}

/// What collecting profile `p` of the target of `m` needs.
fn profile_ctx<'b>(
    plan: &'b RunPlan,
    gpu: &'b Gpu,
    opts: &'b Options,
    m: &Measure<'b>,
    p: &'b Profile,
) -> crate::collect::ProfileCtx<'b> {
    let tgt = &plan.raw.target;
    crate::collect::ProfileCtx {
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
        import: None,
        started_at: Some(rfc3339_now()),
        finished_at: None,
        server: None,
        notes: Vec::new(),
        repeats: Vec::new(),
        reported: None,
        trial: None,
    }
}
