//! The whole collection: for each candidate (and the float baseline) start or reach its server,
//! run every profile's repeats, and write one run file per candidate × profile, plus copies of
//! the plan and the lineage records. Requests are journaled as they finish; run files are
//! written atomically; an interruption leaves every finished request on disk, marked partial.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sloscope_core::contract::Profile;
use sloscope_core::schema::{
    ArtifactIdentity, CandidateRef, EndpointInfo, EvidenceLevel, Kind, KnobValue, Role, Run,
    RunSource, RunStatus, ServerInfo, ToolInfo, SCHEMA_VERSION,
};

use crate::cancel::Cancel;
use crate::client::Client;
use crate::config::RunPlan;
use crate::journal::Journal;
use crate::progress::Progress;
use crate::secret::{redact_url, Secret};
use crate::server::{self, Launched};
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

/// One server configuration to measure.
pub(crate) struct TargetSpec {
    pub(crate) role: Role,
    pub(crate) name: String,
    pub(crate) value: KnobValue,
    pub(crate) artifact: ArtifactIdentity,
    pub(crate) endpoint: Option<String>,
    pub(crate) command: Option<String>,
    pub(crate) model_path: Option<String>,
    pub(crate) model: Option<String>,
}

/// Runs the plan.
pub async fn run(plan: RunPlan, opts: Options, cancel: Cancel) -> anyhow::Result<Outcome> {
    let out = &opts.out;
    for d in ["runs", "lineage", "journal", "logs"] {
        std::fs::create_dir_all(out.join(d))?;
    }
    // The plan as run: only the selected profiles and candidates.
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
    write::json(&out.join("plan.json"), &effective)?;
    for ((name, bytes), kind) in plan
        .lineage_files
        .iter()
        .zip(["gate", "baseline", "deployment"])
    {
        let _ = name;
        write::atomic(&out.join("lineage").join(format!("{kind}.json")), bytes)?;
    }
    let knob = plan.raw.plan.knob.clone();
    let mut targets: Vec<TargetSpec> = plan
        .candidates
        .iter()
        .map(|c| TargetSpec {
            role: Role::Candidate,
            name: c.name.clone(),
            value: c.value.clone(),
            artifact: plan.deployment.artifact.clone(),
            endpoint: plan.raw.target.endpoint.clone(),
            command: plan.raw.target.server_command.clone(),
            model_path: plan.raw.target.model_path.clone(),
            model: plan.raw.target.model.clone(),
        })
        .collect();
    if let Some(b) = &plan.baseline {
        targets.push(TargetSpec {
            role: Role::Baseline,
            name: b.name.clone(),
            value: b.value.clone(),
            artifact: plan.baseline_record.artifact.clone(),
            endpoint: b.endpoint.clone().or_else(|| {
                plan.raw
                    .target
                    .endpoint
                    .clone()
                    .filter(|_| b.server_command.is_none())
            }),
            command: b
                .server_command
                .clone()
                .or_else(|| plan.raw.target.server_command.clone()),
            model_path: b.model_path.clone(),
            model: b.model.clone().or_else(|| plan.raw.target.model.clone()),
        });
    }
    let total: u64 = plan
        .profiles
        .iter()
        .map(|p| {
            let w = &p.workload;
            let per = w.requests_per_repeat.unwrap_or(0) + w.warmup_requests.unwrap_or(0);
            (per * w.repeats.unwrap_or(1)) as u64
        })
        .sum::<u64>()
        * targets.len() as u64;
    let mut progress = Progress::new(opts.quiet, total);
    let gpu = Gpu::init();
    if let Some(d) = gpu.describe() {
        progress.say(&format!("GPU memory sampled through NVML: {d}"));
    }
    let mut outcome = Outcome::default();
    for t in &targets {
        if cancel.is_cancelled() {
            break;
        }
        let mut vars: BTreeMap<String, String> = plan.raw.vars.clone();
        vars.insert("value".into(), t.value.to_string());
        vars.insert(knob.clone(), t.value.to_string());
        vars.insert("name".into(), t.name.clone());
        if let Some(m) = &t.model_path {
            vars.insert("model_path".into(), m.clone());
        }
        let mut launched: Option<Launched> = None;
        let base = match (&t.command, &t.endpoint) {
            (Some(cmd), _) => {
                let log = out.join("logs").join(format!("server-{}.log", t.name));
                progress.say(&format!(
                    "starting server for {} ({knob} = {})",
                    t.name, t.value
                ));
                let timeout = Duration::from_secs_f64(plan.raw.target.health_timeout_s);
                match server::launch(cmd, &vars, &log, &plan.raw.target.health_path, timeout).await
                {
                    Ok(l) => {
                        progress.say(&format!(
                            "  healthy after {:.1}s at {} (pid {})",
                            l.startup_s, l.base_url, l.pid
                        ));
                        let b = l.base_url.clone();
                        launched = Some(l);
                        b
                    }
                    Err(e) => {
                        progress.say(&format!("  server for {} failed to start: {e}", t.name));
                        for p in &plan.profiles {
                            let mut run = skeleton(&plan, t, p, None, &knob);
                            run.status = RunStatus::Failed;
                            run.evidence_level = EvidenceLevel::FailedBackendProfile;
                            run.failure = Some(format!("server did not start: {e}"));
                            run.server = Some(ServerInfo {
                                command: shell_words::split(cmd).unwrap_or_default(),
                                exit_status: None,
                                startup_s: None,
                                log_tail: server::log_tail(&log, 20),
                            });
                            let path = run_path(out, t, p);
                            write::json_compact(&path, &run)?;
                            outcome.incomplete.push(path.display().to_string());
                            outcome.runs.push(path);
                        }
                        continue;
                    }
                }
            }
            (None, Some(ep)) => ep.clone(),
            (None, None) => anyhow::bail!("target {}: no endpoint and no server command", t.name),
        };
        let max_conc = plan
            .profiles
            .iter()
            .filter_map(|p| p.workload.concurrency)
            .max()
            .unwrap_or(1) as usize;
        let tgt = &plan.raw.target;
        let client = Client::new(
            &base,
            tgt.api,
            opts.api_key.clone(),
            max_conc,
            Duration::from_secs_f64(tgt.request_timeout_s),
            Duration::from_secs_f64(tgt.stall_timeout_s.unwrap_or(tgt.request_timeout_s)),
        )
        .map_err(anyhow::Error::msg)?;
        let mut written: Vec<(PathBuf, Run)> = Vec::new();
        for p in &plan.profiles {
            if cancel.is_cancelled() {
                break;
            }
            let mut run = skeleton(&plan, t, p, Some(&base), &knob);
            if let Some(l) = &launched {
                run.server = Some(ServerInfo {
                    command: l.command.clone(),
                    exit_status: None,
                    startup_s: Some(l.startup_s),
                    log_tail: None,
                });
            }
            if let Some(n) = &gpu.note {
                run.notes.push(n.clone());
            }
            let path = run_path(out, t, p);
            let journal_path = out
                .join("journal")
                .join(format!("{}--{}.journal.jsonl", p.name, t.name));
            let mut journal = Journal::create(&journal_path, &run)?;
            let ctx = crate::collect::ProfileCtx {
                client: &client,
                profile: p,
                target: t,
                pid: launched.as_ref().map(|l| l.pid),
                gpu: &gpu,
                api: tgt.api,
                ignore_eos: tgt.ignore_eos,
                extra: &tgt.extra_body,
                metrics_url: (!tgt.metrics_path.is_empty())
                    .then(|| format!("{base}{}", tgt.metrics_path)),
                health_path: &tgt.health_path,
            };
            crate::collect::collect_profile(&ctx, &mut run, &mut journal, &cancel, &mut progress)
                .await;
            if run.status != RunStatus::Ok {
                outcome.incomplete.push(path.display().to_string());
            }
            match write::json_compact(&path, &run) {
                Ok(()) => journal.remove(),
                Err(e) => {
                    cancel.cancel(&format!("cannot write {}: {e}", path.display()));
                    anyhow::bail!(
                        "cannot write {}: {e}; every finished request is in {}",
                        path.display(),
                        journal_path.display()
                    );
                }
            }
            outcome.runs.push(path.clone());
            written.push((path, run));
        }
        if let Some(l) = launched {
            let (code, tail) = l.stop().await;
            for (path, run) in &mut written {
                if let Some(s) = &mut run.server {
                    s.exit_status = code;
                    s.log_tail = tail.clone();
                }
                write::json_compact(path, run)?;
            }
        }
    }
    Ok(outcome)
}

fn run_path(out: &Path, t: &TargetSpec, p: &Profile) -> PathBuf {
    let role = match t.role {
        Role::Candidate => "",
        Role::Baseline => "baseline-",
    };
    out.join("runs")
        .join(format!("{}--{role}{}.json", p.name, t.name))
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
    skeleton(plan, &t, p, None, &plan.raw.plan.knob)
}

fn skeleton(plan: &RunPlan, t: &TargetSpec, p: &Profile, base: Option<&str>, knob: &str) -> Run {
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
            knob: Some(knob.to_string()),
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

/// Wall-clock time as RFC 3339 (UTC), for the record only.
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
