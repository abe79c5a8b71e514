//! Collecting one profile against a ready endpoint: prompt calibration, then each repeat's
//! warm-up and measured load with telemetry sampled alongside ([`crate::server::sampler`]), the
//! `/metrics` histogram delta, and the run's status and notes.
//!
//! Journal policy: every journal write (repeat start, request, memory and metrics sample) that
//! fails cancels the collection with [`StopReason::JournalWrite`], so the journal never claims
//! less than was measured without the run saying so.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sloscope_core::checks::Profile;
use sloscope_core::measure::SIMULATION_HEADER;
use sloscope_core::schema::{EvidenceLevel, Repeat, RequestColumns, RequestRow, Run, RunStatus};

use crate::cancel::Cancel;
use crate::clock::rfc3339_now;
use crate::failure::{FailureKind, StopReason};
use crate::load::drive::{self, BodyFn, RepeatSpec};
use crate::load::prompt;
use crate::load::tally::{GiveUp, Tally};
use crate::plan::target::TargetSpec;
use crate::progress::Progress;
use crate::record::journal::Journal;
use crate::record::spill::RepeatRows;
use crate::server::process::Launched;
use crate::server::sampler::{Sampler, Samples, Watch};
use crate::server::telemetry::{self, Gpu};
use crate::wire::api::Api;
use crate::wire::client::Client;
use crate::wire::secret::Redactor;

/// What collecting one profile needs.
pub(crate) struct ProfileCtx<'a> {
    pub(crate) client: &'a Client,
    pub(crate) profile: &'a Profile,
    pub(crate) target: &'a TargetSpec,
    /// The server sloscope launched, if it did.
    pub(crate) server: Option<&'a Launched>,
    pub(crate) gpu: &'a Gpu,
    pub(crate) api: Api,
    pub(crate) ignore_eos: bool,
    pub(crate) extra: &'a BTreeMap<String, serde_json::Value>,
    pub(crate) metrics_url: Option<String>,
    pub(crate) health_path: &'a str,
    /// Bounds every call made before measurement (calibration, connection warm-up).
    pub(crate) timeout: Duration,
    /// Credentials kept out of the journal.
    pub(crate) redactor: &'a Redactor,
    /// Index of the first repeat collected (a capacity trial given more requests continues
    /// its numbering, and its request sequence).
    pub(crate) first_repeat: u32,
    /// What the profile replays from files (a dataset's prompts, a trace's requests).
    pub(crate) replay: Option<Arc<crate::plan::replay::Replay>>,
    /// `/metrics` scrapes that got no answer, over the profile's repeats.
    pub(crate) missed_scrapes: std::sync::atomic::AtomicU32,
}

impl ProfileCtx<'_> {
    /// The launched server's process group while it is alive.
    fn live_group(&self) -> Option<u32> {
        self.server
            .filter(|l| l.exit_status().is_none())
            .map(|l| l.pid)
    }
}

/// Runs one profile's repeats against a ready endpoint and fills `run` (the repeats'
/// metadata; their requests stay in the journal, found through `rows`).
pub(crate) async fn collect_profile(
    ctx: &ProfileCtx<'_>,
    run: &mut Run,
    rows: &mut Vec<RepeatRows>,
    journal: &mut Journal,
    cancel: &Cancel,
    progress: &mut Progress,
) {
    let w = &ctx.profile.workload;
    // Calibrated at the typical length: the mean of a length distribution, if there is one.
    let trace_mean = ctx
        .replay
        .as_ref()
        .filter(|r| !r.trace.is_empty())
        .map(|r| {
            r.trace
                .iter()
                .map(|e| f64::from(e.input_tokens))
                .sum::<f64>()
                / r.trace.len() as f64
        });
    let target_tokens = match (trace_mean, &w.prompt_length) {
        (Some(m), _) => m.round().max(1.0) as u32,
        (None, Some(d)) => d.mean().round().max(1.0) as u32,
        (None, None) => w.prompt_tokens.unwrap_or(1) as u32,
    };
    // Every call before measurement is bounded in time and ends on Ctrl-C.
    let calibrated = tokio::select! {
        p = prompt::calibrate(ctx.client, ctx.target.model.as_deref(), target_tokens, ctx.timeout) => Some(p),
        _ = cancel.cancelled() => None,
    };
    let prompts = calibrated.unwrap_or_else(|| prompt::uncalibrated(target_tokens, "cancelled"));
    run.notes.extend(prompts.note.clone());
    let concurrency = w.concurrency.unwrap_or(1) as usize;
    tokio::select! {
        _ = ctx.client.warm_pool(concurrency, ctx.health_path, ctx.timeout) => {}
        _ = cancel.cancelled() => {}
    }
    // The same salt for every candidate: they are measured on the same request sequence.
    let salt = ctx.profile.name.request_salt();
    let template = crate::load::body::Template {
        workload: w,
        model: ctx.target.model.as_deref(),
        api: ctx.api,
        ignore_eos: ctx.ignore_eos,
        extra: ctx.extra,
        replay: ctx.replay.clone(),
    };
    let bodies = Arc::new(crate::load::body::Bodies::new(
        template,
        prompts.words,
        target_tokens,
        salt,
    ));
    let sessions = w.sessions.as_ref().map(|s| {
        Arc::new(crate::load::sessions::SessionLoad::new(
            bodies.clone(),
            s,
            salt,
        ))
    });
    let body = crate::load::body::Bodies::into_fn(bodies);
    let mut simulation = false;
    let energy_unread = ctx.gpu.energy_mj().err();
    let repeats = w.repeats.unwrap_or(1) as u32;
    for r in ctx.first_repeat..ctx.first_repeat + repeats {
        if cancel.is_cancelled() {
            break;
        }
        let spec = RepeatSpec {
            index: r,
            requests: w.requests_per_repeat.unwrap_or(1) as usize,
            concurrency,
            rate_rps: w.request_rate_rps,
            arrival: w
                .arrival
                .unwrap_or(sloscope_core::measure::Arrival::Poisson),
            warmup: w.warmup_requests.unwrap_or(0) as usize,
            seed: salt ^ (r as u64 + 1),
            schedule: ctx
                .replay
                .as_ref()
                .filter(|x| !x.offsets_us.is_empty())
                .map(|x| Arc::new(x.offsets_us.clone())),
            sessions: sessions.clone(),
        };
        let label = format!(
            "{} / {} / repeat {}/{}",
            ctx.profile.name,
            ctx.target.name,
            r + 1,
            ctx.first_repeat + repeats
        );
        let (repeat, sim) = one_repeat(ctx, &spec, &body, &label, journal, cancel, progress).await;
        simulation |= sim;
        if let Some((meta, rr)) = repeat {
            run.repeats.push(meta);
            rows.push(rr);
        }
    }
    closing_notes(ctx, run, energy_unread);
    settle_reason(ctx, cancel).await;
    finish_run(run, rows, simulation, &prompts, cancel);
}

/// What the run says of its own collection once its repeats are done: connections no longer
/// reused, `/metrics` scrapes that got no answer, GPU energy not measured.
fn closing_notes(ctx: &ProfileCtx<'_>, run: &mut Run, energy_unread: Option<String>) {
    run.notes.extend(ctx.client.reuse_note());
    let missed = ctx
        .missed_scrapes
        .load(std::sync::atomic::Ordering::Relaxed);
    if missed > 0 {
        let kept: usize = run.repeats.iter().map(|r| r.server_metrics.len()).sum();
        run.notes.push(if kept == 0 {
            format!(
                "none of the server's {missed} /metrics scrapes got an answer within 2 s (an \
                 error, or a status other than 2xx): no server figures (a server without \
                 /metrics: metrics_path = \"\" asks for none)"
            )
        } else {
            format!(
                "{missed} of the server's /metrics scrapes got no answer within 2 s (an error, \
                 or a status other than 2xx); its figures come from the other {kept}"
            )
        });
    }
    if run.repeats.iter().any(|r| r.gpu_energy_j.is_none()) {
        let why = energy_unread.map_or_else(
            || "for some repeats: an energy counter could not be read or went backwards".into(),
            |w| format!("({w})"),
        );
        run.notes.push(format!(
            "GPU energy: not measured {why}; energy per output token and mean power are null"
        ));
    }
}

/// An endpoint that stopped answering, when sloscope launched its server: the server's exit, if
/// that is why, is waited for (up to 2 s) so that the run names the exit, not the refusals it
/// caused.
async fn settle_reason(ctx: &ProfileCtx<'_>, cancel: &Cancel) {
    if let (Some(StopReason::EndpointUnreachable(_)), Some(server)) = (cancel.reason(), ctx.server)
    {
        server.exited_within(Duration::from_secs(2)).await;
    }
}

fn finish_run(
    run: &mut Run,
    repeats: &[RepeatRows],
    simulation: bool,
    prompts: &prompt::Prompts,
    cancel: &Cancel,
) {
    let rows = repeats.iter().map(RepeatRows::len).sum::<usize>();
    let first_error = repeats.iter().find_map(|r| r.first_error.clone());
    let none_ok = repeats.iter().all(|r| r.ok == 0);
    if simulation {
        run.evidence_level = EvidenceLevel::CpuProfileSimulation;
        run.notes.push(format!(
            "the server labelled itself a simulation ({SIMULATION_HEADER}); this run can never be accepted"
        ));
    }
    if let Some(c) = prompts.calibrated_tokens {
        run.notes.push(format!("prompts: {} words ≈ {c} tokens by the server's /tokenize; usage.prompt_tokens is recorded per request", prompts.words));
    }
    if let Some(reason) = cancel.reason() {
        run.status = RunStatus::Partial;
        run.failure = Some(reason.message());
        if reason.is_backend_failure() {
            run.evidence_level = EvidenceLevel::FailedBackendProfile;
        }
    } else if rows > 0 && none_ok {
        // Not a measurement of the configuration: say so rather than report a 100 % failure
        // rate. A server error is evidence of a failed backend; a 4xx is the client's setup.
        let (first, client_error) = first_error.unwrap_or_default();
        run.status = RunStatus::Failed;
        run.failure = Some(format!(
            "every one of the {rows} measured requests failed; the first: {first}"
        ));
        if !client_error {
            run.evidence_level = EvidenceLevel::FailedBackendProfile;
        }
    }
    run.finished_at = Some(rfc3339_now());
}

/// One repeat: warm-up, measured load with the sampler alongside, the closing scrape.
/// Returns the repeat (`None` when no request finished) and whether the server is simulated.
async fn one_repeat(
    ctx: &ProfileCtx<'_>,
    spec: &RepeatSpec,
    body: &BodyFn,
    label: &str,
    journal: &mut Journal,
    cancel: &Cancel,
    progress: &mut Progress,
) -> (Option<(Repeat, RepeatRows)>, bool) {
    let r = spec.index;
    drive::warmup(ctx.client, spec, body, cancel).await;
    progress.skip(spec.warmup as u64);
    let res = journal.repeat(r, spec.warmup as u32);
    journaled(cancel, journal, res);
    let start_scrape = match &ctx.metrics_url {
        Some(u) => telemetry::scrape(ctx.client.http(), u).await,
        None => None,
    };
    let start_missed = u32::from(ctx.metrics_url.is_some() && start_scrape.is_none());
    let energy_start = ctx.gpu.energy_mj();
    let t0 = Instant::now();
    let watch = Watch {
        http: ctx.client.http().clone(),
        metrics_url: ctx.metrics_url.clone(),
        pid: ctx.live_group(),
        gpu: ctx.gpu.used_mb().is_some(),
    };
    let sampler = Sampler::start(watch, t0);
    progress.start_repeat(label, spec.requests as u64);
    let mut rows = RepeatRows::new(r);
    let mut tally = Tally::default();
    let give_up = GiveUp::for_repeat(spec.requests, spec.concurrency);
    let obs = drive::measure(ctx.client, spec, body, cancel, t0, |mut row, mut kind| {
        physically_possible(&mut row, &mut kind);
        tally.count(&row, kind, give_up, cancel);
        if let Some(e) = row.error.as_mut().filter(|_| !ctx.redactor.is_empty()) {
            *e = ctx.redactor.text(e);
        }
        let at = journal.request(r, &row);
        let at = journaled(cancel, journal, at);
        let tps = tally.tokens as f64 / t0.elapsed().as_secs_f64().max(1e-9);
        progress.request(tally.failed, tps);
        let client_error = matches!(kind, Some(FailureKind::Http(400..=499)));
        rows.add(row, at, client_error);
    })
    .await;
    let mut samples = sampler.finish().await;
    samples.missed_scrapes += start_missed;
    // The scrape before the first request, so a counter's change over the repeat is known.
    if let Some(s0) = &start_scrape {
        samples.metrics.insert(0, telemetry::sample(0, s0));
    }
    // Requests that fail fast when a server dies can end the repeat before its exit is
    // delivered: give the exit a moment to be seen, so it is charged to this run.
    if let Some(l) = ctx.server.filter(|_| tally.failed > 0) {
        l.exited_within(Duration::from_secs(1)).await;
    }
    for m in &samples.memory {
        let res = journal.memory(r, m);
        journaled(cancel, journal, res);
    }
    for m in &samples.metrics {
        let res = journal.metrics(r, m);
        journaled(cancel, journal, res);
    }
    let energy = energy_start.and_then(|a| telemetry::energy_between(&a, &ctx.gpu.energy_mj()?));
    let histogram = closing_samples(ctx, t0, start_scrape, cancel, &mut samples).await;
    ctx.missed_scrapes
        .fetch_add(samples.missed_scrapes, std::sync::atomic::Ordering::Relaxed);
    let tps = tally.tokens as f64 / t0.elapsed().as_secs_f64().max(1e-9);
    progress.end_repeat(label, rows.ok as u64, tally.failed, tps);
    let meta = Repeat {
        index: r,
        started_at: None,
        warmup_requests: spec.warmup as u32,
        requests: RequestColumns::default(),
        server_metrics: samples.metrics,
        server_queue_histogram: histogram,
        memory: samples.memory,
        send_times_unknown: false,
        reported_window_us: None,
        gpu_energy_j: energy.ok(),
    };
    ((!rows.is_empty()).then_some((meta, rows)), obs.simulation)
}

/// A row the core's physical checks refuse (a run file holding it could not be read) is
/// recorded as the failure it is: the reason said, the times and counts it contradicts
/// dropped. Rows the collector builds pass by construction; this holds whatever a server did.
fn physically_possible(row: &mut RequestRow, kind: &mut Option<FailureKind>) {
    use sloscope_core::checks::{self, RowView};
    if let Err(v) = checks::physical_row(&RowView::of_row(row), false) {
        let why = format!(
            "the response contradicts itself: {}: {} [{}]",
            v.path,
            v.message,
            v.invariant.code()
        );
        row.error = Some(FailureKind::Stream.message(&why));
        row.ttft_us = None;
        row.itl_us.clear();
        row.output_tokens = None;
        row.output_tokens_source = None;
        // What the server said of its cache and draft model is not believed either (and a
        // count the row check refuses must not reach the file).
        row.server = Default::default();
        kind.get_or_insert(FailureKind::Stream);
    }
}

/// A failed journal write stops the whole collection (see the module's journal policy); the
/// message says exactly how many requests the journal holds.
fn journaled<T>(cancel: &Cancel, journal: &Journal, result: std::io::Result<T>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) => {
            cancel.cancel_all(StopReason::JournalWrite(format!(
                "{}: {e}; it holds the first {} finished requests of this run, whole",
                journal.path().display(),
                journal.requests()
            )));
            None
        }
    }
}

/// The memory sample at the end of the repeat and the `/metrics` scrape whose histogram delta
/// against `start` estimates the queue wait.
async fn closing_samples(
    ctx: &ProfileCtx<'_>,
    t0: Instant,
    start: Option<crate::server::prometheus::Scrape>,
    cancel: &Cancel,
    samples: &mut Samples,
) -> Option<sloscope_core::schema::HistogramDelta> {
    let off = t0.elapsed().as_micros() as u64;
    let end_mem = telemetry::memory(off, ctx.gpu, ctx.live_group());
    if end_mem.gpu_used_mb.is_some() || end_mem.server_rss_mb.is_some() {
        samples.memory.push(end_mem);
    }
    let (Some(u), Some(s0)) = (&ctx.metrics_url, &start) else {
        return None;
    };
    if cancel.is_cancelled() {
        return None;
    }
    let Some(s1) = telemetry::scrape(ctx.client.http(), u).await else {
        samples.missed_scrapes += 1;
        return None;
    };
    samples.metrics.push(telemetry::sample(off, &s1));
    telemetry::queue_histogram_family(&s1)
        .and_then(|f| crate::server::prometheus::histogram_delta(f, s0, &s1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sloscope_core::checks::{self, RowView};
    use sloscope_core::schema::ServerCounts;

    #[test]
    fn a_row_that_contradicts_itself_fails_and_keeps_nothing_the_check_refuses() {
        let mut row = RequestRow {
            ttft_us: Some(5),
            e2e_us: Some(9),
            prompt_tokens: Some(10),
            output_tokens: Some(2),
            itl_us: vec![4],
            server: ServerCounts {
                cached_prompt_tokens: Some(50),
                ..ServerCounts::default()
            },
            ..RequestRow::default()
        };
        let mut kind = None;
        physically_possible(&mut row, &mut kind);
        let e = row.error.clone().unwrap_or_default();
        assert!(e.contains("server_counts_fit"), "{e}");
        assert!(kind.is_some());
        assert!(checks::physical_row(&RowView::of_row(&row), false).is_ok());
    }
}
