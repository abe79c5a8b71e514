//! `sloscope run` with a capacity search against the scripted server's queueing model (N slots,
//! waiting requests queue), whose true capacity under the plan's TTFT ceiling is N streams.

use crate::common::{repo, scratch, scripted_server, sloscope, stderr};

#[test]
fn the_search_finds_each_candidates_slot_count_in_fewer_trials_than_a_grid() {
    let d = scratch("capacity");
    let src = repo().join("tests/fixtures/scripted");
    for f in [
        "gate.json",
        "baseline.json",
        "deployment.json",
        "capacity.toml",
    ] {
        std::fs::copy(src.join(f), d.join(f)).unwrap();
    }
    let out = d.join("out");
    let server = scripted_server().display().to_string();
    let env = [("SLOSCOPE_SCRIPTED_SERVER", server.as_str())];
    let plan = d.join("capacity.toml");
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = &v["profiles"][0];
    let cap = &p["capacity"];
    assert_eq!(cap["grid_trials"], 15, "loads 2 to 16");
    for (i, (name, slots)) in [("slots2", 2.0), ("slots5", 5.0)].into_iter().enumerate() {
        let c = &cap["candidates"][i];
        assert_eq!(c["name"], name);
        assert_eq!(c["status"], "found", "{c:#}");
        assert_eq!(c["last_pass"].as_f64(), Some(slots), "{name}: {c:#}");
        assert_eq!(c["first_fail"].as_f64(), Some(slots + 1.0), "{name}: {c:#}");
        let trials = c["trials"].as_array().unwrap().len();
        assert!(trials < 15, "{name}: {trials} trials");
        assert!(
            c["binding_at_fail"]
                .as_str()
                .unwrap()
                .starts_with("ttft_p95_ms"),
            "{c:#}"
        );
    }
    assert_eq!(cap["best"], "slots5");
    // Ranked by capacity, but the scripted server is a simulation: never accept.
    assert_eq!(p["decision"], "tune", "{}", p["reason"]);
    assert_eq!(p["recommended_name"], "slots5");
    let text = sloscope(&["analyze", out.to_str().unwrap()], &[]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("slots5 sustains the most: 5 streams (6 fails)"),
        "{text}"
    );
}

#[test]
fn candidates_narrow_a_search_and_ctrl_c_keeps_every_finished_trial() {
    let d = scratch("capacity-sigint");
    let src = repo().join("tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json"] {
        std::fs::copy(src.join(f), d.join(f)).unwrap();
    }
    // Slower requests (10 ms + 31 × 12 ms), so the interrupt lands mid-search.
    let text = std::fs::read_to_string(src.join("capacity.toml"))
        .unwrap()
        .replace("--gap-ms 8", "--gap-ms 12");
    assert!(text.contains("--gap-ms 12"));
    let plan = d.join("capacity.toml");
    std::fs::write(&plan, text).unwrap();
    let out = d.join("out");
    let mut child = std::process::Command::new(crate::common::sloscope_bin())
        .args([
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--candidates", "slots5", "--quiet"])
        .env("SLOSCOPE_SCRIPTED_SERVER", scripted_server())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let trials = || {
        std::fs::read_dir(out.join("runs"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().contains("--trial"))
                    .count()
            })
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while trials() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no two trials within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let cands = v["profiles"][0]["capacity"]["candidates"]
        .as_array()
        .unwrap();
    assert_eq!(cands.len(), 1, "only slots5 was searched: {cands:#?}");
    let c = &cands[0];
    assert_eq!(c["name"], "slots5");
    let used = c["trials"].as_array().unwrap().len();
    assert!(used >= 2, "{c:#}");
    assert_ne!(
        c["status"], "found",
        "an interrupted search is not complete: {c:#}"
    );
    for e in c["excluded"].as_array().unwrap() {
        assert!(
            e.as_str()
                .unwrap()
                .contains("partial trial: interrupted by Ctrl-C"),
            "{e}"
        );
    }
    assert_eq!(used + c["excluded"].as_array().unwrap().len(), trials());
}
