//! Collector benchmarks, printed as tables:
//! 1. timed token events per second against the scripted server streaming as fast as it can,
//!    the client on one core (current-thread runtime; `taskset` pins it when present), at
//!    concurrency 1, 64 and 1024, with CPU per event and peak memory;
//! 2. timing error against the server's own send stamps (fixed 50 ms TTFT, 5 ms per token) at
//!    concurrency 1, 64 and 256, all requests started together (the worst case: every stream's
//!    tokens fall due in the same instant);
//! 3. 256 paced streams × 200 tokens/s: lag behind the server and the client's CPU share;
//! 4. start-up: `sloscope run` spawned → first request at the server.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::plan::config::Api;
use sloscope_collector::wire::client::{Client, Observed};
use sloscope_testkit::server::{Script, ScriptedServer};

use crate::support::{child_json, has_taskset, scripted_server_bin};

fn self_stat() -> (f64, f64) {
    // utime + stime in seconds, and VmHWM in MB
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let tick = 100.0;
    let cpu = fields
        .get(11)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / tick
        + fields
            .get(12)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / tick;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        * 1024.0
        / 1e6;
    (cpu, hwm)
}

fn spawn_server(args: &[&str]) -> anyhow::Result<(std::process::Child, String)> {
    let port = sloscope_collector::server::process::free_port()?;
    let bin = scripted_server_bin()?;
    let mut cmd = if has_taskset() {
        let mut c = Command::new("taskset");
        c.args(["-c", "1"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let child = cmd
        .args(["--port", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        anyhow::ensure!(Instant::now() < deadline, "scripted server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((child, url))
}

/// Entry point of the measuring child process: `collector-child MODE URL CONCURRENCY REQUESTS`.
pub fn child(args: &[String]) -> anyhow::Result<()> {
    let mode = args.first().context("mode")?.clone();
    let url = args.get(1).context("url")?.clone();
    let conc: usize = args.get(2).context("concurrency")?.parse()?;
    let requests: usize = args.get(3).context("requests")?.parse()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (cpu0, _) = self_stat();
    let result = rt.block_on(async move {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            conc,
            Duration::from_secs(120),
            Duration::from_secs(60),
        )
        .map_err(anyhow::Error::msg)?;
        client
            .warm_pool(conc, "/health", Duration::from_secs(10))
            .await;
        let t0 = Instant::now();
        let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let body = Bytes::from_static(br#"{"prompt":"x","max_tokens":100000,"stream":true}"#);
        let workers = (0..conc).map(|_| {
            let (client, next, body) = (client.clone(), next.clone(), body.clone());
            tokio::spawn(async move {
                let mut rows = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= requests {
                        break;
                    }
                    let mut obs = Observed::default();
                    let row = client
                        .stream(
                            body.clone(),
                            t0,
                            &i.to_string(),
                            &Cancel::default(),
                            &mut obs,
                        )
                        .await
                        .0;
                    rows.push((i, row));
                }
                rows
            })
        });
        let mut rows = Vec::new();
        for w in futures_util::future::join_all(workers).await {
            rows.extend(w?);
        }
        anyhow::Ok((rows, t0.elapsed()))
    })?;
    let (rows, elapsed) = result;
    let (cpu1, hwm) = self_stat();
    if mode == "rows" {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|(i, r)| serde_json::json!({"id": i.to_string(), "ttft_us": r.ttft_us, "e2e_us": r.e2e_us, "itl_us": r.itl_us, "error": r.error}))
            .collect();
        println!("{}", serde_json::json!({ "rows": rows }));
        return Ok(());
    }
    let rows: Vec<_> = rows.into_iter().map(|(_, r)| r).collect();
    let events: usize = rows
        .iter()
        .map(|r| r.itl_us.len() + usize::from(r.ttft_us.is_some()))
        .sum();
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    let lag: Vec<f64> = rows
        .iter()
        .filter_map(|r| Some((r.e2e_us? as f64 - r.ttft_us? as f64) / 1000.0))
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "mode": mode, "events": events, "failed": failed, "elapsed_s": elapsed.as_secs_f64(),
            "cpu_s": cpu1 - cpu0, "peak_rss_mb": hwm,
            "decode_ms_mean": lag.iter().sum::<f64>() / lag.len().max(1) as f64,
            "decode_ms_max": lag.iter().cloned().fold(0.0, f64::max),
        })
    );
    Ok(())
}

/// The scripted server on its own thread and runtime, so it does not share the client's.
struct InProcess {
    url: String,
    holder: std::sync::Arc<std::sync::Mutex<Option<ScriptedServer>>>,
    thread: std::thread::JoinHandle<()>,
}

impl InProcess {
    fn start(script: Script) -> anyhow::Result<InProcess> {
        let (tx, rx) = std::sync::mpsc::channel();
        let holder: std::sync::Arc<std::sync::Mutex<Option<ScriptedServer>>> = Default::default();
        let h2 = holder.clone();
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(s) = ScriptedServer::start(script, 0).await else {
                    return;
                };
                let _ = tx.send(s.url());
                if let Ok(mut h) = h2.lock() {
                    *h = Some(s);
                }
                // Serve until `stop` empties the holder.
                while h2.lock().map(|h| h.is_some()).unwrap_or(false) {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            });
        });
        let url = rx.recv().context("the scripted server did not start")?;
        Ok(InProcess {
            url,
            holder,
            thread,
        })
    }

    fn served(&self) -> Vec<sloscope_testkit::server::Served> {
        self.holder
            .lock()
            .ok()
            .and_then(|h| h.as_ref().map(|s| s.served()))
            .unwrap_or_default()
    }

    fn stop(self) {
        if let Ok(mut h) = self.holder.lock() {
            *h = None;
        }
        let _ = self.thread.join();
    }
}

fn accuracy(conc: usize) -> anyhow::Result<(f64, f64, f64, f64)> {
    let server = InProcess::start(Script {
        ttft: Duration::from_millis(50),
        gap: Duration::from_millis(5),
        tokens: 20,
        ..Script::default()
    })?;
    let url = server.url.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let t0 = Instant::now();
    let rows = rt.block_on(async {
        let client = Client::new(
            &url,
            Api::Completions,
            None,
            conc,
            Duration::from_secs(60),
            Duration::from_secs(30),
        )
        .map_err(anyhow::Error::msg)?;
        client
            .warm_pool(conc, "/health", Duration::from_secs(10))
            .await;
        let futs = (0..conc).map(|i| {
            let client = client.clone();
            async move {
                let mut obs = Observed::default();
                let body = Bytes::from_static(br#"{"prompt":"x","max_tokens":20,"stream":true}"#);
                (
                    i.to_string(),
                    client
                        .stream(body, t0, &i.to_string(), &Cancel::default(), &mut obs)
                        .await
                        .0,
                )
            }
        });
        anyhow::Ok(futures_util::future::join_all(futs).await)
    })?;
    let served = server.served();
    server.stop();
    let by_id: std::collections::HashMap<String, _> = served
        .into_iter()
        .filter_map(|s| Some((s.request_id.clone()?, s)))
        .collect();
    let (mut ttft, mut gap) = (Vec::new(), Vec::new());
    for (id, r) in &rows {
        let (Some(s), Some(t)) = (by_id.get(id), r.ttft_us) else {
            continue;
        };
        let seen = t0 + Duration::from_micros(r.send_offset_us + t);
        ttft.push(seen.saturating_duration_since(s.events[0]).as_secs_f64() * 1000.0);
        for (k, g) in r.itl_us.iter().enumerate() {
            let sg = (s.events[k + 1] - s.events[k]).as_secs_f64() * 1000.0;
            gap.push((*g as f64 / 1000.0 - sg).abs());
        }
    }
    let pct = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        sloscope_core::measure::percentile_sorted(v, q).unwrap_or(f64::NAN)
    };
    Ok((
        pct(&mut ttft, 50.0),
        pct(&mut ttft, 99.0),
        pct(&mut gap, 50.0),
        pct(&mut gap, 99.0),
    ))
}

fn startup() -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("sloscope-startup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json", "plan.toml"] {
        std::fs::copy(fixture.join(f), dir.join(f))?;
    }
    let server = InProcess::start(Script::default())?;
    let url = server.url.clone();
    let bin = std::env::current_exe()?.with_file_name("sloscope");
    anyhow::ensure!(
        bin.exists(),
        "{} missing: cargo build --release -p sloscope",
        bin.display()
    );
    let spawned = Instant::now();
    let mut child = Command::new(bin)
        .args(["run", "--plan"])
        .arg(dir.join("plan.toml"))
        .arg("--out")
        .arg(dir.join("out"))
        .args([
            "--endpoint",
            &url,
            "--profiles",
            "latency",
            "--candidates",
            "slots1",
            "--no-baseline",
            "--quiet",
        ])
        .spawn()?;
    let first = loop {
        let served = server.served();
        if let Some(f) = served.iter().map(|s| s.received).min() {
            break f;
        }
        anyhow::ensure!(
            spawned.elapsed() < Duration::from_secs(20),
            "no request within 20 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = child.wait();
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(first.saturating_duration_since(spawned).as_secs_f64())
}

/// Runs every collector benchmark and prints the tables.
pub fn run() -> anyhow::Result<()> {
    println!("## Collector throughput: scripted server in burst mode (1,000 tokens per request), client on one core{}", if has_taskset() { " (taskset)" } else { "" });
    println!("| concurrency | requests | token events | events/s | CPU µs per event | client CPU % | peak RSS MB | failed |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (conc, reqs) in [(1usize, 200usize), (64, 1280), (1024, 4096)] {
        let (mut srv, url) = spawn_server(&["--burst", "--tokens", "1000", "--ttft-ms", "0"])?;
        let v = child_json(&["burst", &url, &conc.to_string(), &reqs.to_string()])?;
        let _ = srv.kill();
        let _ = srv.wait();
        let ev = v["events"].as_f64().unwrap_or(0.0);
        let el = v["elapsed_s"].as_f64().unwrap_or(f64::NAN);
        let cpu = v["cpu_s"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {conc} | {reqs} | {ev:.0} | {:.0} | {:.3} | {:.0} | {:.1} | {} |",
            ev / el,
            cpu / ev * 1e6,
            cpu / el * 100.0,
            v["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
            v["failed"]
        );
    }
    println!();
    println!("## Timing error against the server's send stamps (TTFT 50 ms, 5 ms per token, 20 tokens, all streams started together)");
    println!("| concurrency | TTFT error p50 ms | TTFT error p99 ms | gap error p50 ms | gap error p99 ms |");
    println!("|---:|---:|---:|---:|---:|");
    for conc in [1usize, 64, 256] {
        let (a, b, c, d) = accuracy(conc)?;
        println!("| {conc} | {a:.3} | {b:.3} | {c:.3} | {d:.3} |");
    }
    println!();
    println!(
        "## Paced streams: 256 × 200 tokens/s (5 ms gaps, 200 tokens), server in its own process"
    );
    let (mut srv, url) = spawn_server(&["--tokens", "200", "--ttft-ms", "50", "--gap-ms", "5"])?;
    let v = child_json(&["paced", &url, "256", "256"])?;
    let _ = srv.kill();
    let _ = srv.wait();
    let el = v["elapsed_s"].as_f64().unwrap_or(f64::NAN);
    println!("| streams | decode time mean ms (ideal 995) | decode time max ms | client CPU % of a core | failed |");
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| 256 | {:.1} | {:.1} | {:.1} | {} |",
        v["decode_ms_mean"].as_f64().unwrap_or(f64::NAN),
        v["decode_ms_max"].as_f64().unwrap_or(f64::NAN),
        v["cpu_s"].as_f64().unwrap_or(f64::NAN) / el * 100.0,
        v["failed"]
    );
    println!();
    let s = startup()?;
    println!(
        "## Start-up: `sloscope run` spawned → first measured request at the server: {:.3} s",
        s
    );
    Ok(())
}
