//! Developer tasks (benchmarks are code: they print the tables quoted in the guide's docs/src/development/benchmarks.md).
//!
//! `cargo run -p xtask --release -- bench-collector` measures the collector (see
//! `bench_collector.rs`).
//!
//! Also: `cargo run -p xtask --release -- bench-analyze [REQUESTS] [TOKENS]` measures
//! file → verdict time and peak memory of the core on a synthetic run (each measurement in a
//! fresh process, so generation does not count) and prints a table; `gen-run REQUESTS
//! OUTPUT_TOKENS OUT` writes that synthetic run (labelled as simulation) for the page's
//! large-file tests and benchmarks; `bench-replay` measures preparing requests from a trace or
//! dataset file and trace replay send-time precision against the scripted server (see
//! `bench_replay.rs`); `coverage [TRIALS]` measures, by simulation, how often the intervals
//! sloscope prints cover the truth and what `compare` calls on changes of known size (see
//! `bench_coverage.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

mod bench_collector;
mod bench_coverage;
mod bench_memory;
mod bench_replay;
mod bench_search;
mod bench_timing;
mod support;
use serde_json::json;
use sloscope_core::schema::EvidenceLevel;
use sloscope_testkit::synth::{self, Shape};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench-analyze") => bench_analyze(&args[1..]),
        Some("coverage") => bench_coverage::run(&args[1..]),
        Some("bench-collector") => bench_collector::run().and_then(|()| bench_timing::run()),
        Some("bench-memory") => bench_memory::run(&args[1..]),
        Some("bench-timing") => bench_timing::run(),
        Some("bench-replay") => bench_replay::run(),
        Some("bench-search") => bench_search::run(&args[1..]),
        Some("replay-child") => bench_replay::child(&args[1..]),
        Some("collector-child") => bench_collector::child(&args[1..]),
        Some("gen-run") => {
            let n: usize = args.get(1).context("missing REQUESTS")?.parse()?;
            let tokens: u32 = args.get(2).context("missing OUTPUT_TOKENS")?.parse()?;
            generate(
                &PathBuf::from(args.get(3).context("missing OUT")?),
                n,
                tokens,
            )
        }
        Some("measure-analyze") => measure(Path::new(args.get(1).context("missing FILE")?)),
        _ => {
            eprintln!("usage: xtask bench-analyze [REQUESTS] [OUTPUT_TOKENS] | gen-run REQUESTS OUTPUT_TOKENS OUT | bench-collector | bench-timing | bench-replay | bench-search [LANDSCAPES] [--misses] [--shape bowl|rough|two-bowls] | coverage [TRIALS]");
            std::process::exit(2)
        }
    }
}

fn bench_analyze(args: &[String]) -> anyhow::Result<()> {
    let sizes: Vec<usize> = match args.first() {
        Some(n) => vec![n.parse()?],
        None => vec![10_000, 100_000, 1_000_000],
    };
    let tokens: u32 = args.get(1).map(|t| t.parse()).transpose()?.unwrap_or(64);
    let dir = std::env::temp_dir().join("sloscope-bench");
    std::fs::create_dir_all(&dir)?;
    println!("| requests | output tokens | file MB | parse s | analyze s | file→verdict s | peak RSS MB | peak / file |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        let path = dir.join(format!("run-{n}x{tokens}.json"));
        if !path.exists() {
            generate(&path, n, tokens)?;
        }
        let out = std::process::Command::new(std::env::current_exe()?)
            .arg("measure-analyze")
            .arg(&path)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "measure failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let mb = m["file_bytes"].as_f64().unwrap_or(0.0) / 1e6;
        let peak = m["peak_rss_mb"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {n} | {tokens} | {mb:.1} | {:.3} | {:.3} | {:.3} | {peak:.1} | {:.2}× |",
            m["parse_s"].as_f64().unwrap_or(f64::NAN),
            m["analyze_s"].as_f64().unwrap_or(f64::NAN),
            m["total_s"].as_f64().unwrap_or(f64::NAN),
            peak / mb
        );
    }
    Ok(())
}

fn generate(path: &PathBuf, n: usize, tokens: u32) -> anyhow::Result<()> {
    let mut profile = synth::profile(
        "throughput",
        "bench",
        64,
        "throughput_tps",
        json!({"ttft_p95_ms": 5000, "failure_rate": 0.01}),
    );
    // The run states the workload it ran: every request's cap is its output length.
    if let Some(w) = profile.workload.as_mut() {
        w.max_output_tokens = Some(i64::from(tokens));
        w.requests_per_repeat = Some(n as i64);
        w.repeats = Some(1);
    }
    let shape = Shape {
        requests: n,
        repeats: 1,
        output_tokens: tokens,
        ttft_us: (20_000, 400_000),
        gap_us: (4_000, 30_000),
        concurrency: 64,
        fail_every: 1000,
        rss_mb: Some(900.0),
        seed: 7,
    };
    let run = synth::run(
        "q4",
        &profile,
        "np64",
        64,
        EvidenceLevel::CpuProfileSimulation,
        &shape,
    );
    let tmp = path.with_extension("tmp");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    serde_json::to_writer(&mut w, &run)?;
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Runs in a fresh process: read, parse, analyze, render JSON; report times and VmHWM.
fn measure(path: &Path) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let file_bytes = std::fs::metadata(path)?.len();
    let name = path.display().to_string();
    // The way `sloscope analyze` reads it: through the core's reader, a large run file in
    // chunks.
    let mut f = std::fs::File::open(path)?;
    let read = |at: u64, buf: &mut [u8]| -> std::io::Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(at))?;
        f.read(buf)
    };
    let doc = sloscope_core::input::read_with(&name, file_bytes, None, 8 << 20, read)?
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let t1 = Instant::now();
    let files = vec![sloscope_core::LoadedFile { name, doc }];
    let analysis = sloscope_core::analyze(&files);
    let report = serde_json::to_string(&analysis)?;
    let t2 = Instant::now();
    anyhow::ensure!(
        !analysis.profiles.is_empty() && report.len() > 100,
        "no verdict"
    );
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm_kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    println!(
        "{}",
        json!({
            "file_bytes": file_bytes,
            "parse_s": (t1 - t0).as_secs_f64(),
            "analyze_s": (t2 - t1).as_secs_f64(),
            "total_s": (t2 - t0).as_secs_f64(),
            "peak_rss_mb": hwm_kb * 1024.0 / 1e6,
            "decision": analysis.profiles[0].decision,
        })
    );
    Ok(())
}
