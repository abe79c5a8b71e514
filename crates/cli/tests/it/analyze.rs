//! `sloscope analyze`: exit codes, formats and error messages.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use sloscope_core::schema::EvidenceLevel;
use sloscope_testkit::synth::{self, Shape};

fn dir(name: &str) -> PathBuf {
    crate::common::scratch(name)
}

fn write(d: &Path, name: &str, v: &serde_json::Value) {
    std::fs::write(d.join(name), serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

fn results(d: &Path, evidence: EvidenceLevel) {
    let [g, b, dep] = synth::lineage();
    write(d, "gate.json", &g);
    write(d, "baseline.json", &b);
    write(d, "deployment.json", &dep);
    let p = synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100, "failure_rate": 0.0}),
    );
    for (name, v) in [("np1", 1), ("np4", 4)] {
        let run = synth::run(
            "q4",
            &p,
            name,
            v,
            evidence,
            &Shape {
                seed: v as u64,
                ..Shape::default()
            },
        );
        write(
            d,
            &format!("run-{name}.json"),
            &serde_json::to_value(run).unwrap(),
        );
    }
}

fn sloscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sloscope"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn analyze_json_has_the_seed_fields_and_exit_codes_follow_the_verdict() {
    let d = dir("json");
    results(&d, EvidenceLevel::RealBackendProfile);
    let (code, out, err) = sloscope(&["analyze", d.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let p = &v["profiles"][0];
    assert_eq!(p["profile"], "latency");
    assert_eq!(p["decision"], "accept");
    assert!(p["recommended_name"].is_string());
    assert!(p["reason"]
        .as_str()
        .unwrap()
        .contains("meets every latency SLO"));
    assert!(p["candidates"][0]["summary"]["ttft"]["p95_ms"].is_number());
    let (code, _, _) = sloscope(&["analyze", d.to_str().unwrap(), "--check"]);
    assert_eq!(code, 0);

    let sim = dir("sim");
    results(&sim, EvidenceLevel::CpuProfileSimulation);
    let (code, out, _) = sloscope(&[
        "analyze",
        sim.to_str().unwrap(),
        "--check",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "simulation evidence is tune, so --check fails");
    assert!(out.contains("| latency | TUNE |"), "{out}");
    let (code, _, _) = sloscope(&["analyze", sim.to_str().unwrap()]);
    assert_eq!(
        code, 0,
        "without --check a tune verdict still analysed fine"
    );
}

#[test]
fn bad_input_is_exit_2_with_file_and_path_while_good_files_still_analyse() {
    let d = dir("bad");
    results(&d, EvidenceLevel::RealBackendProfile);
    std::fs::write(
        d.join("broken.json"),
        b"{\"kind\": \"run\", \"schema_version\": \"1.0\", \"repeats\": [",
    )
    .unwrap();
    let (code, out, err) = sloscope(&["analyze", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("broken.json: $.repeats: truncated JSON"),
        "{err}"
    );
    assert!(
        out.contains("latency"),
        "the good files are still analysed: {out}"
    );
    let (code, _, err) = sloscope(&["analyze", "/nonexistent/sloscope"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/sloscope: cannot read"), "{err}");
    let (code, _, _) = sloscope(&["analyze", "--format", "yaml", "x"]);
    assert_eq!(code, 2);
}

#[test]
fn out_file_is_written_and_text_is_default() {
    let d = dir("out");
    results(&d, EvidenceLevel::RealBackendProfile);
    let out_file = d.join("report.md");
    let (code, stdout, _) = sloscope(&[
        "analyze",
        d.join("gate.json").to_str().unwrap(),
        d.join("baseline.json").to_str().unwrap(),
        d.join("deployment.json").to_str().unwrap(),
        d.join("run-np1.json").to_str().unwrap(),
        "--format",
        "markdown",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(stdout.is_empty());
    let md = std::fs::read_to_string(&out_file).unwrap();
    assert!(md.starts_with("## sloscope verdict"), "{md}");
    let (_, text, _) = sloscope(&["analyze", d.to_str().unwrap()]);
    assert!(text.contains("Lineage: ready"), "{text}");
}

/// Directory inputs are safe: a link back to a parent, an alias of a sibling directory and a
/// repeated argument read each file once; a dangling link is named and everything else is
/// still analysed (exit 2 with the same verdicts).
#[test]
fn aliased_and_looping_directories_read_each_file_once() {
    let d = dir("analyze-aliases");
    let day = d.join("2026-11-30");
    std::fs::create_dir_all(&day).unwrap();
    results(&day, EvidenceLevel::RealBackendProfile);
    let (code, plain, _) = sloscope(&["analyze", day.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0);
    std::os::unix::fs::symlink(&day, d.join("latest")).unwrap();
    std::os::unix::fs::symlink("..", day.join("parent")).unwrap();
    let (code, out, err) = sloscope(&[
        "analyze",
        d.to_str().unwrap(),
        day.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    let b: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(a["profiles"][0]["decision"], b["profiles"][0]["decision"]);
    assert_eq!(
        a["profiles"][0]["candidates"].as_array().unwrap().len(),
        2,
        "each run read once: {err}"
    );
    assert!(err.contains("already read through another path"), "{err}");
    assert!(!err.contains("lineage"), "{err}");

    std::os::unix::fs::symlink(day.join("missing.json"), d.join("dangling.json")).unwrap();
    let (code, out, err) = sloscope(&["analyze", d.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("dangling.json: cannot resolve"), "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["profiles"][0]["decision"], b["profiles"][0]["decision"]);
}

/// Non-JSON files are named as what they are, not as malformed JSON.
#[test]
fn non_json_files_are_named_for_what_they_are() {
    let d = dir("analyze-shapes");
    for (name, bytes) in [
        ("bom.json", &b"\xEF\xBB\xBF{\"kind\":\"run\"}"[..]),
        ("table.json", b"ttft_ms,tpot_ms\n1,2\n"),
        ("conf.json", b"kind: run\nschema_version: '1.0'\n"),
        ("lines.json", b"{\"a\":1}\n{\"a\":2}\n"),
        ("wide.json", b"\xFF\xFE{\0\"\0k\0"),
    ] {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    let (code, _, err) = sloscope(&["analyze", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    for (name, word) in [
        ("bom.json", "byte-order mark"),
        ("table.json", "CSV"),
        ("conf.json", "YAML"),
        ("lines.json", "JSON Lines"),
        ("wide.json", "UTF-16"),
    ] {
        let line = err.lines().find(|l| l.contains(name)).unwrap_or_default();
        assert!(line.contains(word), "{name}: {line}");
        assert!(!line.contains("NaN"), "{line}");
    }
}

/// The same files however they are given: one directory, its parts as several arguments, or
/// reached again through hard links and symlinks give the same analysis; a named pipe among
/// them is named and skipped, never read (no hang).
#[test]
fn the_same_files_however_given_give_the_same_analysis() {
    let d = dir("analyze-metamorphic");
    let ex = d.join("ex");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/examples");
    let mut files = Vec::new();
    for sub in ["", "lineage", "runs"] {
        std::fs::create_dir_all(ex.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                let to = ex.join(sub).join(p.file_name().unwrap());
                std::fs::copy(&p, &to).unwrap();
                files.push(to);
            }
        }
    }
    let json = |args: &[&str]| -> (i32, serde_json::Value, String) {
        let (code, out, err) = sloscope(&[&["analyze"], args, &["--format", "json"]].concat());
        let mut v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        v["view"] = serde_json::Value::Null;
        (code, v, err)
    };
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (code, whole, err) = json(&[&s(&ex)]);
    assert_eq!(code, 0, "{err}");
    // Its parts as arguments, in another order.
    let (code, split, err) = json(&[
        &s(&ex.join("runs")),
        &s(&ex.join("plan.json")),
        &s(&ex.join("lineage")),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(split, whole);
    // Hard links and a symlinked directory beside the originals: each file read once.
    let hard = d.join("hard");
    std::fs::create_dir_all(&hard).unwrap();
    for (i, f) in files.iter().enumerate() {
        std::fs::hard_link(f, hard.join(format!("{i}.json"))).unwrap();
    }
    std::os::unix::fs::symlink(&ex, d.join("alias")).unwrap();
    let (code, linked, err) = json(&[&s(&ex), &s(&hard), &s(&d.join("alias"))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(linked, whole, "{err}");
    assert!(err.contains("already read through another path"), "{err}");
    // A named pipe: named and skipped, the rest analysed, and the command ends.
    let fifo = ex.join("runs").join("pipe.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, piped, err) = json(&[&s(&ex)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("pipe.json") && err.contains("not a regular file"),
        "{err}"
    );
    assert_eq!(piped["profiles"], whole["profiles"]);
}
