//! `sloscope run` against the test kit's hostile server, launched from the plan like any
//! backend: whatever the server does wrong, the run files are written, `analyze` reads them
//! without a bad-input error, and no profile is `accept`; a plan whose names would leave the
//! output directory is refused before anything runs.

use std::path::Path;

use crate::collect::plan_edited;
use crate::common::{scratch, sloscope, sloscope_bin, stderr};

fn hostile_server() -> String {
    let p = sloscope_bin().with_file_name("hostile-server");
    assert!(
        p.exists(),
        "{} is missing: cargo test --workspace",
        p.display()
    );
    p.display().to_string()
}

/// Collects the latency profile's slots1 candidate from a hostile server playing `how`.
fn collect(dir: &Path, how: &str) -> std::process::Output {
    let server = hostile_server();
    collect_with(dir, |text| {
        text.replace(
            "{scripted_server} --port {port} --slots {slots} --ttft-ms 20 --gap-ms 4 --tokens 64",
            &format!("{server} --misbehave {how} --port {{port}}"),
        )
    })
}

/// Collects the latency profile's slots1 candidate, the fixture plan edited by `edit`.
fn collect_with(dir: &Path, edit: impl Fn(String) -> String) -> std::process::Output {
    std::fs::create_dir_all(dir).unwrap();
    let plan = plan_edited(dir, edit);
    let out = dir.join("out");
    crate::collect::run(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--profiles",
            "latency",
            "--candidates",
            "slots1",
            "--no-baseline",
            "--quiet",
        ],
        &[],
    )
}

#[test]
fn a_server_that_errs_or_lies_leaves_readable_runs_and_no_accept() {
    let d = scratch("hostile-cli");
    for how in [
        "llama-error-field",
        "truncated",
        "usage-huge",
        "usage-below-events",
        "tokenize-zero",
        "redirect-metrics",
        "json-body",
    ] {
        let dir = d.join(how);
        let o = collect(&dir, how);
        assert_ne!(
            o.status.code(),
            Some(2),
            "{how}: the plan was refused: {}",
            stderr(&o)
        );
        let out = dir.join("out");
        let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
        assert_eq!(a.status.code(), Some(0), "{how}: {}", stderr(&a));
        let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
        for p in v["profiles"].as_array().unwrap() {
            assert_ne!(p["decision"], "accept", "{how}: {}", p["reason"]);
        }
        let runs = std::fs::read_dir(out.join("runs"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("latency--")
            })
            .count();
        assert!(runs >= 1, "{how}: no run file written ({})", stderr(&o));
        // A /metrics that redirects is no answer: the run says how many scrapes it lost.
        if how == "redirect-metrics" {
            let run = std::fs::read_to_string(out.join("runs/latency--slots1.json")).unwrap();
            assert!(
                run.contains("none of the server's")
                    && run.contains("/metrics scrapes got an answer"),
                "{run}"
            );
        }
    }
}

/// A server that stops at end-of-sequence though every request asked it not to (the scripted
/// server ends each answer after 3 tokens; the latency profile's cap is 8): the run records
/// that it asked (`endpoint.ignore_eos`), and the analysis flags it `stopped_before_cap`,
/// naming how many of the requests the server counted stopped short.
#[test]
fn a_server_that_stops_before_the_cap_it_was_asked_to_reach_is_flagged() {
    let dir = scratch("hostile-eos");
    let o = collect_with(&dir, |text| {
        text.replace("--gap-ms 4 --tokens 64", "--gap-ms 4 --tokens 3")
    });
    let out = dir.join("out");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/latency--slots1.json")).unwrap())
            .unwrap();
    assert_eq!(run["endpoint"]["ignore_eos"], true);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let flags = v["profiles"][0]["flags"].as_array().unwrap();
    let flag = flags
        .iter()
        .find(|f| f["code"] == "stopped_before_cap")
        .unwrap_or_else(|| panic!("no stopped_before_cap flag: {flags:?}"));
    let message = flag["message"].as_str().unwrap();
    assert!(
        message.contains("8 of 8 successful requests") && message.contains("3 of 8 tokens"),
        "{message}"
    );
}

/// A server whose own `/version` is not the version the records state (and the run copies
/// from them): the run records what the server said, and the analysis leaves the run out as
/// another backend than the lineage vouches for. The scripted server, which gives the records'
/// version, is measured as before.
#[test]
fn a_server_that_gives_another_version_than_the_records_is_left_out() {
    let dir = scratch("hostile-version");
    let o = collect(&dir, "other-version");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.join("out");
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/latency--slots1.json")).unwrap())
            .unwrap();
    let reported = &run["endpoint"]["reported"];
    assert_eq!(reported["version"], "0.0.1-other", "{reported}");
    assert_eq!(reported["version_from"], "/version version");
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let excluded = &v["profiles"][0]["excluded"];
    assert_eq!(
        excluded[0]["code"], "backend_version_mismatch",
        "{excluded}"
    );
    let why = excluded[0]["reason"].as_str().unwrap();
    assert!(
        why.contains("\"0.0.1-other\"") && why.contains("\"testkit\""),
        "{why}"
    );
}

/// An endpoint still loading its model (`/health` answers 503) is not measured before it is
/// ready: polled up to the health timeout (2 s here), then each profile is listed as not run,
/// naming the answer; no completion request is sent meanwhile.
#[test]
fn an_endpoint_still_loading_is_waited_for_then_not_run() {
    let dir = scratch("hostile-loading");
    std::fs::create_dir_all(&dir).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(hostile_server())
        .args(["--misbehave", "loading", "--port", &port.to_string()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let up = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "the hostile server did not listen");
    let plan = plan_edited(&dir, |text| {
        text.replace("health_timeout_s = 20", "health_timeout_s = 2")
    });
    let out = dir.join("out");
    let started = std::time::Instant::now();
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--endpoint",
            &format!("http://127.0.0.1:{port}"),
            "--profiles",
            "latency",
            "--candidates",
            "slots1",
            "--no-baseline",
            "--quiet",
        ],
        &[],
    );
    let _ = server.kill();
    let _ = server.wait();
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "{err}"
    );
    assert!(
        err.contains("latency / slots1: not run: the endpoint was not ready")
            && err.contains("still answered HTTP 503"),
        "{err}"
    );
    assert!(!out.join("runs/latency--slots1.json").exists());
}

#[test]
fn names_that_would_leave_the_output_directory_are_refused() {
    let d = scratch("hostile-names");
    std::fs::create_dir_all(&d).unwrap();
    let plan = plan_edited(&d, |text| {
        text.replace("name = \"slots1\"", "name = \"../../x\"")
    });
    let out = d.join("out");
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", "/bin/false")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("../../x"), "{}", stderr(&o));
    assert!(!d.parent().unwrap().join("x").exists());
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}
