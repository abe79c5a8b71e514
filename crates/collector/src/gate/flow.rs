//! The gate's front door in the collector: resolve the settings, reach both servers (given by
//! URL, or launched from the plan), score the evaluation set, and have the core make the record
//! ([`sloscope_core::gate::outcome`]); [`write`] writes it atomically. The CLI only turns flags
//! into [`Given`] and the [`Outcome`] into words and an exit code.

use std::path::{Path, PathBuf};

use sloscope_core::gate::{outcome, Outcome, Setup};
use sloscope_core::schema::{Deployment, EvalSet, FloatBaseline};
use sloscope_core::Document;

use super::plan::{from_plan, PlanGate};
use super::settings::{resolve, Given, Settings};
use super::{read_eval_set, run, Job, Server};
use crate::plan::target::TargetSpec;
use crate::wire::secret::redact_url;

/// The servers and records of a gate measured without a plan.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The quantized model's server.
    pub quantized: Server,
    /// The float model's server.
    pub float: Server,
    /// The deployment record of the quantized artifact.
    pub deployment: PathBuf,
    /// The float-baseline record.
    pub baseline: PathBuf,
}

/// Measures the gate on two running servers.
pub async fn with_endpoints(g: &Given, e: Endpoints) -> Result<(Settings, Outcome), String> {
    let s = resolve(g, None, None, None)?;
    let dep = record(&e.deployment, "deployment", |d| match d {
        Document::Deployment(d) => Some(d),
        _ => None,
    })?;
    let base = record(&e.baseline, "float_baseline", |d| match d {
        Document::FloatBaseline(b) => Some(b),
        _ => None,
    })?;
    let o = measure(&s, &dep, &base, e.quantized, e.float).await?;
    Ok((s, o))
}

/// Measures the gate on the servers the plan describes, started for the scoring and stopped
/// after it; their logs beside the plan, in `logs/`, where `run --out` beside it keeps its own.
pub async fn with_plan(g: &Given, path: &Path) -> Result<(Settings, Outcome), String> {
    let pg = from_plan(path)?;
    let s = resolve(
        g,
        Some(&pg.section),
        Some(pg.eval.clone()),
        Some(pg.out.clone()),
    )?;
    let logs = path.parent().unwrap_or(Path::new(".")).join("logs");
    let q = pg.reach(&pg.quantized, &logs).await?;
    let f = match pg.reach(&pg.float, &logs).await {
        Ok(f) => f,
        Err(e) => {
            q.stop().await;
            return Err(e);
        }
    };
    let server = |t: &TargetSpec, url: &str| Server {
        url: url.trim_end_matches('/').into(),
        model: t.model.clone().unwrap_or_else(|| "default".into()),
    };
    let (qs, fs) = (server(&pg.quantized, &q.url), server(&pg.float, &f.url));
    let PlanGate {
        deployment,
        baseline,
        ..
    } = pg;
    let r = measure(&s, &deployment, &baseline, qs, fs).await;
    q.stop().await;
    f.stop().await;
    Ok((s, r?))
}

/// Writes the record where the settings say, atomically.
pub fn write(s: &Settings, o: &Outcome) -> Result<(), String> {
    crate::record::write::json(&s.out, &o.record)
        .map_err(|e| format!("{}: cannot write: {e}", s.out.display()))
}

fn record<T>(path: &Path, what: &str, pick: fn(Document) -> Option<T>) -> Result<T, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let doc = sloscope_core::read_document(&name, bytes).map_err(|e| e.to_string())?;
    pick(doc).ok_or_else(|| format!("{name}: expected a {what} record"))
}

async fn measure(
    s: &Settings,
    dep: &Deployment,
    base: &FloatBaseline,
    quantized: Server,
    float: Server,
) -> Result<Outcome, String> {
    let (texts, sha) = read_eval_set(&s.eval)?;
    let job = Job {
        backend: s.backend,
        quantized,
        float,
        top_k: s.top_k,
        max_tokens: s.max_tokens,
        chunk: s.chunk,
        timeout: s.timeout,
    };
    let scored = run(&job, &texts).await?;
    let name = s
        .eval
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let setup = Setup {
        deployment: dep,
        baseline: base,
        eval_set: EvalSet {
            name,
            sha256: sha,
            texts: texts.len() as u32,
        },
        urls: (redact_url(&job.quantized.url), redact_url(&job.float.url)),
        backend: job.backend.name(),
        top_k: s.top_k,
        chunk: s.chunk,
        thresholds: s.thresholds,
        notes: s.notes.clone(),
    };
    Ok(outcome(setup, scored))
}
