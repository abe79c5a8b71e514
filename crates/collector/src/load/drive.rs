//! Driving one repeat's load: closed loop at a fixed concurrency, or open loop with Poisson
//! arrivals under a concurrency cap, plus warm-up requests that are not measured.
//!
//! Every request that is sent ends in exactly one row (success or failure), so sent = ok +
//! failed. Open loop records the intended send time, so time spent waiting in the client
//! (coordinated omission) shows as client queue wait. Loops are bounded by the request count
//! and by each request's timeout; cancellation stops new sends and ends streams in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sloscope_core::schema::RequestRow;
use tokio::sync::{mpsc, Semaphore};

pub use crate::cancel::Cancel;
use crate::failure::FailureKind;
pub use crate::load::lane::Finished;
use crate::load::lane::Lane;
use crate::wire::client::{Client, Observed};
pub use sloscope_core::measure::Arrival;

/// What one repeat sends.
#[derive(Debug, Clone)]
pub struct RepeatSpec {
    /// Repeat index (selects the repeat's own range of prompts).
    pub index: u32,
    /// Measured requests.
    pub requests: usize,
    /// Concurrency (closed loop) or cap (open loop).
    pub concurrency: usize,
    /// Open loop arrival rate.
    pub rate_rps: Option<f64>,
    /// How requests arrive under that rate.
    pub arrival: Arrival,
    /// Warm-up requests before measuring.
    pub warmup: usize,
    /// Seed for arrivals and prompts.
    pub seed: u64,
    /// Send offsets (µs) replayed from a trace, one per measured request: open loop at these
    /// times whatever `rate_rps` says.
    pub schedule: Option<Arc<Vec<u64>>>,
    /// Multi-turn sessions: `requests` counts turns, `concurrency` sessions in flight.
    pub sessions: Option<Arc<crate::load::sessions::SessionLoad>>,
}

pub use crate::load::body::{measured_base, BodyFn};

/// Closed loop: `workers` tasks take request indices `0..n` in turn until all are sent or the
/// collection is cancelled. Request `i` has body `body(base + i)` and id `{prefix}{i}`; each
/// finished request goes to `tx`. Warm-up and measured requests share this loop.
fn closed_loop(
    lane: Lane,
    n: usize,
    workers: usize,
    base: u64,
    prefix: &str,
) -> tokio::task::JoinHandle<()> {
    let Lane {
        client,
        body,
        cancel,
        t0,
        tx,
    } = lane;
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..workers.min(n).max(1))
        .map(|_| {
            let (client, next, body, cancel, tx, prefix) = (
                client.clone(),
                next.clone(),
                body.clone(),
                cancel.clone(),
                tx.clone(),
                prefix.to_string(),
            );
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || cancel.is_cancelled() {
                        break;
                    }
                    let mut obs = Observed::default();
                    let id = format!("{prefix}{i}");
                    let (row, kind) = client
                        .stream(body(base + i as u64), t0, &id, &cancel, &mut obs)
                        .await;
                    let _ = tx.send((row, kind, obs));
                }
            })
        })
        .collect();
    tokio::spawn(async move {
        futures_util::future::join_all(tasks).await;
    })
}

/// Open loop: request `i` is due at `offsets[i]` after `t0`; at most `cap` are in flight
/// (a request that waits for a slot records its intended time, so the wait shows).
///
/// The send times are kept by a pacing thread, not by the runtime's timer (whose 1 ms ticks
/// would send each request up to 1 ms late): it sleeps until each request is due and hands
/// its index to the runtime, which wakes at once.
fn open_loop(lane: Lane, offsets: Vec<u64>, cap: usize, rep: u32) -> tokio::task::JoinHandle<()> {
    let Lane {
        client,
        body,
        cancel,
        t0,
        tx,
    } = lane;
    let cap = Arc::new(Semaphore::new(cap.max(1)));
    let (due_tx, mut due_rx) = mpsc::unbounded_channel::<(usize, u64)>();
    let (pacer_cancel, pacer_tx, pacer_offsets) = (cancel.clone(), due_tx.clone(), offsets.clone());
    let pacer = std::thread::Builder::new()
        .name("sloscope-pacer".into())
        .spawn(move || pace(&pacer_offsets, t0, &pacer_cancel, &pacer_tx));
    if pacer.is_err() {
        // No thread to spare: the runtime's timer paces (to its 1 ms ticks).
        let cancel = cancel.clone();
        tokio::spawn(async move {
            for (i, off) in offsets.into_iter().enumerate() {
                tokio::select! {
                    _ = tokio::time::sleep_until((t0 + Duration::from_micros(off)).into()) => {}
                    _ = cancel.cancelled() => break,
                }
                if due_tx.send((i, off)).is_err() {
                    break;
                }
            }
        });
    } else {
        drop(due_tx);
    }
    tokio::spawn(async move {
        let mut tasks = Vec::new();
        loop {
            let due = tokio::select! {
                d = due_rx.recv() => d,
                _ = cancel.cancelled() => None,
            };
            let Some((i, off)) = due else { break };
            let permit = tokio::select! {
                p = cap.clone().acquire_owned() => p,
                _ = cancel.cancelled() => break,
            };
            let Ok(permit) = permit else { break };
            let (client, body, cancel, tx) =
                (client.clone(), body.clone(), cancel.clone(), tx.clone());
            tasks.push(tokio::spawn(async move {
                let mut obs = Observed::default();
                let id = format!("{rep}-{i}");
                let (mut row, kind) = client
                    .stream(
                        body(measured_base(rep) + i as u64),
                        t0,
                        &id,
                        &cancel,
                        &mut obs,
                    )
                    .await;
                row.intended_offset_us = Some(off.min(row.send_offset_us));
                drop(permit);
                let _ = tx.send((row, kind, obs));
            }));
        }
        futures_util::future::join_all(tasks).await;
    })
}

/// The pacing thread: sleeps until each offset falls due (in slices of at most 20 ms, so a
/// cancellation is seen) and sends `(index, offset)`; stops when cancelled or when nobody
/// listens.
fn pace(offsets: &[u64], t0: Instant, cancel: &Cancel, due: &mpsc::UnboundedSender<(usize, u64)>) {
    for (i, &off) in offsets.iter().enumerate() {
        let at = t0 + Duration::from_micros(off);
        loop {
            if cancel.is_cancelled() || due.is_closed() {
                return;
            }
            let now = Instant::now();
            if now >= at {
                break;
            }
            std::thread::sleep((at - now).min(Duration::from_millis(20)));
        }
        if due.send((i, off)).is_err() {
            return;
        }
    }
}

/// Sends the warm-up requests (results discarded). Their bodies use indices past every
/// measured request's, so no warm-up prompt is measured again.
pub async fn warmup(client: &Client, spec: &RepeatSpec, body: &BodyFn, cancel: &Cancel) {
    if spec.warmup == 0 {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Finished>();
    let base = WARMUP_BASE + spec.index as u64 * WARMUP_BASE;
    let lane = Lane::new(client, body, cancel, Instant::now(), tx);
    let driver = match &spec.sessions {
        Some(s) => {
            crate::load::sessions::run(s.clone(), lane, base, spec.warmup, spec.concurrency, "w")
        }
        None => closed_loop(lane, spec.warmup, spec.concurrency, base, "w"),
    };
    while rx.recv().await.is_some() {}
    let _ = driver.await;
}

/// Body indices of warm-up requests start here (per repeat), far past any measured request.
const WARMUP_BASE: u64 = 1 << 40;

/// Runs the measured requests; `on_row` sees each as it finishes. Returns what the server said
/// about itself (a simulation).
pub async fn measure(
    client: &Client,
    spec: &RepeatSpec,
    body: &BodyFn,
    cancel: &Cancel,
    t0: Instant,
    mut on_row: impl FnMut(RequestRow, Option<FailureKind>),
) -> Observed {
    let (tx, mut rx) = mpsc::unbounded_channel::<Finished>();
    let n = spec.requests;
    let rep = spec.index;
    let lane = Lane::new(client, body, cancel, t0, tx);
    let driver = match (&spec.schedule, spec.rate_rps) {
        _ if let Some(s) = &spec.sessions => crate::load::sessions::run(
            s.clone(),
            lane,
            measured_base(rep),
            n,
            spec.concurrency,
            &format!("{rep}-"),
        ),
        (Some(times), _) => open_loop(
            lane,
            times.iter().copied().take(n).collect(),
            spec.concurrency,
            rep,
        ),
        (None, None) => closed_loop(
            lane,
            n,
            spec.concurrency,
            measured_base(rep),
            &format!("{rep}-"),
        ),
        (None, Some(rate)) => open_loop(
            lane,
            spec.arrival.offsets_us(n, rate, spec.seed),
            spec.concurrency,
            rep,
        ),
    };
    let mut observed = Observed::default();
    while let Some((row, kind, obs)) = rx.recv().await {
        observed.simulation |= obs.simulation;
        on_row(row, kind);
    }
    let _ = driver.await;
    observed
}
