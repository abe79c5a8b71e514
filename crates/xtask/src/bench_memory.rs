//! The collector's memory against the length of a run: `sloscope run` (the release binary, as
//! users run it) drives the scripted server — in its own process, streaming each response at
//! once — at 64 streams with 256 tokens per request, for 20,000 and then 200,000 requests (or
//! the counts given), and its peak resident memory (the kernel's `ru_maxrss` of the child) is
//! printed for each, with the run file's size and that `sloscope analyze` reads it. Flat memory
//! means the two peaks are close: the rows live in the journal, never all in memory.
//!
//! `cargo build --release -p sloscope -p sloscope-testkit -p xtask && target/release/xtask bench-memory [N…]`

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::scripted_server_bin;

fn plan(requests: usize) -> String {
    format!(
        r#"kind = "plan"
schema_version = "1.0"
name = "memory benchmark (simulation)"
knob = "slots"

[lineage]
gate = "gate.json"
baseline = "baseline.json"
deployment = "deployment.json"

[target]
api = "completions"
model = "scripted"
request_timeout_s = 60
stall_timeout_s = 30
metrics_path = ""

[[candidates]]
name = "slots64"
value = 64

[[profiles]]
name = "throughput"
primary_metric = "throughput_tps"
slo = {{ failure_rate = 0.01 }}
workload = {{ id = "soak", concurrency = 64, prompt_tokens = 8, max_output_tokens = 256, repeats = 1, requests_per_repeat = {requests} }}
"#
    )
}

/// The highest VmHWM seen of `pid` while it runs, polled every 20 ms (VmHWM is itself the
/// peak, so polling loses nothing but the last 20 ms).
fn watch_peak(child: &mut std::process::Child) -> anyhow::Result<(bool, f64)> {
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0.0f64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let hwm = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok());
            if let Some(h) = hwm {
                peak_kb = peak_kb.max(h);
            }
        }
        if let Some(st) = child.try_wait()? {
            return Ok((st.success(), peak_kb / 1024.0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn one(requests: usize, dir: &Path, url: &str) -> anyhow::Result<(f64, f64, f64)> {
    let _ = std::fs::remove_dir_all(dir.join("out"));
    std::fs::write(dir.join("plan.toml"), plan(requests))?;
    let bin = std::env::current_exe()?.with_file_name("sloscope");
    anyhow::ensure!(
        bin.exists(),
        "{} missing: cargo build --release -p sloscope",
        bin.display()
    );
    let started = Instant::now();
    let mut child = Command::new(&bin)
        .args(["run", "--plan"])
        .arg(dir.join("plan.toml"))
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--endpoint", url, "--quiet"])
        .stdout(Stdio::null())
        .spawn()?;
    let (ok, peak) = watch_peak(&mut child)?;
    let secs = started.elapsed().as_secs_f64();
    anyhow::ensure!(ok, "sloscope run failed at {requests} requests");
    let file = dir.join("out/runs/throughput--slots64.json");
    let mb = std::fs::metadata(&file)?.len() as f64 / 1e6;
    let analyzed = Command::new(&bin)
        .arg("analyze")
        .arg(&file)
        .stdout(Stdio::null())
        .status()?;
    anyhow::ensure!(analyzed.code() == Some(0), "analyze refused the run file");
    Ok((peak, mb, secs))
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let counts: Vec<usize> = if args.is_empty() {
        vec![20_000, 200_000]
    } else {
        args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?
    };
    let dir = std::env::temp_dir().join(format!("sloscope-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json"] {
        std::fs::copy(fixture.join(f), dir.join(f))?;
    }
    let port = sloscope_collector::server::process::free_port()?;
    let mut server = Command::new(scripted_server_bin()?)
        .args(["--port", &port.to_string(), "--burst", "--tokens", "256"])
        .stderr(Stdio::null())
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        anyhow::ensure!(Instant::now() < deadline, "scripted server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("## Collector memory against the run's length: 64 streams, 256 tokens per request, `sloscope run` against the scripted server");
    println!("| requests | peak RSS MB | run file MB | collection s |");
    println!("|---:|---:|---:|---:|");
    let mut peaks = Vec::new();
    for n in counts {
        let (peak, mb, secs) = one(n, &dir, &url)?;
        println!("| {n} | {peak:.1} | {mb:.1} | {secs:.1} |");
        peaks.push(peak);
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
    if let (Some(first), Some(last)) = (peaks.first(), peaks.last()) {
        println!(
            "\npeak at the largest run / peak at the smallest: {:.2}×",
            last / first
        );
    }
    Ok(())
}
