//! `sloscope gate`: measures the quantized artifact against its float baseline through two
//! servers — given by their URLs, or launched from a plan's `[gate]` section as `run` launches
//! them — and writes the quality-gate record with its evidence, bound to both artifacts as the
//! deployment and float-baseline records name them.
//!
//! Exit codes: 0 accept · 1 reject · 2 bad input (nothing scored) · 3 partial (a server died or
//! erred part-way: what was scored is written, and rejected) · 4 the record could not be written ·
//! 5 not enough evidence (every figure within its limit, but not every bound: the record says
//! what would decide it, and its decision is `tune`).

mod settings;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use sloscope_collector::gate::{self, plan::PlanGate, Job, Server};
use sloscope_core::check::gate::{decide, figures, insufficient, intervals};
use sloscope_core::schema::{
    Decision, Deployment, EvalSet, FloatBaseline, GateArtifact, GateDecision, GateEvidence, Kind,
    QualityGate, SCHEMA_VERSION,
};
use sloscope_core::Document;

pub use settings::Args;

use crate::exit::Gate;
use settings::{resolve, Settings};

fn record<T>(path: &PathBuf, pick: fn(Document) -> Option<T>, what: &str) -> Result<T, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let doc = sloscope_core::read_document(&name, bytes).map_err(|e| e.to_string())?;
    pick(doc).ok_or_else(|| format!("{name}: expected a {what} record"))
}

fn artifact(a: &sloscope_core::schema::ArtifactIdentity, url: &str) -> GateArtifact {
    GateArtifact {
        artifact_id: a.artifact_id.clone(),
        artifact_sha256: a.artifact_sha256.clone(),
        endpoint: Some(sloscope_collector::wire::secret::redact_url(url)),
    }
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = match &a.plan {
        Some(p) => rt.block_on(with_plan(&a, p)),
        None => with_endpoints(&a)
            .and_then(|(s, dep, base, q, f)| rt.block_on(measure(&s, dep, base, q, f))),
    };
    done.or_else(|e| {
        eprintln!("sloscope: gate: {e}");
        Ok(ExitCode::from(Gate::Bad))
    })
}

type Resolved = (Settings, Deployment, FloatBaseline, Server, Server);

fn with_endpoints(a: &Args) -> Result<Resolved, String> {
    let s = resolve(a, None, None, None)?;
    let need = |v: &Option<PathBuf>, flag: &str| {
        v.clone()
            .ok_or_else(|| format!("{flag}: expected a file (or --plan)"))
    };
    let dep: Deployment = record(
        &need(&a.deployment, "--deployment")?,
        |d| match d {
            Document::Deployment(d) => Some(d),
            _ => None,
        },
        "deployment",
    )?;
    let base: FloatBaseline = record(
        &need(&a.baseline, "--baseline")?,
        |d| match d {
            Document::FloatBaseline(b) => Some(b),
            _ => None,
        },
        "float_baseline",
    )?;
    let server = |url: &Option<String>, flag: &str, model: &str| {
        url.as_ref()
            .map(|u| Server {
                url: u.trim_end_matches('/').into(),
                model: model.into(),
            })
            .ok_or_else(|| format!("{flag}: expected the server's URL (or --plan)"))
    };
    let q = server(&a.quantized, "--quantized", &a.quantized_model)?;
    let f = server(&a.float, "--float", &a.float_model)?;
    Ok((s, dep, base, q, f))
}

/// `--plan`: the servers the plan describes, started for the scoring and stopped after it.
async fn with_plan(a: &Args, path: &std::path::Path) -> Result<ExitCode, String> {
    let pg = gate::plan::from_plan(path)?;
    let s = resolve(
        a,
        Some(&pg.section),
        Some(pg.eval.clone()),
        Some(pg.out.clone()),
    )?;
    // Beside the plan, where `run --out` beside it keeps its server logs.
    let logs = path
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("logs");
    let q = pg.reach(&pg.quantized, &logs).await?;
    let f = match pg.reach(&pg.float, &logs).await {
        Ok(f) => f,
        Err(e) => {
            q.stop().await;
            return Err(e);
        }
    };
    let server = |t: &sloscope_collector::plan::target::TargetSpec, url: &str| Server {
        url: url.trim_end_matches('/').into(),
        model: t.model.clone().unwrap_or_else(|| "default".into()),
    };
    let (qs, fs) = (server(&pg.quantized, &q.url), server(&pg.float, &f.url));
    let PlanGate {
        deployment,
        baseline,
        ..
    } = pg;
    let r = measure(&s, deployment, baseline, qs, fs).await;
    q.stop().await;
    f.stop().await;
    r
}

async fn measure(
    s: &Settings,
    dep: Deployment,
    base: FloatBaseline,
    quantized: Server,
    float: Server,
) -> Result<ExitCode, String> {
    let (texts, sha) = gate::read_eval_set(&s.eval)?;
    let job = Job {
        backend: s.backend,
        quantized,
        float,
        top_k: s.top_k,
        max_tokens: s.max_tokens,
        chunk: s.chunk,
        timeout: s.timeout,
    };
    let scored = gate::run(&job, &texts).await?;
    let f = figures(&scored.positions);
    let iv = intervals(&scored.positions);
    let decision = decide(&f, iv.as_ref(), &s.thresholds, scored.partial.is_some());
    let name = s
        .eval
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let evidence = GateEvidence {
        method: "teacher_forced_next_token".into(),
        top_k: s.top_k,
        chunk_tokens: s.chunk.map(|n| n as u32),
        eval_set: EvalSet {
            name,
            sha256: sha,
            texts: texts.len() as u32,
        },
        quantized: artifact(&dep.artifact, &job.quantized.url),
        float: artifact(&base.artifact, &job.float.url),
        backend: job.backend.name().into(),
        backend_version: dep.artifact.backend_version.clone(),
        thresholds: s.thresholds,
        figures: f,
        noise_floor: Some(figures(&scored.noise)),
        intervals: iv,
        decision,
        partial: scored.partial.clone(),
        positions: scored.positions,
        noise_positions: Some(scored.noise),
    };
    Ok(write(s, dep, evidence))
}

fn quality(e: &GateEvidence) -> BTreeMap<String, f64> {
    let f = &e.figures;
    [
        ("kld_mean", f.kld_mean),
        ("kld_p99", f.kld_p99),
        ("top1_agreement", f.top1_agreement),
        ("ppl_ratio", f.ppl_ratio),
        ("delta_p_rms", f.delta_p_rms),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect()
}

fn write(s: &Settings, dep: Deployment, e: GateEvidence) -> ExitCode {
    let accepted = e.decision == GateDecision::Accept;
    let unsure = insufficient(&e.figures, e.intervals.as_ref(), &e.thresholds);
    let undecided = e.decision == GateDecision::NotEnoughEvidence;
    let f = e.figures;
    let fmt = |v: Option<f64>| v.map_or_else(|| "null".into(), |v| format!("{v:.4}"));
    let summary = format!(
        "measured by sloscope gate over {} positions (top-{}): KL divergence mean {} (lower bound), top-1 agreement {}, perplexity ratio {}",
        f.positions, e.top_k, fmt(f.kld_mean), fmt(f.top1_agreement), fmt(f.ppl_ratio)
    );
    let partial = e.partial.clone();
    let gate = QualityGate {
        kind: Kind::QualityGate,
        schema_version: SCHEMA_VERSION.into(),
        artifact: dep.artifact,
        quality: quality(&e),
        decision: match e.decision {
            GateDecision::Accept => Decision::Accept,
            GateDecision::Reject => Decision::Reject,
            GateDecision::NotEnoughEvidence => Decision::Tune,
        },
        notes: Some(match &s.notes {
            Some(n) => format!("{n} — {summary}"),
            None => summary.clone(),
        }),
        evidence: Some(Box::new(e)),
    };
    if let Err(err) = sloscope_collector::record::write::json(&s.out, &gate) {
        eprintln!("sloscope: gate: {}: cannot write: {err}", s.out.display());
        return ExitCode::from(Gate::Output);
    }
    eprintln!(
        "sloscope: gate: {} — {summary}",
        sloscope_core::show::view::gate_label(
            gate.evidence
                .as_ref()
                .map_or(GateDecision::Reject, |e| e.decision)
        )
    );
    if let Some(p) = partial {
        eprintln!("sloscope: gate: partial, so rejected: {p}");
        return ExitCode::from(Gate::Partial);
    }
    if undecided {
        for why in &unsure {
            eprintln!("sloscope: gate: not enough evidence: {why}");
        }
        return ExitCode::from(Gate::NotEnoughEvidence);
    }
    if accepted {
        ExitCode::from(Gate::Accept)
    } else {
        ExitCode::from(Gate::Reject)
    }
}
