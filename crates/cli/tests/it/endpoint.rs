//! Credentials and endpoints against the real llama-server: the key reaches every endpoint and
//! no output, a wrong key and a dead endpoint are said out loud.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use crate::common::{files_under, repo, scratch, sloscope, stderr};
use std::time::Instant;

use crate::faults::{setup, wait_bounded, wait_for, Setup, SERVER};

/// A llama-server the test starts itself (the collector reaches it with `--endpoint`), healthy.
pub(crate) fn own_server(s: &Setup) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(s.dir.join("server.log")).unwrap();
    let server = Command::new(std::env::var("LLAMA_SERVER").unwrap())
        .args(["-m", &std::env::var("SLOSCOPE_Q4_GGUF").unwrap()])
        .args(["--parallel", "2", "-c", "2048", "-t", "1"])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--alias", &s.tag])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    wait_for(Duration::from_secs(60), "server healthy", || healthy(port));
    (server, format!("http://127.0.0.1:{port}"))
}

/// Whether `GET /health` answers 200 (llama-server answers 503 while it loads the model).
pub(crate) fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
    if c.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    c.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

fn all_output(s: &Setup) -> String {
    let mut all = s.stderr();
    for f in files_under(&s.out) {
        all.push_str(&String::from_utf8_lossy(&std::fs::read(f).unwrap()));
    }
    all
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn the_key_reaches_every_endpoint_and_no_output() {
    let _cores = crate::common::llama_cores(1);
    let key = "sk-sloscope-fault-3c9e7b21";
    let s = setup(
        "auth-right",
        &format!("{SERVER} --api-key {{api_key}}"),
        "request_timeout_s = 60",
        "",
        3,
    );
    let mut c = s.spawn(
        &[
            "--profiles",
            "latency",
            "--candidates",
            "np1",
            "--api-key-env",
            "SLOSCOPE_FAULT_KEY",
        ],
        &[("SLOSCOPE_FAULT_KEY", key)],
    );
    let st = wait_bounded(&mut c, Duration::from_secs(120), "collector");
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    assert!(
        run["notes"]
            .to_string()
            .contains("by the server's /tokenize"),
        "calibrated with the key: {}",
        run["notes"]
    );
    assert!(
        !run["repeats"][0]["server_metrics"]
            .as_array()
            .unwrap()
            .is_empty(),
        "/metrics scraped with the key"
    );
    assert!(run["server"]["command"]
        .to_string()
        .contains("--api-key\",\"***"));
    assert!(!all_output(&s).contains(key), "the key is in an output");
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh"]
fn a_wrong_key_is_said_out_loud_and_no_key_is_written() {
    let _cores = crate::common::llama_cores(1);
    let server_key = "sk-sloscope-server-91d0a4f2";
    let client_key = "sk-sloscope-client-5be81c07";
    let s = setup(
        "auth-wrong",
        &format!("{SERVER} --api-key {{server_key}}"),
        "request_timeout_s = 60",
        "secret_vars = [\"server_key\"]",
        10,
    );
    let plan = std::fs::read_to_string(&s.plan).unwrap().replace(
        "[vars]\n",
        "[vars]\nserver_key = \"$SLOSCOPE_FAULT_SERVER_KEY\"\n",
    );
    std::fs::write(&s.plan, plan).unwrap();
    let mut c = s.spawn(
        &[
            "--profiles",
            "latency",
            "--candidates",
            "np1",
            "--api-key-env",
            "SLOSCOPE_FAULT_KEY",
        ],
        &[
            ("SLOSCOPE_FAULT_KEY", client_key),
            ("SLOSCOPE_FAULT_SERVER_KEY", server_key),
        ],
    );
    let st = wait_bounded(&mut c, Duration::from_secs(120), "collector");
    let err = s.stderr();
    assert_eq!(st.code(), Some(3), "{err}");
    assert!(err.contains("rejected the credentials (HTTP 401"), "{err}");
    let run = s.run_file("latency", "np1");
    assert_ne!(run["status"], "ok");
    let all = all_output(&s);
    assert!(
        !all.contains(server_key) && !all.contains(client_key),
        "a key is in an output"
    );
    assert!(std::fs::read_to_string(s.out.join("plan.json"))
        .unwrap()
        .contains("\"server_key\": \"***\""));
}

/// A copy of the scripted fixture plan (no server needed for these two).
fn scripted_plan(name: &str) -> (PathBuf, PathBuf) {
    let d = scratch(name);
    let src = repo().join("tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json", "plan.toml"] {
        std::fs::copy(src.join(f), d.join(f)).unwrap();
    }
    (d.join("plan.toml"), d.join("out"))
}

#[test]
fn a_dead_endpoint_is_said_out_loud() {
    let (plan, out) = scripted_plan("dead-endpoint");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--endpoint",
            &format!("http://127.0.0.1:{port}"),
            "--candidates",
            "slots1",
            "--no-baseline",
            "--quiet",
        ],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        err.contains("latency / slots1: partial run: the endpoint stopped answering"),
        "{err}"
    );
    assert!(
        err.contains("balanced / slots1: not run: the endpoint stopped answering"),
        "{err}"
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/latency--slots1.json")).unwrap())
            .unwrap();
    assert_eq!(run["evidence_level"], "failed_backend_profile");
}

#[test]
fn one_endpoint_measures_one_configuration() {
    let (plan, out) = scripted_plan("one-endpoint");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--endpoint",
            "http://127.0.0.1:9",
        ];
        a.extend_from_slice(extra);
        sloscope(&a, &[])
    };
    let o = args(&[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("one running server is one configuration, but 2 would be measured there (slots1, slots4)"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is run or written");
}

/// The scripted plan with a `[space]` table appended.
fn plan_with_space(name: &str, space: &str) -> PathBuf {
    let (plan, _) = scripted_plan(name);
    let mut text = std::fs::read_to_string(&plan).unwrap();
    text.push_str(space);
    std::fs::write(&plan, text).unwrap();
    plan
}

/// A plan's search space is checked when the plan loads: its size against its budget is said
/// (and which profiles it serves); a space with problems is a bad plan whose message
/// names each field.
#[test]
fn a_plan_space_is_checked_and_sized_against_its_budget() {
    let good = plan_with_space(
        "space-good",
        "\n[space]\nprofiles = [\"latency\"]\nconstraints = [\"slots <= 8\"]\nbudget = { launches = 3, confirm_requests = 30 }\n[space.knobs]\nslots = { min = 1, max = 16, powers_of_two = true }\n",
    );
    let out = good.with_file_name("out");
    let o = sloscope(
        &[
            "run",
            "--plan",
            good.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dry-run",
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", "scripted-server")],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("space: 1 knob (slots 5), 4 of a 5-configuration grid allowed by the constraints; budget 3 launches per profile (75 % of the configurations)"),
        "{err}"
    );
    assert!(
        err.contains("the space is searched for latency; the listed candidates are run for the other profiles"),
        "{err}"
    );
    assert!(
        err.contains("configurations), 30 requests per confirmation launch"),
        "{err}"
    );
    // Rounded up to whole repeats of 4, the confirmation still cannot bound the p95 on which
    // the searched profile's verdict is drawn.
    assert!(
        err.contains("warning: latency: the confirmation launch's 32 requests (8 repeats), on which the searched profile's verdict is drawn, cannot decide the SLO ttft_p95_ms")
            && err.contains("plan space.budget.confirm_requests ≥ 59"),
        "{err}"
    );
    assert!(!out.exists(), "a dry run writes nothing");
    let bad = plan_with_space(
        "space-bad",
        "\n[space]\nprofiles = [\"nightly\"]\nconstraints = [\"batch <= slots\"]\nbudget = { confirm_requests = 0 }\n[space.knobs]\nslots = { min = 4, max = 2 }\nubatch = { values = [64, 128] }\n",
    );
    let o = sloscope(
        &[
            "run",
            "--plan",
            bad.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--dry-run",
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", "scripted-server")],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in [
        "space.knobs.slots.min: 4 is above max 2",
        "space.constraints[0]: \"batch <= slots\": \"batch\" is not a knob",
        "space.profiles[0]: no profile named \"nightly\" in the plan",
        "space.knobs.ubatch: target.server_command has no {ubatch} placeholder",
        "space.budget.confirm_requests: 0: expected at least 1",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

/// A capacity search on a profile the space serves would not be run per configuration (each
/// trial measures the fixed workload), so the plan is refused, naming the field; the same
/// capacity search on a profile the space does not serve is a valid plan (control).
#[test]
fn a_capacity_search_on_a_searched_profile_is_refused() {
    let space = "\n[space]\nprofiles = [\"latency\"]\nbudget = { launches = 3 }\n[space.knobs]\nslots = { values = [1, 2] }\n";
    let capacity = "search = { over = \"concurrency\", min = 1, max = 4 }\n";
    for (profile, code) in [("latency", 2), ("balanced", 0)] {
        let plan = plan_with_space(&format!("space-capacity-{profile}"), space);
        let text = std::fs::read_to_string(&plan).unwrap().replace(
            &format!("name = \"{profile}\"\n"),
            &format!("name = \"{profile}\"\n{capacity}"),
        );
        std::fs::write(&plan, text).unwrap();
        let out = plan.with_file_name("out");
        let o = sloscope(
            &[
                "run",
                "--plan",
                plan.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--dry-run",
            ],
            &[("SLOSCOPE_SCRIPTED_SERVER", "scripted-server")],
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{profile}: {err}");
        let said = err.contains("profiles[0].search: \"latency\" is searched over the space")
            && err.contains("a capacity search per configuration is not supported");
        assert_eq!(said, code == 2, "{profile}: {err}");
    }
}
