//! Timing against an independent server process (`xtask bench-timing`, also part of
//! `bench-collector`): the testkit's `timing-server` (one thread, plain sockets, its own
//! process on its own core, real-time priority where `chrt` is allowed) logs when each request
//! was read and when each event's `write()` returned, by its own clock. The client's figures are
//! compared with the server's own: TTFT error = client TTFT − (first event written − request
//! read); e2e error = client end-to-end − (`[DONE]` written − request read); gap error =
//! |client gap − server gap|. No clock is shared between the two processes.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{child_json, has_taskset, scripted_server_bin};

fn realtime_allowed() -> bool {
    Command::new("chrt")
        .args(["-f", "50", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The independent timing server on core 1. Returns the process, its URL and its log file.
fn spawn(args: &[&str]) -> anyhow::Result<(std::process::Child, String, std::path::PathBuf)> {
    let port = sloscope_collector::server::process::free_port()?;
    let bin = scripted_server_bin()?.with_file_name("timing-server");
    anyhow::ensure!(
        bin.exists(),
        "{} missing: cargo build --release -p sloscope-testkit",
        bin.display()
    );
    let log = std::env::temp_dir().join(format!(
        "sloscope-timing-{}-{port}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let mut cmd = if realtime_allowed() {
        let mut c = Command::new("chrt");
        c.args(["-f", "50"]);
        c
    } else {
        Command::new("env")
    };
    if has_taskset() {
        cmd.args(["taskset", "-c", "1"]);
    }
    let child = cmd
        .arg(&bin)
        .args(["--port", &port.to_string()])
        .arg("--log")
        .arg(&log)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        anyhow::ensure!(Instant::now() < deadline, "timing server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((child, format!("http://127.0.0.1:{port}"), log))
}

/// What the independent server logged for one request (µs on its own clock).
#[derive(serde::Deserialize)]
struct ServerLog {
    id: String,
    recv_us: i64,
    events_us: Vec<i64>,
    done_us: i64,
}

/// Timing errors at `conc` streams: p50 and p99 of the TTFT, e2e and gap errors in ms.
/// `conc` × 2 requests: every stream starts together, then again as the first round ends.
fn errors(conc: usize, tokens: u32) -> anyhow::Result<[f64; 6]> {
    let (mut srv, url, log) = spawn(&[
        "--ttft-ms",
        "50",
        "--gap-ms",
        "5",
        "--tokens",
        &tokens.to_string(),
    ])?;
    let requests = conc * 2;
    let v = child_json(&["rows", &url, &conc.to_string(), &requests.to_string()]);
    // the server writes its log once no stream is open
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lines = String::new();
    while Instant::now() < deadline {
        lines = std::fs::read_to_string(&log).unwrap_or_default();
        if lines.lines().count() >= requests {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = srv.kill();
    let _ = srv.wait();
    let _ = std::fs::remove_file(&log);
    let v = v?;
    let served: std::collections::HashMap<String, ServerLog> = lines
        .lines()
        .filter_map(|l| serde_json::from_str::<ServerLog>(l).ok())
        .map(|l| (l.id.clone(), l))
        .collect();
    let (mut ttft, mut e2e, mut gap) = (Vec::new(), Vec::new(), Vec::new());
    for r in v["rows"].as_array().into_iter().flatten() {
        let Some(s) = r["id"].as_str().and_then(|id| served.get(id)) else {
            continue;
        };
        let (Some(t), Some(e), Some(first)) = (
            r["ttft_us"].as_f64(),
            r["e2e_us"].as_f64(),
            s.events_us.first(),
        ) else {
            continue;
        };
        ttft.push((t - (first - s.recv_us) as f64) / 1000.0);
        e2e.push((e - (s.done_us - s.recv_us) as f64) / 1000.0);
        for (k, g) in r["itl_us"].as_array().into_iter().flatten().enumerate() {
            if let (Some(g), Some(a), Some(b)) =
                (g.as_f64(), s.events_us.get(k), s.events_us.get(k + 1))
            {
                gap.push(((g - (b - a) as f64) / 1000.0).abs());
            }
        }
    }
    anyhow::ensure!(
        ttft.len() == requests,
        "{} of {requests} requests timed by the client and logged by the server",
        ttft.len()
    );
    let pct = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        sloscope_core::measure::percentile_sorted(v, q).unwrap_or(f64::NAN)
    };
    Ok([
        pct(&mut ttft, 50.0),
        pct(&mut ttft, 99.0),
        pct(&mut e2e, 50.0),
        pct(&mut e2e, 99.0),
        pct(&mut gap, 50.0),
        pct(&mut gap, 99.0),
    ])
}

/// The client's figures at `conc` streams, the server writing `coalesce` events per write as
/// fast as the client reads.
fn coalesced(conc: usize, coalesce: u32) -> anyhow::Result<serde_json::Value> {
    let (mut srv, url, log) = spawn(&[
        "--ttft-ms",
        "0",
        "--gap-ms",
        "0",
        "--tokens",
        "4096",
        "--coalesce",
        &coalesce.to_string(),
    ])?;
    let v = child_json(&["burst", &url, &conc.to_string(), &conc.to_string()]);
    let _ = srv.kill();
    let _ = srv.wait();
    let _ = std::fs::remove_file(&log);
    v
}

/// Prints the timing tables.
pub fn run() -> anyhow::Result<()> {
    println!(
        "## Timing error against an independent server process (`timing-server`, {}), TTFT 50 ms, 5 ms per token, 256 tokens, 2 × streams requests, client on one core",
        if realtime_allowed() {
            "real-time priority"
        } else {
            "normal priority: chrt not allowed"
        }
    );
    println!("| streams | TTFT error p50 ms | p99 ms | e2e error p50 ms | p99 ms | gap error p50 ms | p99 ms |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for conc in [1usize, 64, 256] {
        let [a, b, c, d, e, f] = errors(conc, 256)?;
        println!("| {conc} | {a:.3} | {b:.3} | {c:.3} | {d:.3} | {e:.3} | {f:.3} |");
    }
    println!();
    println!("## Token events per second, the independent server writing 16 events per write as fast as the client reads (4,096 per request), client on one core");
    println!("| streams | token events | events/s | CPU µs per event | client CPU % | failed |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for conc in [64usize, 256] {
        let v = coalesced(conc, 16)?;
        let ev = v["events"].as_f64().unwrap_or(0.0);
        let el = v["elapsed_s"].as_f64().unwrap_or(f64::NAN);
        let cpu = v["cpu_s"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {conc} | {ev:.0} | {:.0} | {:.3} | {:.0} | {} |",
            ev / el,
            cpu / ev * 1e6,
            cpu / el * 100.0,
            v["failed"]
        );
    }
    println!();
    Ok(())
}
