//! The collector against the test kit's scripted server on 127.0.0.1: timing agreement with the
//! server's own send times, and accounting of every injected fault.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::failure::StopReason;
use sloscope_collector::load::drive::{self, Arrival, BodyFn, RepeatSpec};
use sloscope_collector::plan::config::Api;
use sloscope_collector::wire::client::{Client, Observed};
use sloscope_core::schema::RequestRow;
use sloscope_testkit::server::{Fault, Script, ScriptedServer};

mod connections;
mod files;
mod hostile;

/// Starts the scripted server on its own thread and runtime, so it does not share the
/// client's.
fn spawn_server(
    script: Script,
) -> (
    String,
    Arc<std::sync::Mutex<Option<ScriptedServer>>>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let holder: Arc<std::sync::Mutex<Option<ScriptedServer>>> = Default::default();
    let h2 = holder.clone();
    let stop = Arc::new(tokio::sync::Notify::new());
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let s = ScriptedServer::start(script, 0).await.unwrap();
            tx.send(s.url()).unwrap();
            *h2.lock().unwrap() = Some(s);
            // serve until the holder is emptied
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if h2.lock().unwrap().is_none() {
                    break;
                }
            }
            let _ = stop;
        });
    });
    (rx.recv().unwrap(), holder, handle)
}

fn body() -> BodyFn {
    Arc::new(|i| {
        Bytes::from(format!(
            r#"{{"prompt":"p {i}","max_tokens":32,"stream":true}}"#
        ))
    })
}

async fn run_repeat(
    url: &str,
    requests: usize,
    concurrency: usize,
    stall: Duration,
) -> (Vec<RequestRow>, Observed) {
    let client = Client::new(
        url,
        Api::Completions,
        None,
        concurrency,
        Duration::from_secs(20),
        stall,
    )
    .unwrap();
    client
        .warm_pool(concurrency, "/health", Duration::from_secs(5))
        .await;
    let spec = RepeatSpec {
        index: 0,
        requests,
        concurrency,
        rate_rps: None,
        arrival: Arrival::Poisson,
        warmup: 0,
        seed: 1,
        schedule: None,
        sessions: None,
    };
    let mut rows = Vec::new();
    let obs = drive::measure(
        &client,
        &spec,
        &body(),
        &Cancel::default(),
        Instant::now(),
        |r, _| rows.push(r),
    )
    .await;
    (rows, obs)
}

/// Timing tests must not share the two cores with each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every request of a 64-stream burst is matched with the server's record by id, has every
/// gap, and no event is stamped before the server wrote it (causality, not speed: how close
/// the stamps are is measured by `xtask bench-collector`, not asserted here).
#[test]
fn client_stamps_follow_the_servers_send_times() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    stamps_follow_send_times();
}

fn stamps_follow_send_times() {
    let script = Script {
        ttft: Duration::from_millis(50),
        gap: Duration::from_millis(5),
        tokens: 20,
        ..Script::default()
    };
    let (url, holder, handle) = spawn_server(script);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t0 = Instant::now();
    let rows: Vec<(String, RequestRow)> = rt.block_on(async {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            64,
            Duration::from_secs(20),
            Duration::from_secs(10),
        )
        .unwrap();
        client
            .warm_pool(64, "/health", Duration::from_secs(5))
            .await;
        let mut all = Vec::new();
        for round in 0..2 {
            let futs = (0..64u64).map(|i| {
                let client = client.clone();
                async move {
                    // Arrivals 250 µs apart (4,000 req/s): 64 streams in flight at once, but
                    // not 64 first tokens in the same microsecond (the benchmark measures that
                    // burst case separately).
                    tokio::time::sleep(Duration::from_micros(250 * i)).await;
                    let id = format!("{round}-{i}");
                    let mut obs = Observed::default();
                    let (row, _) = client
                        .stream(body()(i), t0, &id, &Cancel::default(), &mut obs)
                        .await;
                    assert!(obs.simulation);
                    (id, row)
                }
            });
            all.extend(futures_util::future::join_all(futs).await);
        }
        all
    });
    let served = holder.lock().unwrap().as_ref().unwrap().served();
    *holder.lock().unwrap() = None;
    handle.join().unwrap();
    assert_eq!(rows.len(), 128);
    assert_eq!(served.len(), 128);
    let by_id: HashMap<String, sloscope_testkit::server::Served> = served
        .into_iter()
        .map(|s| (s.request_id.clone().unwrap(), s))
        .collect();
    let (mut ttft_err, mut gap_err) = (Vec::new(), Vec::new());
    for (id, row) in &rows {
        assert_eq!(row.error, None);
        assert_eq!(row.output_tokens, Some(20));
        let s = &by_id[id];
        // When the client saw the first content vs when the server wrote it: the collector's
        // own timing error (loopback transit included).
        let seen = t0 + Duration::from_micros(row.send_offset_us + row.ttft_us.unwrap());
        ttft_err.push(
            seen.saturating_duration_since(s.events[0]).as_micros() as i64
                - s.events[0].saturating_duration_since(seen).as_micros() as i64,
        );
        for (k, g) in row.itl_us.iter().enumerate() {
            let sg = (s.events[k + 1] - s.events[k]).as_micros() as i64;
            gap_err.push((*g as i64 - sg).abs());
        }
    }
    assert_eq!(gap_err.len(), 128 * 19);
    ttft_err.sort();
    gap_err.sort();
    let p = |v: &[i64], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    eprintln!(
        "TTFT error µs p50 {} p99 {} max {}; gap error µs p50 {} p99 {} max {}",
        p(&ttft_err, 0.5),
        p(&ttft_err, 0.99),
        ttft_err[ttft_err.len() - 1],
        p(&gap_err, 0.5),
        p(&gap_err, 0.99),
        gap_err[gap_err.len() - 1]
    );
    assert!(
        ttft_err[0] >= -50,
        "the client cannot see an event before it is written (µs stamps truncate): {}",
        ttft_err[0]
    );
}

#[test]
fn every_fault_is_a_failed_request_with_its_reason() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut faults = HashMap::new();
    faults.insert(1, Fault::Http500);
    faults.insert(3, Fault::MidStreamError(2));
    faults.insert(5, Fault::Stall(2));
    faults.insert(7, Fault::Disconnect(3));
    let script = Script {
        ttft: Duration::from_millis(5),
        gap: Duration::from_millis(1),
        tokens: 8,
        faults,
        ..Script::default()
    };
    let (url, holder, handle) = spawn_server(script);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (rows, _) = rt.block_on(run_repeat(&url, 10, 1, Duration::from_millis(700)));
    *holder.lock().unwrap() = None;
    handle.join().unwrap();
    assert_eq!(rows.len(), 10, "sent = ok + failed");
    let errors: Vec<String> = rows.iter().filter_map(|r| r.error.clone()).collect();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("HTTP 500: scripted failure")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("server error mid-stream: scripted mid-stream error")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("stalled: no event for")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e == "stream ended without [DONE]"),
        "{errors:?}"
    );
    let stalled = rows
        .iter()
        .find(|r| r.error.as_deref().is_some_and(|e| e.starts_with("stalled")))
        .unwrap();
    assert!(
        stalled.ttft_us.is_some(),
        "partial data of a failed request is kept"
    );
}

#[test]
fn cancellation_ends_streams_in_flight_as_failures() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let script = Script {
        ttft: Duration::from_millis(5),
        gap: Duration::from_millis(50),
        tokens: 100,
        ..Script::default()
    };
    let (url, holder, handle) = spawn_server(script);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = rt.block_on(async {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            4,
            Duration::from_secs(20),
            Duration::from_secs(20),
        )
        .unwrap();
        let spec = RepeatSpec {
            index: 0,
            requests: 100,
            concurrency: 4,
            rate_rps: None,
            arrival: Arrival::Poisson,
            warmup: 0,
            seed: 1,
            schedule: None,
            sessions: None,
        };
        let cancel = Cancel::default();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            c2.cancel(StopReason::Interrupted(
                sloscope_collector::failure::Signal::Other,
            ));
        });
        let mut rows = Vec::new();
        drive::measure(&client, &spec, &body(), &cancel, Instant::now(), |r, _| {
            rows.push(r)
        })
        .await;
        rows
    });
    *holder.lock().unwrap() = None;
    handle.join().unwrap();
    assert_eq!(
        rows.len(),
        4,
        "the four streams in flight are accounted for, no new ones sent"
    );
    assert!(rows
        .iter()
        .all(|r| r.error.as_deref() == Some("cancelled: interrupted by a stop request")));
    assert!(rows.iter().all(|r| r.ttft_us.is_some()));
}

#[test]
fn open_loop_records_intended_send_times() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let script = Script {
        ttft: Duration::from_millis(20),
        gap: Duration::from_millis(2),
        tokens: 4,
        slots: 1,
        ..Script::default()
    };
    let (url, holder, handle) = spawn_server(script);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = rt.block_on(async {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            2,
            Duration::from_secs(20),
            Duration::from_secs(20),
        )
        .unwrap();
        let spec = RepeatSpec {
            index: 0,
            requests: 20,
            concurrency: 2,
            rate_rps: Some(200.0),
            arrival: Arrival::Poisson,
            warmup: 0,
            seed: 5,
            schedule: None,
            sessions: None,
        };
        let mut rows = Vec::new();
        drive::measure(
            &client,
            &spec,
            &body(),
            &Cancel::default(),
            Instant::now(),
            |r, _| rows.push(r),
        )
        .await;
        rows
    });
    *holder.lock().unwrap() = None;
    handle.join().unwrap();
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|r| r.intended_offset_us.is_some()));
    // 200 req/s against ~30 ms requests with a cap of 2: the client must queue.
    let waits: Vec<u64> = rows
        .iter()
        .map(|r| r.send_offset_us - r.intended_offset_us.unwrap())
        .collect();
    assert!(waits.iter().any(|&w| w > 10_000), "{waits:?}");
}

/// A token that arrives while the client's one thread is busy is stamped when it reached the
/// host (the kernel's receive stamp), not when the client got round to reading it: the server
/// sends the first token at 30 ms, the client's thread is blocked from 10 to 70 ms, and the
/// TTFT still agrees with the server's own to within a few ms.
#[cfg(target_os = "linux")]
#[test]
fn a_busy_client_still_stamps_arrival_times() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (url, holder, handle) = spawn_server(Script {
        ttft: Duration::from_millis(30),
        gap: Duration::from_millis(60),
        tokens: 2,
        ..Script::default()
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let row = rt.block_on(async {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            1,
            Duration::from_secs(10),
            Duration::from_secs(5),
        )
        .unwrap();
        client.warm_pool(1, "/health", Duration::from_secs(5)).await;
        let t0 = Instant::now();
        let stream = tokio::spawn(async move {
            let mut obs = Observed::default();
            let body = Bytes::from_static(br#"{"prompt":"x","max_tokens":2,"stream":true}"#);
            client
                .stream(body, t0, "busy", &Cancel::default(), &mut obs)
                .await
                .0
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        // the runtime's only thread does something else while the first token arrives
        std::thread::sleep(Duration::from_millis(60));
        stream.await.unwrap()
    });
    let served = holder.lock().unwrap().as_ref().unwrap().served();
    *holder.lock().unwrap() = None;
    handle.join().unwrap();
    let s = served
        .iter()
        .find(|s| s.request_id.as_deref() == Some("busy"))
        .unwrap();
    let server_ttft = s.events[0].duration_since(s.received).as_secs_f64() * 1000.0;
    let ttft = row.ttft_us.unwrap() as f64 / 1000.0;
    assert!(row.error.is_none(), "{:?}", row.error);
    // stamped in user space, the TTFT would be at least 70 − send ms
    assert!(
        (ttft - server_ttft).abs() < 5.0,
        "client TTFT {ttft:.2} ms, server's {server_ttft:.2} ms"
    );
    assert_eq!(row.itl_us.len(), 1);
}
