//! Fault injection against the real llama-server on CPU: the collector killed (SIGKILL,
//! SIGTERM), the server killed at the start, middle and end of a profile, the server stopped
//! (SIGSTOP) before and during measurement, a full disk, a wrapper server command, an
//! authenticated server with the right and the wrong key, a dead endpoint. Each is bounded in
//! time. The llama-server tests need `scripts/setup-llama.sh` (`scripts/test.sh` runs them);
//! the dead-endpoint and one-endpoint tests need nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    files_under, journal_requests, made_lineage, scratch, sloscope, sloscope_bin, stderr,
};
use crate::endpoint::own_server;

/// The direct server command; `{tag}` marks its processes for the test to find.
pub(crate) const SERVER: &str = "{llama_server} -m {model_path} --parallel {parallel} -c 2048 -t 1 --host 127.0.0.1 --port {port} --metrics --no-webui --alias {tag}";

/// Lineage records for the embedded default, made once per test run.
pub(crate) fn lineage() -> PathBuf {
    made_lineage("Q4_1")
}

/// A scratch directory with a plan: `server` is the command template (`{tag}` filled),
/// `target_extra` more `[target]` lines, `head` lines before `[lineage]`, every profile sized
/// `requests` × 1 repeat.
pub(crate) struct Setup {
    pub(crate) dir: PathBuf,
    pub(crate) plan: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) tag: String,
}

pub(crate) fn setup(
    name: &str,
    server: &str,
    target_extra: &str,
    head: &str,
    requests: u32,
) -> Setup {
    let dir = scratch(name);
    let tag = format!("sloscope-fault-{}-{name}", std::process::id());
    let lin = lineage();
    let server = server.replace("{tag}", &tag);
    let plan = format!(
        r#"kind = "plan"
schema_version = "1.0"
name = "fault injection"
knob = "parallel"
{head}
[lineage]
gate = "{gate}"
baseline = "{baseline}"
deployment = "{deployment}"

[target]
api = "completions"
model = "smollm2"
model_path = "$SLOSCOPE_Q4_GGUF"
server_command = "{server}"
health_timeout_s = 60
{target_extra}

[vars]
llama_server = "$LLAMA_SERVER"

[[candidates]]
name = "np1"
value = 1

[[candidates]]
name = "np2"
value = 2

[[profiles]]
name = "latency"
primary_metric = "ttft_p95_ms"
slo = {{ ttft_p95_ms = 2000, failure_rate = 0.0 }}
workload = {{ id = "short", concurrency = 1, prompt_tokens = 16, max_output_tokens = 8, repeats = 1, requests_per_repeat = {requests} }}

[[profiles]]
name = "balanced"
primary_metric = "tpot_p95_ms"
slo = {{ ttft_p95_ms = 4000, tpot_p95_ms = 500, failure_rate = 0.0 }}
workload = {{ id = "mixed", concurrency = 2, prompt_tokens = 16, max_output_tokens = 8, repeats = 1, requests_per_repeat = {requests} }}

[[profiles]]
name = "throughput"
primary_metric = "throughput_tps"
slo = {{ queue_wait_p95_ms = 10000, failure_rate = 0.0 }}
workload = {{ id = "batch", concurrency = 2, prompt_tokens = 16, max_output_tokens = 4, repeats = 1, requests_per_repeat = {requests} }}
"#,
        gate = lin.join("gate.json").display(),
        baseline = lin.join("baseline.json").display(),
        deployment = lin.join("deployment.json").display(),
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    Setup {
        out: dir.join("out"),
        plan: path,
        dir,
        tag,
    }
}

impl Setup {
    /// `sloscope run` on this plan, not waited for; stderr goes to `stderr.txt`.
    pub(crate) fn spawn(&self, extra: &[&str], env: &[(&str, &str)]) -> Child {
        let err = std::fs::File::create(self.dir.join("stderr.txt")).unwrap();
        let mut c = Command::new(sloscope_bin());
        c.args(["run", "--plan", self.plan.to_str().unwrap()])
            .args([
                "--out",
                self.out.to_str().unwrap(),
                "--no-baseline",
                "--quiet",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(err);
        for (k, v) in env {
            c.env(k, v);
        }
        c.spawn().unwrap()
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    pub(crate) fn run_file(&self, profile: &str, candidate: &str) -> serde_json::Value {
        let p = self.out.join(format!("runs/{profile}--{candidate}.json"));
        let bytes =
            std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}\n{}", p.display(), self.stderr()));
        serde_json::from_slice(&bytes).unwrap()
    }
}

/// Waits for `child` at most `limit`; kills it and fails the test past that.
pub(crate) fn wait_bounded(
    child: &mut Child,
    limit: Duration,
    what: &str,
) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `cond` every 50 ms for at most `limit`.
pub(crate) fn wait_for(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Live (not zombie) processes whose command line contains `tag`, as (pid, command line).
pub(crate) fn tagged(tag: &str) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z');
        if cmd.contains(tag) && !zombie && pid != std::process::id() as i32 {
            out.push((pid, cmd));
        }
    }
    out
}

/// The llama-server process (not a wrapper shell) carrying `tag`.
pub(crate) fn server_pid(tag: &str) -> i32 {
    let mut found = None;
    wait_for(Duration::from_secs(60), "llama-server started", || {
        found = tagged(tag)
            .into_iter()
            .find(|(_, c)| c.contains("llama-server") && !c.starts_with("sh "))
            .map(|(p, _)| p);
        found.is_some()
    });
    found.unwrap()
}

pub(crate) fn signal(pid: i32, sig: &str) {
    let st = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "kill -{sig} {pid}");
}

pub(crate) fn journal_exists(out: &Path) -> bool {
    files_under(out)
        .iter()
        .any(|f| f.to_string_lossy().ends_with(".journal.jsonl"))
}

pub(crate) fn rows(run: &serde_json::Value) -> Vec<Option<String>> {
    run["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["requests"]["error"].as_array().unwrap().clone())
        .map(|e| e.as_str().map(String::from))
        .collect()
}

/// No process of the test's server is left (a watchdog may need a moment after a SIGKILL).
pub(crate) fn assert_no_server_left(tag: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let left = tagged(tag);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for (p, _) in &left {
                let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
            }
            panic!("processes outlived the collector: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn wrapper() -> String {
    // Not `exec`: the shell stays the direct child and llama-server is its child.
    format!("sh -c '{SERVER}; echo wrapper done'")
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_wrapper_command_is_measured_and_stopped_as_a_group() {
    let _cores = crate::common::llama_cores(1);
    let s = setup("wrapper", &wrapper(), "request_timeout_s = 60", "", 4);
    let mut c = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    let st = wait_bounded(&mut c, Duration::from_secs(120), "collector");
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    assert_eq!(run["status"], "ok");
    let peak = run["repeats"][0]["memory"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["server_rss_mb"].as_f64())
        .fold(0.0, f64::max);
    assert!(
        peak > 50.0,
        "the server's group is measured, not the shell: {peak} MB"
    );
    assert_eq!(run["server"]["command"][0], "sh");
    assert_no_server_left(&s.tag, Duration::from_secs(1));
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_collector_killed_with_sigkill_leaves_no_server_and_a_journal() {
    let _cores = crate::common::llama_cores(1);
    let s = setup("sigkill", &wrapper(), "request_timeout_s = 60", "", 40);
    let mut c = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    wait_for(Duration::from_secs(90), "two requests journaled", || {
        journal_requests(&s.out) >= 2
    });
    c.kill().unwrap();
    c.wait().unwrap();
    // The watchdog sends SIGTERM, then SIGKILL after 10 s.
    assert_no_server_left(&s.tag, Duration::from_secs(15));
    let kept = journal_requests(&s.out);
    let a = sloscope(
        &["analyze", s.out.to_str().unwrap(), "--format", "json"],
        &[],
    );
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert!(
        stderr(&a).contains("recovered from the journal"),
        "{}",
        stderr(&a)
    );
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let reason = v["profiles"][0]["excluded"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("partial run ({kept} requests kept)")),
        "{reason}"
    );
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn sigterm_keeps_what_was_measured_and_stops_the_server() {
    let _cores = crate::common::llama_cores(1);
    let s = setup("sigterm", SERVER, "request_timeout_s = 60", "", 40);
    let mut c = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    wait_for(Duration::from_secs(90), "two requests journaled", || {
        journal_requests(&s.out) >= 2
    });
    signal(c.id() as i32, "TERM");
    let st = wait_bounded(&mut c, Duration::from_secs(30), "collector after SIGTERM");
    assert_eq!(st.code(), Some(143), "{}", s.stderr());
    assert_no_server_left(&s.tag, Duration::from_secs(1));
    let run = s.run_file("latency", "np1");
    assert_eq!(run["status"], "partial");
    assert_eq!(run["failure"], "interrupted by SIGTERM");
    assert!(rows(&run).iter().filter(|e| e.is_none()).count() >= 2);
    assert!(
        s.stderr().contains("interrupted by SIGTERM"),
        "{}",
        s.stderr()
    );
}

/// When the server is killed: once the named profile's journal exists (`start`), once it holds
/// two requests (`middle`), or once the profile's run file is written (`end`).
fn server_killed(moment: &str) {
    let s = setup(
        &format!("crash-{moment}"),
        SERVER,
        "request_timeout_s = 60",
        "",
        6,
    );
    let mut c = s.spawn(&["--profiles", "latency,balanced,throughput"], &[]);
    let pid = server_pid(&s.tag);
    let first = s.out.join("runs/latency--np1.json");
    match moment {
        "start" => wait_for(Duration::from_secs(60), "journal", || {
            journal_exists(&s.out)
        }),
        "middle" => wait_for(Duration::from_secs(60), "requests", || {
            journal_requests(&s.out) >= 2
        }),
        _ => wait_for(Duration::from_secs(90), "first run file", || first.exists()),
    }
    signal(pid, "KILL");
    let st = wait_bounded(&mut c, Duration::from_secs(240), "collector");
    let err = s.stderr();
    assert_eq!(
        st.code(),
        Some(3),
        "a crash is an incomplete collection: {err}"
    );
    let charged = if moment == "end" {
        "balanced"
    } else {
        "latency"
    };
    let run = s.run_file(charged, "np1");
    assert_eq!(run["evidence_level"], "failed_backend_profile", "{run}");
    assert_eq!(run["status"], "partial");
    let why = run["failure"].as_str().unwrap();
    assert!(
        why.contains("server process exited") && why.contains("SIGKILL"),
        "{why}"
    );
    assert!(
        err.contains(&format!(
            "{charged} / np1: partial run: the server process exited"
        )),
        "{err}"
    );
    assert!(
        err.contains("the server's log"),
        "the log tail is shown: {err}"
    );
    assert!(
        err.contains("throughput / np1: not run: the server process exited"),
        "{err}"
    );
    if moment == "end" {
        let before = s.run_file("latency", "np1");
        assert_eq!(before["status"], "ok", "the finished profile is not blamed");
        assert_eq!(before["evidence_level"], "real_backend_profile");
    }
    // The other candidate has its own server: it is measured in full.
    for p in ["latency", "balanced", "throughput"] {
        let other = s.run_file(p, "np2");
        assert_eq!(other["status"], "ok", "{p}: {}", other["failure"]);
    }
    assert!(!s.out.join("runs/throughput--np1.json").exists());
    let a = sloscope(
        &["analyze", s.out.to_str().unwrap(), "--format", "json"],
        &[],
    );
    assert!(a.status.code() == Some(0), "{}", stderr(&a));
    assert_no_server_left(&s.tag, Duration::from_secs(1));
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_server_killed_at_the_start_of_a_profile_is_charged_to_it() {
    let _cores = crate::common::llama_cores(1);
    server_killed("start");
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_server_killed_mid_profile_is_charged_to_it() {
    let _cores = crate::common::llama_cores(1);
    server_killed("middle");
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_server_killed_after_a_profile_is_charged_to_the_next() {
    let _cores = crate::common::llama_cores(1);
    server_killed("end");
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_stopped_server_before_measurement_bounds_every_wait() {
    let _cores = crate::common::llama_cores(1);
    let s = setup(
        "sigstop-before",
        SERVER,
        "request_timeout_s = 3\nstall_timeout_s = 2",
        "",
        3,
    );
    // Stopped once healthy, before the collector starts: /tokenize, the connection warm-up and
    // every request must time out.
    let (mut server, endpoint) = own_server(&s);
    signal(server.id() as i32, "STOP");
    let started = Instant::now();
    let mut c = s.spawn(
        &[
            "--profiles",
            "latency",
            "--candidates",
            "np1",
            "--endpoint",
            &endpoint,
        ],
        &[],
    );
    let st = wait_bounded(
        &mut c,
        Duration::from_secs(90),
        "collector with a stopped server",
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(st.code(), Some(3), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    // Three requests in a row that time out or stall: the endpoint is hung, and nothing more
    // is sent to it (each would cost a whole timeout).
    assert_eq!(run["status"], "partial", "{run}");
    assert_eq!(run["evidence_level"], "failed_backend_profile");
    let why = run["failure"].as_str().unwrap();
    assert_eq!(
        why,
        "the endpoint stopped responding (3 requests in a row timed out or stalled)"
    );
    assert!(rows(&run).iter().all(|e| e
        .as_deref()
        .is_some_and(|e| e.starts_with("stalled") || e.starts_with("timeout"))));
    assert!(
        run["notes"].to_string().contains("not calibrated"),
        "/tokenize timed out: {}",
        run["notes"]
    );
    assert!(s
        .stderr()
        .contains("latency / np1: partial run: the endpoint stopped responding"));
    assert!(started.elapsed() < Duration::from_secs(90));
    assert_no_server_left(&s.tag, Duration::from_secs(1));
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_stopped_server_during_measurement_ends_in_stalls_and_timeouts() {
    let _cores = crate::common::llama_cores(1);
    let s = setup(
        "sigstop-during",
        SERVER,
        "request_timeout_s = 3\nstall_timeout_s = 2",
        "",
        8,
    );
    let mut c = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    let pid = server_pid(&s.tag);
    wait_for(Duration::from_secs(60), "requests", || {
        journal_requests(&s.out) >= 2
    });
    signal(pid, "STOP");
    let st = wait_bounded(
        &mut c,
        Duration::from_secs(90),
        "collector with a stopped server",
    );
    assert!(matches!(st.code(), Some(0 | 3)), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    let rows = rows(&run);
    assert!(rows.iter().filter(|e| e.is_none()).count() >= 2);
    let silent = |e: &Option<String>| {
        e.as_deref()
            .is_some_and(|e| e.starts_with("stalled") || e.starts_with("timeout"))
    };
    const HUNG: &str = "the endpoint stopped responding (3 requests in a row timed out or stalled)";
    let cut = |e: &Option<String>| e.as_deref() == Some(&format!("cancelled: {HUNG}"));
    assert!(
        rows.iter().all(|e| e.is_none() || silent(e) || cut(e)),
        "{rows:?}"
    );
    assert!(rows.iter().any(silent), "{rows:?}");
    // Every request sent is accounted for; once three in a row went unanswered the one in
    // flight was cancelled and the rest not sent, and the run says why.
    if rows.len() < 8 || rows.iter().any(cut) {
        assert_eq!(run["failure"], HUNG);
    }
    assert_no_server_left(&s.tag, Duration::from_secs(1));
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_full_disk_loses_nothing_the_message_claims() {
    let _cores = crate::common::llama_cores(1);
    // The server runs outside the file-size limit; the collector reaches it by --endpoint.
    let s = setup("disk-full", SERVER, "request_timeout_s = 60", "", 60);
    let (mut server, endpoint) = own_server(&s);
    // Every file the collector writes may grow to 8 KiB; SIGXFSZ ignored, so a write past
    // that fails with EFBIG, as a full disk fails with ENOSPC.
    let script = format!(
        "trap '' XFSZ; ulimit -f 8; exec {} run --plan {} --out {} --endpoint {endpoint} --candidates np1 --no-baseline --profiles throughput",
        sloscope_bin().display(),
        s.plan.display(),
        s.out.display()
    );
    let err = std::fs::File::create(s.dir.join("stderr.txt")).unwrap();
    let mut c = Command::new("bash")
        .args(["-c", &script])
        .stderr(err)
        .spawn()
        .unwrap();
    let st = wait_bounded(&mut c, Duration::from_secs(120), "collector on a full disk");
    let _ = server.kill();
    let _ = server.wait();
    let err = s.stderr();
    assert_eq!(
        st.code(),
        Some(4),
        "output that cannot be written is exit 4: {err}"
    );
    let claim = err
        .split("it holds the first ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no count of journaled requests: {err}"));
    let journal = s.out.join("journal/throughput--np1.journal.jsonl");
    if journal.exists() {
        // The run file could not be written either: the journal is what reached the disk.
        let text = std::fs::read_to_string(&journal).unwrap();
        for (i, line) in text.lines().enumerate() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("journal line {} is torn: {e}", i + 1));
        }
        assert_eq!(
            text.matches("\"line\":\"request\"").count(),
            claim,
            "the journal holds exactly what the message claims: {err}"
        );
    } else {
        // The (smaller) run file fitted: it holds every finished request and says so.
        let run = s.run_file("throughput", "np1");
        assert_eq!(run["status"], "partial");
        let n = rows(&run).len();
        assert!(n >= claim, "{n} < {claim}");
        assert!(
            err.contains(&format!("the run file was written after all, with all {n} finished requests; its journal ({claim} of them) is removed")),
            "{err}"
        );
    }
    assert!(claim > 0 && claim < 60, "{claim}");
}
