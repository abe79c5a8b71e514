//! The load loop of one repeat: closed loop at a fixed concurrency, or open loop with Poisson
//! arrivals under a concurrency cap, plus warm-up requests that are not measured.
//!
//! Every request that is sent ends in exactly one row (success or failure), so sent = ok +
//! failed. Open loop records the intended send time, so time spent waiting in the client
//! (coordinated omission) shows as client queue wait. Loops are bounded by the request count
//! and by each request's timeout; cancellation stops new sends and ends streams in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use sloscope_core::schema::RequestRow;
use tokio::sync::{mpsc, Semaphore};

pub use crate::cancel::Cancel;
use crate::client::{Client, Observed};

/// What one repeat sends.
#[derive(Debug, Clone)]
pub struct RepeatSpec {
    /// Repeat index (also salts prompts).
    pub index: u32,
    /// Measured requests.
    pub requests: usize,
    /// Concurrency (closed loop) or cap (open loop).
    pub concurrency: usize,
    /// Open loop arrival rate.
    pub rate_rps: Option<f64>,
    /// Warm-up requests before measuring.
    pub warmup: usize,
    /// Seed for arrivals and prompts.
    pub seed: u64,
}

/// Builds the body of request `i` (warm-ups use indices past the measured ones).
pub type BodyFn = Arc<dyn Fn(u64) -> Bytes + Send + Sync>;

/// Poisson arrival offsets (µs) for `n` requests at `rate` per second, seeded.
pub fn poisson_offsets(n: usize, rate: f64, seed: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut t = 0.0f64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let at = t;
            t += -u.ln() / rate;
            (at * 1e6) as u64
        })
        .collect()
}

async fn one(
    client: &Client,
    body: Bytes,
    t0: Instant,
    id: String,
    cancel: &Cancel,
    obs: &mut Observed,
) -> RequestRow {
    client.stream(body, t0, &id, cancel, obs).await
}

/// Sends the warm-up requests (results discarded).
pub async fn warmup(client: &Client, spec: &RepeatSpec, body: &BodyFn, cancel: &Cancel) {
    if spec.warmup == 0 {
        return;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let workers = (0..spec.concurrency.min(spec.warmup)).map(|_| {
        let (client, next, body, cancel) =
            (client.clone(), next.clone(), body.clone(), cancel.clone());
        let base = (spec.requests + 1_000_000 * (spec.index as usize + 1)) as u64;
        let total = spec.warmup;
        async move {
            let mut obs = Observed::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || cancel.is_cancelled() {
                    break;
                }
                let _ = one(
                    &client,
                    body(base + i as u64),
                    t0,
                    format!("w{i}"),
                    &cancel,
                    &mut obs,
                )
                .await;
            }
        }
    });
    futures_util::future::join_all(workers).await;
}

/// Runs the measured requests; `on_row` sees each as it finishes. Returns whether the server
/// said it is a simulation.
pub async fn measure(
    client: &Client,
    spec: &RepeatSpec,
    body: &BodyFn,
    cancel: &Cancel,
    t0: Instant,
    mut on_row: impl FnMut(RequestRow),
) -> Observed {
    let (tx, mut rx) = mpsc::unbounded_channel::<(RequestRow, Observed)>();
    let n = spec.requests;
    let rep = spec.index;
    let driver: tokio::task::JoinHandle<()> = match spec.rate_rps {
        None => {
            let next = Arc::new(AtomicUsize::new(0));
            let workers: Vec<_> = (0..spec.concurrency.min(n).max(1))
                .map(|_| {
                    let (client, next, body, cancel, tx) = (
                        client.clone(),
                        next.clone(),
                        body.clone(),
                        cancel.clone(),
                        tx.clone(),
                    );
                    tokio::spawn(async move {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n || cancel.is_cancelled() {
                                break;
                            }
                            let mut obs = Observed::default();
                            let row = one(
                                &client,
                                body(i as u64),
                                t0,
                                format!("{rep}-{i}"),
                                &cancel,
                                &mut obs,
                            )
                            .await;
                            let _ = tx.send((row, obs));
                        }
                    })
                })
                .collect();
            tokio::spawn(async move {
                futures_util::future::join_all(workers).await;
            })
        }
        Some(rate) => {
            let offsets = poisson_offsets(n, rate, spec.seed);
            let cap = Arc::new(Semaphore::new(spec.concurrency.max(1)));
            let (client, body, cancel, tx) =
                (client.clone(), body.clone(), cancel.clone(), tx.clone());
            tokio::spawn(async move {
                let mut tasks = Vec::with_capacity(n);
                for (i, off) in offsets.into_iter().enumerate() {
                    let intended = t0 + Duration::from_micros(off);
                    tokio::select! {
                        _ = tokio::time::sleep_until(intended.into()) => {}
                        _ = cancel.cancelled() => break,
                    }
                    let permit = tokio::select! {
                        p = cap.clone().acquire_owned() => p,
                        _ = cancel.cancelled() => break,
                    };
                    let Ok(permit) = permit else { break };
                    let (client, body, cancel, tx) =
                        (client.clone(), body.clone(), cancel.clone(), tx.clone());
                    tasks.push(tokio::spawn(async move {
                        let mut obs = Observed::default();
                        let mut row = one(
                            &client,
                            body(i as u64),
                            t0,
                            format!("{rep}-{i}"),
                            &cancel,
                            &mut obs,
                        )
                        .await;
                        row.intended_offset_us = Some(off.min(row.send_offset_us));
                        drop(permit);
                        let _ = tx.send((row, obs));
                    }));
                }
                futures_util::future::join_all(tasks).await;
            })
        }
    };
    drop(tx);
    let mut observed = Observed::default();
    while let Some((row, obs)) = rx.recv().await {
        observed.simulation |= obs.simulation;
        on_row(row);
    }
    let _ = driver.await;
    observed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_offsets_have_the_requested_rate() {
        let o = poisson_offsets(20_000, 50.0, 3);
        assert_eq!(o[0], 0);
        assert!(o.windows(2).all(|w| w[0] <= w[1]));
        let rate = (o.len() - 1) as f64 / (*o.last().unwrap() as f64 / 1e6);
        assert!((rate - 50.0).abs() < 2.0, "{rate}");
        assert_eq!(o, poisson_offsets(20_000, 50.0, 3));
    }
}
