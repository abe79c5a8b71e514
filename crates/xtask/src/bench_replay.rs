//! Replay benchmarks, printed as tables:
//! 1. preparing requests from a file: a Mooncake trace and a JSON Lines dataset of 100,000 and
//!    1,000,000 requests, read by the collector's streaming reader (hashed as read) in a fresh
//!    process each: time and peak memory (a dataset keeps a bounded sample, so its memory does
//!    not grow with the file; a trace keeps 16 bytes per request it will send);
//! 2. trace replay precision: 5,000 requests at 1,000 per second (Poisson times, as a trace)
//!    sent by the collector's open loop to the scripted server in another process, which logs
//!    the µs each request arrived by its own clock; the error is each arrival's lateness
//!    against its intended time, less the smallest (the constant loopback delay and the two
//!    clocks' offset).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::load::drive::{measure, Arrival, RepeatSpec};
use sloscope_collector::plan::config::Api;
use sloscope_collector::wire::client::Client;
use sloscope_core::input::{Dataset, DatasetFormat, Trace, TraceFormat};
use sloscope_core::schema::WorkloadSpec;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb * 1024.0 / 1e6)
}

fn write_file(path: &Path, n: usize, kind: &str) -> anyhow::Result<()> {
    if path.exists() {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for i in 0..n as u64 {
        match kind {
            "trace" => writeln!(
                w,
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}, {}]}}",
                i * 3 + (i * 7919) % 3,
                32 + (i * 31) % 2000,
                4 + (i * 17) % 500,
                i / 4,
                i / 4 + 1
            )?,
            _ => writeln!(
                w,
                "{{\"prompt\": \"request {i}: summarise the trade-offs of batch caps and KV-cache budgets for a reviewer, in three sentences\", \"output_tokens\": {}}}",
                4 + (i * 17) % 500
            )?,
        }
    }
    w.flush()?;
    drop(w);
    std::fs::rename(tmp, path)?;
    Ok(())
}

/// `bench-replay`: both tables.
pub fn run() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join("sloscope-bench");
    std::fs::create_dir_all(&dir)?;
    println!("| file | requests | file MB | prepare s | peak RSS MB | kept |");
    println!("|---|---:|---:|---:|---:|---:|");
    for kind in ["trace", "dataset"] {
        for n in [100_000usize, 1_000_000] {
            let path = dir.join(format!("{kind}-{n}.jsonl"));
            write_file(&path, n, kind)?;
            let out = Command::new(std::env::current_exe()?)
                .arg("replay-child")
                .arg(kind)
                .arg(&path)
                .output()?;
            anyhow::ensure!(
                out.status.success(),
                "replay-child failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let m: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            println!(
                "| {} | {n} | {:.1} | {:.3} | {:.1} | {} |",
                if kind == "trace" {
                    "Mooncake trace"
                } else {
                    "JSONL dataset"
                },
                std::fs::metadata(&path)?.len() as f64 / 1e6,
                m["prepare_s"].as_f64().unwrap_or(f64::NAN),
                m["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
                m["kept"]
            );
        }
    }
    println!();
    precision(&dir)
}

/// `replay-child KIND PATH`: reads the file as `sloscope run` does; prints JSON.
pub fn child(args: &[String]) -> anyhow::Result<()> {
    let kind = args.first().context("kind")?;
    let path = PathBuf::from(args.get(1).context("path")?);
    let dir = path.parent().context("dir")?.to_path_buf();
    let file = path
        .file_name()
        .context("name")?
        .to_string_lossy()
        .to_string();
    let mut w = WorkloadSpec::default();
    if kind == "trace" {
        w.trace = Some(Trace {
            file,
            format: TraceFormat::Mooncake,
            time_scale: None,
            sha256: None,
            block_tokens: None,
        });
    } else {
        w.dataset = Some(Dataset {
            file,
            format: DatasetFormat::Jsonl,
            sha256: None,
        });
    }
    let t0 = Instant::now();
    let r = sloscope_collector::plan::replay::load(&dir, &mut w, 1)
        .map_err(anyhow::Error::msg)?
        .context("nothing replayed")?;
    let s = t0.elapsed().as_secs_f64();
    let kept = r.trace.len().max(r.records.len());
    println!(
        "{}",
        serde_json::json!({"prepare_s": s, "peak_rss_mb": peak_rss_mb(), "kept": kept})
    );
    Ok(())
}

/// Replays `offsets` (µs) against `url`, 256 requests in flight at most: the rows.
fn replay_rows(
    url: &str,
    offsets: &[u64],
) -> anyhow::Result<Vec<sloscope_core::schema::RequestRow>> {
    let n = offsets.len();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let warm = 64usize;
    rt.block_on(async {
        let client = Client::new(
            url,
            Api::Completions,
            None,
            256,
            Duration::from_secs(30),
            Duration::from_secs(10),
        )
        .map_err(anyhow::Error::msg)?;
        client
            .warm_pool(warm, "/health", Duration::from_secs(10))
            .await;
        let spec = RepeatSpec {
            index: 0,
            requests: n,
            concurrency: 256,
            rate_rps: None,
            arrival: Arrival::Poisson,
            warmup: 0,
            seed: 1,
            schedule: Some(Arc::new(offsets.to_vec())),
            sessions: None,
        };
        let body: sloscope_collector::load::drive::BodyFn = Arc::new(|i| {
            Bytes::from(format!(
                "{{\"prompt\":\"request {i}\",\"max_tokens\":4,\"stream\":true}}"
            ))
        });
        let mut rows = Vec::new();
        measure(
            &client,
            &spec,
            &body,
            &Cancel::default(),
            Instant::now(),
            |r, _| rows.push(r),
        )
        .await;
        anyhow::Ok(rows)
    })
}

fn precision(dir: &Path) -> anyhow::Result<()> {
    let log = dir.join("replay-server.log");
    let port = sloscope_collector::server::process::free_port()?;
    let bin = std::env::current_exe()?.with_file_name("scripted-server");
    anyhow::ensure!(
        bin.exists(),
        "{} missing: cargo build --release -p sloscope-testkit",
        bin.display()
    );
    let mut server = Command::new(bin)
        .args([
            "--port",
            &port.to_string(),
            "--ttft-ms",
            "2",
            "--gap-ms",
            "1",
        ])
        .args(["--tokens", "4", "--log"])
        .arg(&log)
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        anyhow::ensure!(Instant::now() < deadline, "scripted server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let n = 5000usize;
    let offsets = Arrival::Poisson.offsets_us(n, 1000.0, 42);
    let rows = replay_rows(&format!("http://127.0.0.1:{port}"), &offsets)?;
    let _ = server.kill();
    let _ = server.wait();
    // Arrivals by request: the log's prompt names the request index.
    let mut at = vec![None; n];
    for line in std::fs::read_to_string(&log)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let i = v["prompt_head"]
            .as_str()
            .and_then(|p| p.strip_prefix("request "))
            .and_then(|x| x.parse::<usize>().ok());
        if let Some(i) = i.filter(|i| *i < n) {
            at[i] = v["at_us"].as_f64();
        }
    }
    let lateness: Vec<f64> = at
        .iter()
        .zip(&offsets)
        .filter_map(|(a, o)| a.map(|a| a - *o as f64))
        .collect();
    anyhow::ensure!(
        lateness.len() == n,
        "{} of {n} arrivals logged",
        lateness.len()
    );
    let base = lateness.iter().copied().fold(f64::MAX, f64::min);
    let mut err_ms: Vec<f64> = lateness.iter().map(|l| (l - base) / 1000.0).collect();
    err_ms.sort_by(f64::total_cmp);
    let q = |p: f64| sloscope_core::measure::percentile_sorted(&err_ms, p).unwrap_or(f64::NAN);
    let ok = rows.iter().filter(|r| r.error.is_none()).count();
    println!("| trace replay | requests | rate | ok | send error p50 ms | p99 ms | max ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "| Poisson times, cap 256 | {n} | 1000/s | {ok} | {:.3} | {:.3} | {:.3} |",
        q(50.0),
        q(99.0),
        q(100.0)
    );
    Ok(())
}
