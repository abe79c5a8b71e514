//! `sloscope run` against the test kit's scripted server, launched from the plan's command
//! template on 127.0.0.1: the whole plan, a server killed mid-run, a collector killed mid-run,
//! Ctrl-C, and the API key kept out of every file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{
    files_under, journal_requests, repo, scratch, scripted_server, sloscope, sloscope_bin, stderr,
    validate_runs_against_schema,
};

/// Copies the scripted fixture plan (and its lineage records) into `dir`, edited by `edit`.
pub(crate) fn plan_edited(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let src = repo().join("tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let text = edit(std::fs::read_to_string(src.join("plan.toml")).unwrap());
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Copies the scripted fixture plan into `dir`, replacing the server commands' flags.
pub(crate) fn plan_in(dir: &Path, candidate_flags: &str, baseline_flags: &str) -> PathBuf {
    plan_edited(dir, |text| {
        text.replace("--ttft-ms 20 --gap-ms 4 --tokens 64", candidate_flags)
            .replace("--ttft-ms 40 --gap-ms 8 --tokens 64", baseline_flags)
    })
}

pub(crate) fn env() -> Vec<(&'static str, String)> {
    vec![(
        "SLOSCOPE_SCRIPTED_SERVER",
        scripted_server().display().to_string(),
    )]
}

pub(crate) fn run(args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
    let e = env();
    let mut all: Vec<(&str, &str)> = e.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(extra);
    sloscope(args, &all)
}

#[test]
fn whole_plan_against_the_scripted_server() {
    let d = scratch("collect-all");
    let plan = repo().join("tests/fixtures/scripted/plan.toml");
    let out = d.join("out");
    let secret = "sk-sloscope-test-4f1d9a";
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--api-key-env",
            "SLOSCOPE_TEST_KEY",
            "--quiet",
        ],
        &[("SLOSCOPE_TEST_KEY", secret)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        validate_runs_against_schema(&out),
        9,
        "3 profiles × (2 candidates + baseline)"
    );
    for f in files_under(&out) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "API key leaked into {}",
            f.display()
        );
    }
    assert!(!stderr(&o).contains(secret));
    // What the server said it is, beside what the records say.
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/latency--slots1.json")).unwrap())
            .unwrap();
    assert_eq!(
        run["endpoint"]["reported"],
        serde_json::json!({"version": "testkit", "version_from": "/version version", "models": ["scripted"]})
    );
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["lineage"]["ready"], true, "{}", v["lineage"]);
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 3);
    for p in profiles {
        assert_eq!(
            p["decision"], "tune",
            "a simulation is never accepted: {}",
            p["reason"]
        );
        assert!(
            p["baseline"]["rows"].is_array(),
            "quantized vs float for {}",
            p["profile"]
        );
        for c in p["candidates"].as_array().unwrap() {
            assert_eq!(c["evidence_level"], "cpu_profile_simulation");
            let s = &c["summary"];
            assert_eq!(s["requests_failed"], 0);
            assert_eq!(s["output_tokens_sources"]["usage"], s["requests_ok"]);
        }
    }
    let tp = profiles
        .iter()
        .find(|p| p["profile"] == "throughput")
        .unwrap();
    let one = tp["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "slots1")
        .unwrap();
    assert!(
        one["summary"]["queue_depth_max"].as_f64().unwrap() >= 1.0,
        "8 streams on 1 slot queue up"
    );
    assert!(one["summary"]["queue_wait"]["p95_ms"].as_f64().unwrap() > 50.0);
    assert_eq!(tp["recommended_name"], "slots4");
    runs_name_their_plan(&out, &v);
    narrowed_sittings(&d, &out);
}

/// Every run records the content sha256 of the plan it was collected under, the one the
/// analysis gives the `plan.json` copy; analysed under another plan (an SLO edited), the header
/// says how many runs were collected under another.
fn runs_name_their_plan(out: &Path, v: &serde_json::Value) {
    let hash = v["subject"]["plan_content_sha256"].as_str().unwrap();
    assert!(v["subject"]["runs_plan"].is_null(), "{}", v["subject"]);
    assert!(v["subject"]["plan_left_out"].is_null(), "{}", v["subject"]);
    let runs: Vec<PathBuf> = files_under(&out.join("runs"))
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .collect();
    for f in &runs {
        let run: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        assert_eq!(run["plan_content_sha256"], hash, "{}", f.display());
    }
    let edited = out.join("plan.json");
    let text = std::fs::read_to_string(&edited).unwrap().replacen(
        "\"ttft_p95_ms\": 200",
        "\"ttft_p95_ms\": 150",
        1,
    );
    let other = out.parent().unwrap().join("edited-plan.json");
    std::fs::write(&other, text).unwrap();
    let a = sloscope(
        &[
            "analyze",
            out.join("runs").to_str().unwrap(),
            out.join("lineage").to_str().unwrap(),
            other.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    let w: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_ne!(
        w["subject"]["plan_content_sha256"], hash,
        "the plan was edited"
    );
    let want = format!(
        "{n} of the {n} runs were collected under another plan (content sha256 {})",
        &hash[..12],
        n = runs.len()
    );
    assert_eq!(w["subject"]["runs_plan"], want.as_str(), "{}", w["subject"]);
}

#[test]
fn a_server_killed_mid_run_leaves_a_readable_partial_result() {
    let d = scratch("collect-crash");
    let plan = plan_in(
        &d,
        "--ttft-ms 5 --gap-ms 2 --tokens 32 --exit-after 5",
        "--ttft-ms 5 --gap-ms 2 --tokens 32",
    );
    let out = d.join("out");
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--profiles",
            "throughput",
            "--candidates",
            "slots1",
            "--no-baseline",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "an incomplete run is exit 3: {}",
        stderr(&o)
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/throughput--slots1.json")).unwrap())
            .unwrap();
    assert_eq!(run["status"], "partial");
    assert_eq!(run["evidence_level"], "failed_backend_profile");
    assert!(
        run["failure"]
            .as_str()
            .unwrap()
            .contains("server process exited"),
        "{}",
        run["failure"]
    );
    assert_eq!(
        run["server"]["exit_status"], 137,
        "the crash's exit status is recorded"
    );
    let kept: usize = run["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requests"]["send_offset_us"].as_array().unwrap().len())
        .sum();
    assert!(kept >= 5, "every finished request is kept: {kept}");
    validate_runs_against_schema(&out);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(
        v["profiles"].as_array().unwrap().len(),
        1,
        "the written plan holds the profiles that ran"
    );
    let ex = &v["profiles"][0]["excluded"][0];
    assert!(
        ex["reason"].as_str().unwrap().starts_with("partial run"),
        "{ex}"
    );
    // A planned cell whose run is partial is not measured: no verdict over the rest.
    assert_eq!(v["profiles"][0]["decision"], "incomplete");
    assert!(
        v["view"]["profiles"][0]["headline"]
            .as_str()
            .unwrap()
            .contains(": INCOMPLETE · not measured: candidate"),
        "{}",
        v["view"]["profiles"][0]["headline"]
    );
}

/// Kills every process whose command line holds `tag` (servers a killed collector left).
pub(crate) fn kill_tagged(tag: &str) {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(tag) {
            if let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() {
                let _ = std::process::Command::new("kill")
                    .arg("-9")
                    .arg(pid.to_string())
                    .status();
            }
        }
    }
}

fn start_slow_run(d: &Path) -> (std::process::Child, PathBuf, String) {
    let tag = format!("sloscope-tag-{}", d.file_name().unwrap().to_string_lossy());
    let flags = format!("--ttft-ms 5 --gap-ms 40 --tokens 64 --tag {tag}");
    let plan = plan_in(d, &flags, &flags);
    let out = d.join("out");
    let child = std::process::Command::new(sloscope_bin())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--profiles",
            "throughput",
            "--quiet",
        ])
        .env("SLOSCOPE_SCRIPTED_SERVER", scripted_server())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while journal_requests(&out) < 3 {
        assert!(
            Instant::now() < deadline,
            "no requests journaled within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, out, tag)
}

#[test]
fn a_collector_killed_mid_run_leaves_a_journal_that_analyze_reads() {
    let d = scratch("collect-kill9");
    let (mut child, out, tag) = start_slow_run(&d);
    child.kill().unwrap();
    child.wait().unwrap();
    kill_tagged(&tag);
    let journaled = journal_requests(&out);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let err = stderr(&a);
    assert!(
        err.contains("read as partial") && err.contains("recovered from the journal"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let ex = v["profiles"][0]["excluded"].as_array().unwrap();
    let reason = ex[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("partial run ({journaled} requests kept)")),
        "{reason}"
    );
}

#[test]
fn ctrl_c_writes_partial_runs_and_exits_130() {
    let d = scratch("collect-sigint");
    let (mut child, out, tag) = start_slow_run(&d);
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    kill_tagged(&tag);
    assert_eq!(status.code(), Some(130));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/throughput--slots1.json")).unwrap())
            .unwrap();
    assert_eq!(run["status"], "partial");
    assert!(
        run["failure"]
            .as_str()
            .unwrap()
            .starts_with("interrupted by Ctrl-C"),
        "{}",
        run["failure"]
    );
    let reqs = &run["repeats"][0]["requests"];
    let errors = reqs["error"].as_array().unwrap();
    assert!(errors.iter().any(|e| e
        .as_str()
        .is_some_and(|e| e.starts_with("cancelled: interrupted by Ctrl-C"))));
    assert!(
        journal_requests(&out) == 0,
        "the journal is removed once the run file is written"
    );
    validate_runs_against_schema(&out);
}

#[test]
fn external_benchmark_per_profile_is_imported_and_failures_are_recorded() {
    let d = scratch("external");
    // vLLM's run sent 32-token caps: the balanced profile here asks the same (at the fixture's
    // 16, its outputs would exceed the cap and the import be left out as another workload).
    let plan = plan_edited(&d, |text| {
        text.replace("--ttft-ms 20 --gap-ms 4 --tokens 64", "--ttft-ms 5")
            .replace("--ttft-ms 40 --gap-ms 8 --tokens 64", "--ttft-ms 5")
            .replace(
                "prompt_tokens = 32, max_output_tokens = 16, repeats = 2",
                "prompt_tokens = 32, max_output_tokens = 32, repeats = 2",
            )
    });
    let out = d.join("out");
    let fixture = repo().join("tests/fixtures/peers/vllm/save-detailed.json");
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    let cmd = format!(
        "test {{profile}} != throughput && cp {} {}/r.{{profile}}.json",
        fixture.display(),
        d.display()
    );
    let res = format!("{}/r.{{profile}}.json", d.display());
    let o = run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--command-template",
            &cmd,
            "--result-template",
            &res,
            "--import-candidate",
            "slots4",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "the throughput command fails: {}",
        stderr(&o)
    );
    let lat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/latency--slots4.json")).unwrap())
            .unwrap();
    assert_eq!(lat["source"], "imported");
    assert!(lat["imported_from"]
        .as_str()
        .unwrap()
        .contains("vllm bench serve --save-result"));
    assert_eq!(lat["import"]["tool"], "vLLM");
    assert_eq!(
        lat["repeats"][0]["requests"]["ttft_us"]
            .as_array()
            .unwrap()
            .len(),
        original["ttfts"].as_array().unwrap().len()
    );
    assert_eq!(lat["reported"]["ttft_p99_ms"], original["p99_ttft_ms"]);
    let tp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/throughput--slots4.json")).unwrap())
            .unwrap();
    assert_eq!(tp["status"], "failed");
    assert_eq!(tp["evidence_level"], "failed_backend_profile");
    assert!(
        tp["failure"]
            .as_str()
            .unwrap()
            .starts_with("the command exited with"),
        "{}",
        tp["failure"]
    );
    validate_runs_against_schema(&out);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let profile = |name: &str| {
        v["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["profile"] == name)
            .unwrap()
            .clone()
    };
    // vLLM ran 4 streams: the balanced profile's load, not the latency profile's.
    let why = profile("latency")["excluded"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(why.contains("concurrency 4 (the profile's is 1)"), "{why}");
    let c = &profile("balanced")["candidates"][0];
    assert_eq!(
        c["source"], "recomputed",
        "raw arrays are recomputed, not trusted"
    );
    let p50 = original["median_ttft_ms"].as_f64().unwrap();
    assert!((c["summary"]["ttft"]["p50_ms"].as_f64().unwrap() - p50).abs() < 0.01);
}

/// A run narrowed with `--profiles`, `--candidates` or `--no-baseline` keeps in its plan copy
/// what it left out, and the header says so (what was never measured is named, not hidden
/// behind a smaller plan); its runs record the whole plan's hash, so they match the whole
/// plan (`whole`, the copy of a run of every profile); and two sittings narrowed differently
/// read as one plan, not as two conflicting ones.
fn narrowed_sittings(d: &Path, whole: &Path) {
    let sitting = |profile: &str| {
        let out = d.join(format!("narrowed-{profile}"));
        let o = run(
            &[
                "run",
                "--plan",
                repo()
                    .join("tests/fixtures/scripted/plan.toml")
                    .to_str()
                    .unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--profiles",
                profile,
                "--candidates",
                "slots1",
                "--no-baseline",
                "--quiet",
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["analyze"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--format", "json"]);
        serde_json::from_slice(&sloscope(&all, &[]).stdout).unwrap()
    };
    let latency = sitting("latency");
    let v = json(&[latency.to_str().unwrap()]);
    assert_eq!(
        v["subject"]["plan_left_out"],
        "left out when run: profiles balanced, throughput; candidate slots4; the float baseline float",
        "{}",
        v["subject"]
    );
    // Beside the whole plan: collected under it.
    let runs = latency.join("runs");
    let v = json(&[
        runs.to_str().unwrap(),
        whole.join("lineage").to_str().unwrap(),
        whole.join("plan.json").to_str().unwrap(),
    ]);
    assert!(v["subject"]["runs_plan"].is_null(), "{}", v["subject"]);
    // Two sittings: one plan, what neither ran left out.
    let balanced = sitting("balanced");
    let v = json(&[latency.to_str().unwrap(), balanced.to_str().unwrap()]);
    assert_eq!(
        v["subject"]["plan_left_out"],
        "left out when run: profile throughput; candidate slots4; the float baseline float",
        "{}",
        v["subject"]
    );
    assert!(
        v["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| !p["reason"].as_str().unwrap().contains("different plans")),
        "{}",
        v["profiles"]
    );
}
