//! Collecting one profile against a ready endpoint: prompt calibration, warm-up, each repeat's
//! load with telemetry sampled alongside (memory, `/metrics`, the server still alive), the
//! histogram delta, and the run's status and notes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use sloscope_core::contract::Profile;
use sloscope_core::schema::{
    EvidenceLevel, MemorySample, MetricSample, Repeat, RequestColumns, RequestRow, Run, RunStatus,
};
use tokio::sync::mpsc;

use crate::cancel::Cancel;
use crate::client::Client;
use crate::config::Api;
use crate::journal::Journal;
use crate::load::{self, BodyFn, RepeatSpec};
use crate::progress::Progress;
use crate::prompt;
use crate::runner::{rfc3339_now, TargetSpec};
use crate::telemetry::{self, Gpu};

/// What collecting one profile needs.
pub(crate) struct ProfileCtx<'a> {
    pub(crate) client: &'a Client,
    pub(crate) profile: &'a Profile,
    pub(crate) target: &'a TargetSpec,
    pub(crate) pid: Option<u32>,
    pub(crate) gpu: &'a Gpu,
    pub(crate) api: Api,
    pub(crate) ignore_eos: bool,
    pub(crate) extra: &'a BTreeMap<String, serde_json::Value>,
    pub(crate) metrics_url: Option<String>,
    pub(crate) health_path: &'a str,
}

fn body_fn(ctx: &ProfileCtx<'_>, words: usize, salt: u64) -> BodyFn {
    let w = &ctx.profile.workload;
    let max_tokens = w.max_output_tokens.unwrap_or(16);
    let mut base = serde_json::Map::new();
    if let Some(m) = &ctx.target.model {
        base.insert("model".into(), m.clone().into());
    }
    base.insert("max_tokens".into(), max_tokens.into());
    base.insert("stream".into(), true.into());
    base.insert(
        "stream_options".into(),
        serde_json::json!({"include_usage": true}),
    );
    base.insert("temperature".into(), 0.into());
    if ctx.ignore_eos {
        base.insert("ignore_eos".into(), true.into());
    }
    for (k, v) in ctx.extra {
        base.insert(k.clone(), v.clone());
    }
    let api = ctx.api;
    Arc::new(move |i: u64| {
        let text = prompt::text(words, salt ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut b = base.clone();
        match api {
            Api::Completions => {
                b.insert("prompt".into(), text.into());
            }
            Api::Chat => {
                b.insert(
                    "messages".into(),
                    serde_json::json!([{"role": "user", "content": text}]),
                );
            }
        }
        Bytes::from(serde_json::to_vec(&b).unwrap_or_default())
    })
}

enum Sample {
    Memory(MemorySample),
    Metrics(MetricSample),
}

fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                == Some("Z")
        }
    }
}

/// Runs one profile's repeats against a ready endpoint and fills `run`.
pub(crate) async fn collect_profile(
    ctx: &ProfileCtx<'_>,
    run: &mut Run,
    journal: &mut Journal,
    cancel: &Cancel,
    progress: &mut Progress,
) {
    let w = &ctx.profile.workload;
    let prompts = prompt::calibrate(
        ctx.client,
        ctx.target.model.as_deref(),
        w.prompt_tokens.unwrap_or(1) as u32,
    )
    .await;
    if let Some(n) = &prompts.note {
        run.notes.push(n.clone());
    }
    let concurrency = w.concurrency.unwrap_or(1) as usize;
    ctx.client.warm_pool(concurrency, ctx.health_path).await;
    let salt = (ctx.profile.name as u64 + 1).wrapping_mul(0x9E37_79B9);
    let body = body_fn(ctx, prompts.words, salt);
    let mut simulation = false;
    let repeats = w.repeats.unwrap_or(1) as u32;
    let run_cancel = Cancel::default();
    for r in 0..repeats {
        if cancel.is_cancelled() {
            break;
        }
        let spec = RepeatSpec {
            index: r,
            requests: w.requests_per_repeat.unwrap_or(1) as usize,
            concurrency,
            rate_rps: w.request_rate_rps,
            warmup: w.warmup_requests.unwrap_or(0) as usize,
            seed: salt ^ (r as u64 + 1),
        };
        let label = format!(
            "{} / {} / repeat {}/{}",
            ctx.profile.name,
            ctx.target.name,
            r + 1,
            repeats
        );
        load::warmup(ctx.client, &spec, &body, cancel).await;
        progress.skip(spec.warmup as u64);
        if let Err(e) = journal.repeat(r, spec.warmup as u32) {
            cancel.cancel(&format!("journal write failed: {e}"));
            break;
        }
        let start_scrape = match &ctx.metrics_url {
            Some(u) => telemetry::scrape(ctx.client.http(), u).await,
            None => None,
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Sample>();
        let t0 = Instant::now();
        let stop = Cancel::default();
        let sampler = {
            let (http, url, pid, stop, cancel, tx) = (
                ctx.client.http().clone(),
                ctx.metrics_url.clone(),
                ctx.pid,
                stop.clone(),
                cancel.clone(),
                tx.clone(),
            );
            let gpu_used = ctx.gpu.used_mb().is_some();
            let gpu_reader = if gpu_used { Some(Gpu::init()) } else { None };
            tokio::spawn(async move {
                let mut tick = 0u64;
                loop {
                    let off = t0.elapsed().as_micros() as u64;
                    if let Some(pid) = pid {
                        if process_gone(pid) {
                            cancel.cancel("the server process exited during the run");
                            break;
                        }
                    }
                    if tick % 4 == 0 {
                        let gpu_mb = gpu_reader.as_ref().and_then(Gpu::used_mb);
                        let rss = pid.and_then(telemetry::rss_mb);
                        if gpu_mb.is_some() || rss.is_some() {
                            let _ = tx.send(Sample::Memory(MemorySample {
                                offset_us: off,
                                gpu_used_mb: gpu_mb,
                                server_rss_mb: rss,
                            }));
                        }
                        if let Some(u) = &url {
                            if let Some(s) = telemetry::scrape(&http, u).await {
                                let _ = tx.send(Sample::Metrics(telemetry::sample(off, &s)));
                            }
                        }
                    }
                    tick += 1;
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                        _ = stop.cancelled() => break,
                    }
                }
            })
        };
        drop(tx);
        progress.start_repeat(&label, spec.requests as u64);
        let mut rows: Vec<RequestRow> = Vec::with_capacity(spec.requests);
        let (mut failed, mut tokens) = (0u64, 0u64);
        let mut unreachable = 0usize;
        let give_up = concurrency.max(8);
        let obs = load::measure(ctx.client, &spec, &body, cancel, t0, |row| {
            if let Some(e) = &row.error {
                failed += 1;
                // An endpoint that refuses every connection is down, not slow: stop early.
                unreachable = if e.starts_with("connection error") {
                    unreachable + 1
                } else {
                    0
                };
                if unreachable >= give_up {
                    cancel.cancel(&format!(
                        "the endpoint stopped answering ({unreachable} connection errors in a row)"
                    ));
                }
            } else {
                unreachable = 0;
                tokens += row.output_tokens.unwrap_or(0) as u64;
            }
            if let Err(e) = journal.request(r, &row) {
                cancel.cancel(&format!("journal write failed: {e}"));
            }
            let tps = tokens as f64 / t0.elapsed().as_secs_f64().max(1e-9);
            progress.request(failed, tps);
            rows.push(row);
        })
        .await;
        simulation |= obs.simulation;
        stop.cancel("repeat finished");
        let _ = sampler.await;
        let mut memory = Vec::new();
        let mut metrics = Vec::new();
        while let Ok(s) = rx.try_recv() {
            match s {
                Sample::Memory(m) => {
                    let _ = journal.memory(r, &m);
                    memory.push(m);
                }
                Sample::Metrics(m) => {
                    let _ = journal.metrics(r, &m);
                    metrics.push(m);
                }
            }
        }
        let off = t0.elapsed().as_micros() as u64;
        let end_mem = telemetry::memory(off, ctx.gpu, ctx.pid.filter(|p| !process_gone(*p)));
        if end_mem.gpu_used_mb.is_some() || end_mem.server_rss_mb.is_some() {
            memory.push(end_mem);
        }
        let histogram = match (&ctx.metrics_url, &start_scrape) {
            (Some(u), Some(s0)) if !cancel.is_cancelled() => {
                match telemetry::scrape(ctx.client.http(), u).await {
                    Some(s1) => {
                        metrics.push(telemetry::sample(off, &s1));
                        telemetry::queue_histogram_family(&s1)
                            .and_then(|f| crate::prometheus::histogram_delta(f, s0, &s1))
                    }
                    None => None,
                }
            }
            _ => None,
        };
        let ok = rows.iter().filter(|r| r.error.is_none()).count() as u64;
        progress.end_repeat(
            &label,
            ok,
            failed,
            tokens as f64 / t0.elapsed().as_secs_f64().max(1e-9),
        );
        if !rows.is_empty() {
            run.repeats.push(Repeat {
                index: r,
                started_at: None,
                warmup_requests: spec.warmup as u32,
                requests: RequestColumns::from_rows(rows),
                server_metrics: metrics,
                server_queue_histogram: histogram,
                memory,
            });
        }
    }
    drop(run_cancel);
    if simulation {
        run.evidence_level = EvidenceLevel::CpuProfileSimulation;
        run.notes.push("the server labelled itself a simulation (x-sloscope-simulation); this run can never be accepted".into());
    }
    if let Some(c) = prompts.calibrated_tokens {
        run.notes.push(format!("prompts: {} words ≈ {c} tokens by the server's /tokenize; usage.prompt_tokens is recorded per request", prompts.words));
    }
    if cancel.is_cancelled() {
        run.status = RunStatus::Partial;
        run.failure = Some(cancel.reason().unwrap_or_else(|| "interrupted".into()));
        if cancel
            .reason()
            .is_some_and(|r| r.contains("server process exited"))
        {
            run.evidence_level = EvidenceLevel::FailedBackendProfile;
        }
    }
    run.finished_at = Some(rfc3339_now());
}
