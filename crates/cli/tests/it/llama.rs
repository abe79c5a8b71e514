//! End to end against the real llama.cpp `llama-server` on CPU (SmolLM2-135M Q4_1 and its F16
//! baseline). Needs `scripts/setup-llama.sh`; `scripts/test.sh` runs it, a plain `cargo test`
//! lists it as ignored.

use crate::common::{lineage_in, repo, scratch, sloscope, stderr, validate_runs_against_schema};

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn three_profiles_two_candidates_and_the_float_baseline_on_llama_server() {
    let _cores = crate::common::llama_cores(1);
    let out = run_the_llama_plan();
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["lineage"]["ready"], true, "{}", v["lineage"]);
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 3);
    for p in profiles {
        every_profile_compares_two_real_candidates(p);
    }
    // The balanced profile drew mixed lengths; the throughput profile replayed the trace, its
    // hash recorded and its lengths sent (llama-server's own prompt counts vary with them).
    for (name, part) in [("balanced", "prompt_length"), ("throughput", "trace")] {
        let p = profiles.iter().find(|p| p["profile"] == name).unwrap();
        assert!(p["workload"][part].is_object(), "{name}: {}", p["workload"]);
        let prompts = &p["candidates"][0]["summary"]["curves"]["prompt_tokens"];
        let (lo, hi) = (prompts[0].as_f64().unwrap(), prompts[100].as_f64().unwrap());
        assert!(
            hi > 1.5 * lo,
            "{name}: prompt tokens {lo}..{hi} should vary"
        );
    }
    // 8 streams against --parallel 1: llama-server defers requests, and /metrics shows it.
    let tp = profiles
        .iter()
        .find(|p| p["profile"] == "throughput")
        .unwrap();
    let np1 = tp["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "np1")
        .unwrap();
    assert!(
        np1["summary"]["queue_depth_max"].as_f64().unwrap() >= 1.0,
        "{}",
        np1["summary"]
    );
    assert_eq!(
        np1["summary"]["queue_depth_series"],
        "llamacpp:requests_deferred"
    );
    // llama-server reports its prompt cache per request: every successful request's use of it
    // is recorded (the rate may be small: sloscope's prompts differ per request), energy is
    // null on this CPU with the reason in the notes.
    for p in profiles {
        for c in p["candidates"].as_array().unwrap() {
            let s = &c["summary"];
            assert_eq!(
                s["signals"]["cache_reported_requests"], s["requests_ok"],
                "{s}"
            );
            assert!(s["signals"]["prefix_cache_hit_rate"].is_number(), "{s}");
            assert!(s["energy_per_output_token_j"].is_null());
        }
    }
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn capacity_search_on_llama_server_brackets_each_candidate() {
    let _cores = crate::common::llama_cores(1);
    assert!(
        std::env::var_os("LLAMA_SERVER").is_some(),
        "LLAMA_SERVER is not set: source the output of scripts/setup-llama.sh"
    );
    let d = scratch("llama-capacity");
    lineage_in(&d.join("lineage"), "Q4_1");
    let plan = d.join("capacity.toml");
    std::fs::copy(repo().join("tests/fixtures/llama/capacity.toml"), &plan).unwrap();
    let out = d.join("out");
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-baseline",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let cap = &v["profiles"][0]["capacity"];
    let cand = |name: &str| {
        let c = cap["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no capacity for {name}: {cap:#}"))
            .clone();
        assert!(c["real_evidence"].as_bool().unwrap(), "{c:#}");
        // Every trial at or below the capacity passed, every one above it failed.
        let lp = c["last_pass"].as_f64().unwrap_or(0.0);
        for t in c["trials"].as_array().unwrap() {
            let load = t["load"].as_f64().unwrap();
            assert_eq!(t["pass"].as_bool().unwrap(), load <= lp, "{name}: {t:#}");
        }
        c
    };
    // One slot: from 2 streams on every request waits whole service times, so the capacity is
    // found low, a bracket one stream wide. Whether one wait still fits the 600 ms TTFT SLO
    // depends on the machine's speed (1 on a busy 2-core machine, 2 on a quiet one): either is
    // a correct measurement on this project's machines.
    let np1 = cand("np1");
    assert_eq!(np1["status"], "found", "{np1:#}");
    let (lp, ff) = (np1["last_pass"].as_f64(), np1["first_fail"].as_f64());
    assert!(
        matches!((lp, ff), (Some(1.0), Some(2.0)) | (Some(2.0), Some(3.0))),
        "{np1:#}"
    );
    // Four slots: not asserted to sustain more. llama-server on one thread sometimes evaluates
    // concurrent prompts twenty times slower (its own log: ~800 ms for 31 tokens), which this
    // SLO sees; the search must still end with a consistent bracket.
    let np4 = cand("np4");
    assert!(
        ["found", "at_least_max"].contains(&np4["status"].as_str().unwrap()),
        "{np4:#}"
    );
}

/// Lineage records made from the models and the plan of `tests/fixtures/llama` in a scratch
/// directory: the plan's path.
pub(crate) fn llama_plan(name: &str) -> std::path::PathBuf {
    for var in [
        "LLAMA_SERVER",
        "SLOSCOPE_Q4_GGUF",
        "SLOSCOPE_F16_GGUF",
        "SLOSCOPE_PY",
    ] {
        assert!(
            std::env::var_os(var).is_some(),
            "{var} is not set: source the output of scripts/setup-llama.sh"
        );
    }
    let d = scratch(name);
    let lineage = d.join("lineage");
    lineage_in(&lineage, "Q4_1");
    let plan = d.join("plan.toml");
    let text = std::fs::read_to_string(repo().join("tests/fixtures/llama/plan.toml")).unwrap();
    std::fs::write(
        &plan,
        text.replace("../../../examples/llama-cpu/lineage/", "lineage/")
            .replace(
                "../../../examples/traces/",
                &format!("{}/", repo().join("examples/traces").display()),
            ),
    )
    .unwrap();
    plan
}

/// The plan of `tests/fixtures/llama` run against llama-server: the output directory.
fn run_the_llama_plan() -> std::path::PathBuf {
    let plan = llama_plan("llama");
    let d = plan.parent().unwrap();
    let out = d.join("out");
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(validate_runs_against_schema(&out), 9);
    out
}

/// Both candidates compared on real evidence, the float baseline beside them, no repeat
/// systematically faster than the first.
fn every_profile_compares_two_real_candidates(p: &serde_json::Value) {
    let d = p["decision"].as_str().unwrap();
    assert!(
        ["accept", "tune", "reject", "not_enough_data"].contains(&d),
        "{d}"
    );
    assert!(!p["reason"].as_str().unwrap().is_empty());
    assert_eq!(
        p["candidates"].as_array().unwrap().len(),
        2,
        "{}",
        p["profile"]
    );
    for c in p["candidates"].as_array().unwrap() {
        assert_eq!(c["evidence_level"], "real_backend_profile");
        assert!(c["summary"]["ttft"]["p95_ms"].as_f64().unwrap() > 0.0);
        assert!(
            c["summary"]["peak_rss_mb"].as_f64().unwrap() > 50.0,
            "server RSS sampled"
        );
    }
    assert!(p["baseline"]["rows"].is_array(), "float baseline compared");
    // Every repeat sends prompts no earlier request sent, so llama-server's prompt cache
    // cannot serve later repeats: no repeat is systematically faster than the first.
    for f in p["flags"].as_array().unwrap() {
        assert_ne!(f["code"], "later_repeats_faster", "{}", f["message"]);
    }
    // A cache would show as a later repeat much faster than the first; a later repeat slower
    // than the first is the machine (another test's inference on the other core), not a cache.
    for c in p["candidates"].as_array().unwrap() {
        let per: Vec<f64> = c["per_repeat"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["ttft"]["p50_ms"].as_f64().unwrap())
            .collect();
        let fastest_later = per[1..].iter().copied().fold(f64::MAX, f64::min);
        assert!(
            per[0] < 3.0 * fastest_later,
            "{} {}: per-repeat TTFT p50 {per:?}: a later repeat over threefold faster than the first",
            p["profile"],
            c["name"]
        );
    }
}

#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn compare_finds_a_serving_flag_that_made_the_real_server_worse() {
    // Both cores: its two sides' timings are compared, and another llama-server beside one
    // side but not the other (CI runs them in parallel) drifted its repeats past deciding.
    let _cores = crate::common::llama_cores(2);
    // Before: the np4 candidate served as planned; after: the same candidate, the same balanced
    // workload (4 streams), on a server whose micro-batch is one token (`-ub 1`) — a changed
    // serving flag beside the candidate's own setting. Every prompt is then read a token per
    // forward pass and every decoding step of the 4 streams takes 4 passes: on this host
    // TPOT and end-to-end about doubled (`--no-cont-batching` and `--threads-http 1` were tried
    // first: on a loaded 2-core host their effect was within the noise). Six repeats of 16
    // requests instead of two of 8, for an interval that shows it: at two repeats (of 24, and
    // once of 48) and at three of 32, CI runs with every other test beside it left every
    // interval too wide to decide, a median's interval widened by the repeats' drift with one
    // or two degrees of freedom; six give five a side.
    let d = scratch("llama-compare");
    let lineage = d.join("lineage");
    lineage_in(&lineage, "Q4_1");
    let text = std::fs::read_to_string(repo().join("tests/fixtures/llama/plan.toml"))
        .unwrap()
        .replace(
            "repeats = 2, requests_per_repeat = 8, prompt_length",
            "repeats = 6, requests_per_repeat = 16, prompt_length",
        )
        .replace("../../../examples/llama-cpu/lineage/", "lineage/")
        .replace(
            "../../../examples/traces/",
            &format!("{}/", repo().join("examples/traces").display()),
        );
    // A flag beside the candidate's own setting (a command that said another --parallel than
    // the candidate's would be left out as launch_mismatch; another setting is another cell).
    let collect = |name: &str, flags: &str| {
        let plan = d.join(format!("{name}.toml"));
        std::fs::write(&plan, text.replace("--metrics", flags)).unwrap();
        let out = d.join(name);
        let o = sloscope(
            &[
                "run",
                "--plan",
                plan.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--profiles",
                "balanced",
                "--candidates",
                "np4",
                "--no-baseline",
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    // A host busy with the rest of the suite can slow a whole side (once, -ub 1 measured only
    // 19 % slower than a before side at twice its quiet TPOT): compare then says
    // `inconclusive`, honestly, and the pair is collected once more. Any other answer than a
    // regression or inconclusive (no regression above all) fails at once.
    let mut attempt = 0;
    let o = loop {
        attempt += 1;
        let before = collect(&format!("before{attempt}"), "--metrics");
        let after = collect(&format!("after{attempt}"), "--metrics -ub 1");
        let o = sloscope(
            &[
                "compare",
                before.to_str().unwrap(),
                after.to_str().unwrap(),
                "--format",
                "json",
            ],
            &[],
        );
        let inconclusive = o.status.code() == Some(2)
            && String::from_utf8_lossy(&o.stdout).contains(r#""outcome": "inconclusive""#);
        if !(inconclusive && attempt < 2) {
            break o;
        }
        eprintln!("attempt {attempt}: inconclusive; collecting both sides again");
    };
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}\n{}",
        stderr(&o),
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "regression");
    let metrics = v["cells"][0]["metrics"].as_array().unwrap();
    let row = |name: &str| metrics.iter().find(|m| m["metric"] == name).unwrap();
    // Every latency moved the bad way. Which one a 95 % interval decides varies with the host:
    // on a quiet one TPOT and end-to-end about doubled, on one busy with other tests the two
    // repeats of a side can differ enough that a median's own interval, widened by that drift
    // with one degree of freedom, decides nothing, and TTFT's paired shift decided it. The
    // outcome above is the decided regression.
    for m in ["ttft_p50_ms", "tpot_p50_ms", "e2e_p50_ms"] {
        assert!(row(m)["difference"].as_f64().unwrap() > 0.0, "{}", row(m));
        assert!(
            row(m)["label"] != "improvement" && row(m)["label"] != "no_change",
            "{}",
            row(m)
        );
    }
    let head = stderr(&o);
    assert!(
        head.contains("balanced np4 ("),
        "the headline names the cell: {head}"
    );
    // The serving flag is named as what changed.
    let changed = v["changed"].to_string();
    assert!(changed.contains("-ub 1"), "{changed}");
}

/// The embedded default's searched plan (`examples/llama-cpu/search.toml`) against the real
/// llama-server, with a smaller budget to keep the test short: every trial a launch of the
/// server with its three knobs on its command line (checked against the run's labels by the
/// analysis), the pick confirmed on a fresh launch and the search recomputed by `analyze`.
#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn a_configuration_search_on_llama_server_confirms_its_pick() {
    let _cores = crate::common::llama_cores(1);
    let d = scratch("llama-search");
    lineage_in(&d.join("lineage"), "Q8_0");
    let plan = d.join("search.toml");
    let text = std::fs::read_to_string(repo().join("examples/llama-cpu/search.toml")).unwrap();
    let small = text
        .replace("launches = 8", "launches = 5")
        .replace("requests_per_repeat = 24", "requests_per_repeat = 12")
        .replace("max_output_tokens = 32", "max_output_tokens = 12")
        // Shorter answers, lower throughput: a floor every configuration clears, so the test
        // always has a pick to confirm (which configuration wins is the benchmark's question).
        .replace("throughput_tps = 50", "throughput_tps = 5");
    assert_ne!(
        small, text,
        "the plan's budget and workload are where the test expects"
    );
    std::fs::write(&plan, small).unwrap();
    let out = d.join("out");
    let o = sloscope(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(validate_runs_against_schema(&out) >= 5);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = &v["profiles"][0];
    let s = &p["search"];
    assert_eq!(s["status"], "complete", "{s:#}");
    assert_eq!(s["result"]["launches"], 5, "{s:#}");
    assert!(s["result"]["confirmed"].is_boolean(), "{s:#}");
    let trials = s["trials"].as_array().unwrap();
    for t in trials {
        // Each launch served its configuration: the command carried its knobs.
        // `analyze` was given an absolute directory: each trial's file is named absolute.
        let file = std::path::PathBuf::from(t["file"].as_str().unwrap());
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let cmd = run["server"]["command"].as_array().unwrap();
        let arg = |flag: &str| {
            let i = cmd.iter().position(|a| a == flag).unwrap();
            cmd[i + 1].as_str().unwrap().to_string()
        };
        assert_eq!(
            arg("--parallel"),
            t["config"]["parallel"].to_string(),
            "{t}"
        );
        assert_eq!(arg("-ub"), t["config"]["ubatch"].to_string(), "{t}");
        assert_eq!(
            arg("--cache-type-k"),
            t["config"]["cache_type_k"].as_str().unwrap(),
            "{t}"
        );
    }
    assert!(
        p["excluded"].as_array().unwrap().is_empty(),
        "{}",
        p["excluded"]
    );
    let chosen = s["result"]["chosen_name"].as_str();
    assert_eq!(p["recommended_name"].as_str(), chosen, "{}", p["reason"]);
}
