//! `sloscope gate` end to end: against two real llama-servers (the demo's Q4_1 artifact and its
//! F16 baseline) the record is written, read back by `analyze` as the measured gate, and a server
//! killed part-way leaves a partial record that rejects; against the test kit's scripted server
//! (no probabilities, another tokenizer) it refuses with what is wrong.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{lineage_in, repo, scratch, scripted_server, sloscope, sloscope_bin, stderr};

pub(crate) struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn healthy(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ok = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut s| {
            use std::io::{Read, Write};
            let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut b = String::new();
            let _ = s.read_to_string(&mut b);
            b.starts_with("HTTP/1.1 200")
        });
        if ok {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "server on {port} not healthy in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn start(cmd: &Path, args: &[&str]) -> (Server, String) {
    let port = free_port();
    let child = Command::new(cmd)
        .args(args)
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let s = Server(child);
    healthy(port);
    (s, format!("http://127.0.0.1:{port}"))
}

fn llama(model_var: &str) -> (Server, String) {
    llama_with(model_var, "1")
}

/// llama-server on `model_var`'s model, one thread, its counters served (`--metrics`).
fn llama_counted(model_var: &str) -> (Server, String) {
    let bin = std::env::var("LLAMA_SERVER").unwrap();
    let model = std::env::var(model_var).unwrap();
    let args = [
        "-c",
        "2048",
        "-t",
        "1",
        "--host",
        "127.0.0.1",
        "--no-webui",
        "--metrics",
    ];
    let mut all = vec!["-m", model.as_str()];
    all.extend(args);
    start(Path::new(&bin), &all)
}

/// The sum of a Prometheus counter `name` that the server at `url` reports (llama-server with
/// `--metrics`); `None` while it cannot say.
fn counter(url: &str, name: &str) -> Option<f64> {
    use std::io::{Read, Write};
    let port: u16 = url.rsplit(':').next()?.parse().ok()?;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut b = String::new();
    s.read_to_string(&mut b).ok()?;
    b.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// llama-server on `model_var`'s model with `threads` threads.
pub(crate) fn llama_with(model_var: &str, threads: &str) -> (Server, String) {
    let bin = std::env::var("LLAMA_SERVER").expect("LLAMA_SERVER: source scripts/setup-llama.sh");
    let model = std::env::var(model_var).unwrap();
    start(
        Path::new(&bin),
        &[
            "-m",
            &model,
            "-c",
            "2048",
            "-t",
            threads,
            "--host",
            "127.0.0.1",
            "--no-webui",
        ],
    )
}

fn lineage(d: &Path) -> PathBuf {
    lineage_of(d, "Q4_1")
}

/// The demo's lineage records for the artifact of `format` (scripts/make-lineage.sh).
pub(crate) fn lineage_of(d: &Path, format: &str) -> PathBuf {
    let l = d.join("lineage");
    lineage_in(&l, format);
    l
}

pub(crate) fn gate_args<'a>(
    q: &'a str,
    f: &'a str,
    l: &'a Path,
    out: &'a Path,
    eval: &'a Path,
) -> Vec<String> {
    [
        "gate",
        "--quantized",
        q,
        "--float",
        f,
        "--eval",
        eval.to_str().unwrap(),
        "--deployment",
        l.join("deployment.json").to_str().unwrap(),
        "--baseline",
        l.join("baseline.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn gate_on_llama_server_writes_evidence_that_analyze_reads_and_a_dead_server_rejects() {
    let _cores = crate::common::llama_cores(1);
    let d = scratch("gate-llama");
    let l = lineage(&d);
    let (_q, qurl) = llama("SLOSCOPE_Q4_GGUF");
    let (_f, furl) = llama("SLOSCOPE_F16_GGUF");
    let eval = repo().join("tests/fixtures/gate/eval-small.txt");
    let out = l.join("gate.json");
    let args = gate_args(&qurl, &furl, &l, &out, &eval);
    let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert!(matches!(r.status.code(), Some(0 | 1 | 5)), "{}", stderr(&r));
    let g: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let e = &g["evidence"];
    let positions = e["figures"]["positions"].as_u64().unwrap();
    assert!(positions > 40, "both texts scored: {positions}");
    // The float server scored twice (the second time without its prompt cache) agrees with
    // itself up to rounding: exactly on some CPUs, in the last bits on others (3e-6 nats on an
    // AMD EPYC host, where the quantization moved 0.003) — far below what quantizing changes.
    let noise = e["noise_floor"]["kld_mean"].as_f64().unwrap();
    let quantized = e["figures"]["kld_mean"].as_f64().unwrap();
    assert!(
        (0.0..quantized / 100.0).contains(&noise),
        "noise floor {noise} nats against {quantized} for the quantization"
    );
    // The record's decision is the measurement's: not enough evidence is `tune` (exit 5).
    let said = match e["decision"].as_str().unwrap() {
        "not_enough_evidence" => "tune",
        d => d,
    };
    assert_eq!(g["decision"], said);
    assert_eq!(r.status.code() == Some(0), e["decision"] == "accept");
    assert_eq!(
        r.status.code() == Some(5),
        e["decision"] == "not_enough_evidence"
    );
    // Analyse: the gate's evidence is the gate, bound to the artifacts by sha256.
    let a = sloscope(&["analyze", l.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(
        v["lineage"]["ready"],
        e["decision"] == "accept",
        "{:#}",
        v["lineage"]
    );
    assert_eq!(v["lineage"]["gate"]["figures"]["positions"], positions);
    let warned = v["lineage"]["warnings"].to_string();
    assert!(!warned.contains("gate_without_evidence"), "{warned}");
    // The same scoring against the figures the committed fixture holds: the same servers and
    // texts give the same numbers.
    let fixture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo().join("tests/fixtures/gate/q4_1-vs-f16.gate.json")).unwrap(),
    )
    .unwrap();
    let kld = |x: &serde_json::Value| x["evidence"]["figures"]["kld_mean"].as_f64().unwrap();
    assert!(
        (kld(&g) - kld(&fixture)).abs() < 1e-3,
        "{} vs {}",
        kld(&g),
        kld(&fixture)
    );
    // The quantized server dies part-way: what was scored is kept, marked, rejected (exit 3).
    let (q2, q2url) = llama_counted("SLOSCOPE_Q4_GGUF");
    let long = d.join("long.txt");
    let text = std::fs::read_to_string(&eval).unwrap().repeat(6);
    std::fs::write(&long, text).unwrap();
    let out2 = d.join("partial.json");
    let args = gate_args(&q2url, &furl, &l, &out2, &long);
    let child = Command::new(sloscope_bin())
        .args(&args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It dies once it has answered more positions (one token predicted each) than the small
    // text has: past its first copy's scoring whatever the machine's speed, five copies left.
    let deadline = Instant::now() + Duration::from_secs(120);
    while counter(&q2url, "llamacpp:tokens_predicted_total").unwrap_or(0.0) <= positions as f64 {
        assert!(
            Instant::now() < deadline,
            "the quantized server never scored"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(q2);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&out2).unwrap()).unwrap();
    assert_eq!(p["decision"], "reject");
    assert!(
        p["evidence"]["partial"]
            .as_str()
            .unwrap()
            .starts_with("text "),
        "{}",
        p["evidence"]["partial"]
    );
    assert!(p["evidence"]["figures"]["positions"].as_u64().unwrap() > 0);
}

#[test]
fn a_server_without_probabilities_or_with_another_tokenizer_is_refused_by_name() {
    let d = scratch("gate-refused");
    std::fs::create_dir_all(d.join("l")).unwrap();
    let l = d.join("l");
    for f in ["baseline.json", "deployment.json"] {
        std::fs::copy(repo().join("tests/fixtures/scripted").join(f), l.join(f)).unwrap();
    }
    let eval = repo().join("tests/fixtures/gate/eval-small.txt");
    let (_a, aurl) = start(&scripted_server(), &["--tokens", "4"]);
    let (_b, burl) = start(&scripted_server(), &["--tokens", "4"]);
    let out = d.join("gate.json");
    for (backend, says) in [("vllm", "--max-logprobs"), ("llama", "n_probs")] {
        let mut args = gate_args(&aurl, &burl, &l, &out, &eval);
        args.extend(["--backend".to_string(), backend.to_string()]);
        let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        assert_eq!(r.status.code(), Some(2), "{backend}: {}", stderr(&r));
        assert!(stderr(&r).contains(says), "{backend}: {}", stderr(&r));
        assert!(!out.exists(), "nothing scored, nothing written");
    }
    // Bad input, each named.
    let empty = d.join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    let bin = d.join("bin.txt");
    std::fs::write(&bin, [0xff_u8, 0xfe, 0x00]).unwrap();
    for (file, says) in [(&empty, "no text in it"), (&bin, "not UTF-8")] {
        let args = gate_args(&aurl, &burl, &l, &out, file);
        let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        assert_eq!(r.status.code(), Some(2));
        assert!(stderr(&r).contains(says), "{}", stderr(&r));
    }
    let mut args = gate_args(&aurl, &burl, &l, &out, &eval);
    args.extend(["--top1-min".into(), "1.5".into()]);
    let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("top1_min 1.5"), "{}", stderr(&r));
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn two_servers_that_tokenize_differently_are_refused_with_the_first_differing_text() {
    let _cores = crate::common::llama_cores(1);
    let d = scratch("gate-vocab");
    let l = lineage(&d);
    let (_q, qurl) = start(&scripted_server(), &["--tokens", "4"]);
    let (_f, furl) = llama("SLOSCOPE_F16_GGUF");
    let eval = repo().join("tests/fixtures/gate/eval-small.txt");
    let out = d.join("gate.json");
    let args = gate_args(&qurl, &furl, &l, &out, &eval);
    let r = sloscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    let e = stderr(&r);
    assert!(
        e.contains("tokenize text 0") && e.contains("vocabulary mismatch"),
        "{e}"
    );
    assert!(!out.exists());
}

/// A plan with an endpoint target, the test kit's lineage records and `gate` lines.
fn plan_with_gate(d: &Path, gate: &str) -> PathBuf {
    let names = ["gate", "baseline", "deployment"];
    for (name, rec) in names.iter().zip(sloscope_testkit::synth::lineage()) {
        std::fs::write(d.join(format!("{name}.json")), rec.to_string()).unwrap();
    }
    std::fs::write(d.join("eval.txt"), "A short text to score.\n").unwrap();
    let plan = format!(
        r#"kind = "plan"
schema_version = "1.0"
knob = "parallel"
{gate}
[lineage]
gate = "gate.json"
baseline = "baseline.json"
deployment = "deployment.json"

[target]
endpoint = "http://127.0.0.1:9"

[baseline]
name = "f16"
value = 1
endpoint = "http://127.0.0.1:10"

[[candidates]]
name = "np1"
value = 1

[[profiles]]
name = "latency"
primary_metric = "ttft_p95_ms"
slo = {{ ttft_p95_ms = 250, failure_rate = 0.0 }}
workload = {{ id = "short", concurrency = 1, prompt_tokens = 16, max_output_tokens = 8, repeats = 1, requests_per_repeat = 2 }}
"#
    );
    let p = d.join("plan.toml");
    std::fs::write(&p, plan).unwrap();
    p
}

#[test]
fn a_plan_without_a_usable_gate_section_is_refused_by_field() {
    let cases = [
        ("", "no [gate] section"),
        (
            "[gate]\neval = \"eval.txt\"\ncandidate = \"np9\"\n",
            "gate.candidate \"np9\": not a candidate of the plan (candidates: np1)",
        ),
        (
            "[gate]\neval = \"eval.txt\"\nbackend = \"tgi\"\n",
            "gate.backend \"tgi\"",
        ),
        (
            "[gate]\neval = \"eval.txt\"\ntop1_min = 2.0\n",
            "top1_min 2: expected a share",
        ),
        (
            "[gate]\neval = \"eval.txt\"\nkld_max = 0.1\n",
            "unknown field `kld_max`",
        ),
    ];
    for (i, (gate, expected)) in cases.into_iter().enumerate() {
        let d = scratch(&format!("gate-plan-refused-{i}"));
        let p = plan_with_gate(&d, gate);
        let r = sloscope(&["gate", "--plan", p.to_str().unwrap()], &[]);
        assert_eq!(r.status.code(), Some(2), "{gate}: {}", stderr(&r));
        assert!(stderr(&r).contains(expected), "{gate}: {}", stderr(&r));
        // Nothing was written over the plan's gate record.
        let g = std::fs::read_to_string(d.join("gate.json")).unwrap();
        assert!(!g.contains("evidence"), "{gate}");
    }
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn gate_from_a_plan_launches_both_servers_and_replaces_the_plans_gate_record() {
    let _cores = crate::common::llama_cores(1);
    let d = scratch("gate-plan-llama");
    lineage_of(&d, "Q8_0");
    let plan = std::fs::read_to_string(repo().join("examples/llama-cpu/plan.toml")).unwrap();
    std::fs::write(d.join("plan.toml"), plan).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/gate/eval-small.txt"),
        d.join("eval.txt"),
    )
    .unwrap();
    let p = d.join("plan.toml");
    let r = sloscope(
        &["gate", "--plan", p.to_str().unwrap(), "--top-k", "10"],
        &[],
    );
    assert!(matches!(r.status.code(), Some(0 | 1 | 5)), "{}", stderr(&r));
    let g: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("lineage/gate.json")).unwrap()).unwrap();
    let e = &g["evidence"];
    assert!(e["figures"]["positions"].as_u64().unwrap() > 40);
    assert_eq!(e["top_k"], 10, "the flag overrides the plan");
    assert_eq!(e["thresholds"]["kld_mean_max"], 0.05);
    assert_eq!(e["quantized"]["artifact_id"], "smollm2-135m-instruct-q8_0");
    assert!(g["notes"]
        .as_str()
        .unwrap()
        .starts_with("Q8_0 quantized from the F16"));
    // Each server the plan describes was launched (its log beside the plan) and is gone.
    for name in ["np1", "f16"] {
        let log = d.join(format!("logs/gate-{name}.log"));
        assert!(log.exists(), "{}", log.display());
    }
    let url = e["quantized"]["endpoint"].as_str().unwrap().to_string();
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the quantized server still listens on {port}"
    );
}
