//! Other tools' real result files (tests/fixtures/peers) through the command line: `import`
//! into a plan's profile, `analyze` given them directly, and `run --command-template`.

use std::path::{Path, PathBuf};

use crate::common::{
    repo, scratch, scripted_server, sloscope, stderr, validate_runs_against_schema,
};

fn env() -> String {
    scripted_server().display().to_string()
}

fn peer(rel: &str) -> PathBuf {
    repo().join("tests/fixtures/peers").join(rel)
}

/// The scripted plan with its latency and balanced workloads set to the peers' (64 → 32 tokens,
/// 1 and 4 streams).
fn plan(dir: &Path) -> PathBuf {
    let src = repo().join("tests/fixtures/scripted");
    for f in ["gate.json", "baseline.json", "deployment.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(src.join("plan.toml"))
        .unwrap()
        .replace(
            "concurrency = 1, prompt_tokens = 16, max_output_tokens = 8, repeats = 2, requests_per_repeat = 4, warmup_requests = 1",
            "concurrency = 1, prompt_tokens = 64, max_output_tokens = 32, repeats = 1, requests_per_repeat = 12",
        )
        .replace(
            "concurrency = 4, prompt_tokens = 32, max_output_tokens = 16, repeats = 2, requests_per_repeat = 8",
            "concurrency = 4, prompt_tokens = 64, max_output_tokens = 32, repeats = 1, requests_per_repeat = 12",
        );
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn analyze_json(paths: &[&Path]) -> (i32, serde_json::Value, String) {
    let mut args = vec!["analyze", "--format", "json"];
    let owned: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    args.extend(owned.iter().map(String::as_str));
    let o = sloscope(&args, &[]);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), v, stderr(&o))
}

fn profile<'a>(a: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    a["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["profile"] == name)
        .unwrap_or_else(|| panic!("no {name} profile in {a}"))
}

#[test]
fn import_into_a_plan_checks_each_benchmarks_workload_and_gives_a_verdict() {
    let d = scratch("import-plan");
    let p = plan(&d);
    let out = d.join("out");
    let o = sloscope(
        &[
            "import",
            peer("guidellm/benchmarks.json").to_str().unwrap(),
            "--plan",
            p.to_str().unwrap(),
            "--profile",
            "balanced",
            "--candidate",
            "slots4",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", &env())],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("benchmark 0 ran another workload: concurrency 1 (the profile's is 4)"),
        "{err}"
    );
    assert_eq!(validate_runs_against_schema(&out), 1, "concurrent@4 only");
    // A single benchmark of another workload is written, and analyze excludes it with why.
    let o = sloscope(
        &[
            "import",
            peer("sglang/python-output-details.jsonl").to_str().unwrap(),
            "--plan",
            p.to_str().unwrap(),
            "--profile",
            "latency",
            "--candidate",
            "slots4",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", &env())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (code, a, err) = analyze_json(&[&out]);
    assert_eq!(code, 0, "{err}");
    let lat = profile(&a, "latency");
    let why = lat["excluded"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("SGLang ran another workload")
            && why.contains("concurrency 4 (the profile's is 1)"),
        "{why}"
    );
    let b = profile(&a, "balanced");
    assert!(
        b.get("summaries_only").is_none(),
        "a verdict with the plan: {b}"
    );
    assert!(
        b["excluded"].as_array().unwrap().is_empty(),
        "{}",
        b["excluded"]
    );
    assert_eq!(b["candidates"].as_array().unwrap().len(), 1);
    let c = &b["candidates"][0];
    assert_eq!(c["name"], "slots4");
    assert_eq!(c["source"], "recomputed");
    // The raw file beside its imports is one measurement, read once.
    let (code, a2, err) = analyze_json(&[&out, &peer("guidellm/benchmarks.json")]);
    assert_eq!(code, 0, "{err}");
    assert!(
        a2["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("already imported")),
        "{}",
        a2["notes"]
    );
    assert_eq!(profile(&a2, "balanced")["candidates"], b["candidates"]);
}

#[test]
fn analyze_reads_every_peer_file_directly_with_summaries_and_no_verdict() {
    for rel in [
        "vllm/save-detailed.json",
        "sglang/python-output-details.jsonl",
        "guidellm/benchmarks.json",
        "aiperf/profile_export.jsonl",
        "aiperf/profile_export_aiperf.csv",
        "guidellm/small-benchmarks.yaml",
        "guidellm/small-benchmarks.csv",
        "llmperf/smollm2-q4_64_32_individual_responses.json",
    ] {
        let (code, a, err) = analyze_json(&[&peer(rel)]);
        assert_eq!(code, 0, "{rel}: {err}");
        for p in a["profiles"].as_array().unwrap() {
            assert_eq!(p["summaries_only"], true, "{rel}");
            assert!(!p["candidates"].as_array().unwrap().is_empty(), "{rel}");
        }
        let text = sloscope(&["analyze", peer(rel).to_str().unwrap()], &[]);
        assert!(
            String::from_utf8_lossy(&text.stdout).contains("NO VERDICT"),
            "{rel}"
        );
    }
    // A tool's file cut short is refused with the file and where it broke.
    let d = scratch("import-cut");
    let bytes = std::fs::read(peer("guidellm/small-benchmarks.yaml")).unwrap();
    let cut = d.join("cut.yaml");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let (code, _, err) = analyze_json(&[&cut]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cut.yaml") && (err.contains("line ") || err.contains("truncated")),
        "{err}"
    );
}

#[test]
fn command_template_imports_any_format_and_sets_aside_what_it_cannot() {
    let d = scratch("import-template");
    let p = plan(&d);
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // balanced: SGLang's file; latency: a truncated copy written into the output directory.
    let sglang = peer("sglang/python-output-details.jsonl");
    let bytes = std::fs::read(&sglang).unwrap();
    std::fs::write(d.join("cut.jsonl"), &bytes[..bytes.len() / 2]).unwrap();
    let cmd = format!(
        "if [ {{profile}} = balanced ]; then cp {} {{out}}/peer.{{profile}}.jsonl; elif [ {{profile}} = latency ]; then cp {} {{out}}/peer.{{profile}}.jsonl; else false; fi",
        sglang.display(),
        d.join("cut.jsonl").display()
    );
    let o = sloscope(
        &[
            "run",
            "--plan",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--command-template",
            &cmd,
            "--result-template",
            "{out}/peer.{profile}.jsonl",
            "--import-candidate",
            "slots4",
            "--quiet",
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", &env())],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("latency: import failed") && err.contains("peer.latency.jsonl"),
        "the reason is on stderr: {err}"
    );
    assert!(out.join("peer.latency.rejected").exists(), "{err}");
    let bal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/balanced--slots4.json")).unwrap())
            .unwrap();
    assert_eq!(bal["import"]["tool"], "SGLang");
    assert_eq!(bal["import"]["file"], "peer.balanced.jsonl");
    assert_eq!(bal["import"]["workload"]["concurrency"], 4);
    assert_eq!(bal["repeats"][0]["send_times_unknown"], true);
    // Everything left in the directory is readable: analyze sees no bad input.
    let (code, a, err) = analyze_json(&[&out]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("bad input"), "{err}");
    assert_eq!(profile(&a, "balanced")["candidates"][0]["name"], "slots4");
}

#[test]
fn import_without_a_plan_writes_the_runs_analyze_would_make() {
    let d = scratch("import-noplan");
    let out = d.join("out");
    let files = [
        peer("aiperf/profile_export.jsonl"),
        peer("guidellm/small-benchmarks.json"),
    ];
    let o = sloscope(
        &[
            "import",
            files[0].to_str().unwrap(),
            files[1].to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        validate_runs_against_schema(&out),
        3,
        "1 AIPerf run + 2 GuideLLM benchmarks"
    );
    let (code, from_runs, err) = analyze_json(&[&out]);
    assert_eq!(code, 0, "{err}");
    let (_, direct, _) = analyze_json(&[&files[0], &files[1]]);
    let summaries = |a: &serde_json::Value| -> Vec<serde_json::Value> {
        a["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| {
                p["candidates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["summary"].clone())
            })
            .collect()
    };
    let (mut a, mut b) = (summaries(&from_runs), summaries(&direct));
    a.sort_by_key(|s| s.to_string());
    b.sort_by_key(|s| s.to_string());
    assert_eq!(a, b, "the written runs give the numbers the files give");
    // A file that is no tool's result is named, and the rest is still written.
    let junk = d.join("junk.json");
    std::fs::write(&junk, br#"{"hello": 1}"#).unwrap();
    let o = sloscope(
        &[
            "import",
            junk.to_str().unwrap(),
            files[0].to_str().unwrap(),
            "--out",
            d.join("out2").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("junk.json")
            && stderr(&o).contains("this is JSON with keys hello, not a result file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(validate_runs_against_schema(&d.join("out2")), 1);
}

#[test]
fn the_import_help_names_every_format_the_core_imports() {
    let o = sloscope(&["import", "--help"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
    for e in sloscope_core::input::FORMATS {
        assert_eq!(help.contains(e.name), e.imported, "{}: {help}", e.name);
    }
}

#[test]
fn a_plan_with_several_candidates_needs_the_candidate_said() {
    let d = scratch("import-which");
    std::fs::create_dir_all(&d).unwrap();
    let p = plan(&d);
    let file = peer("vllm/save-detailed.json");
    let o = sloscope(
        &[
            "import",
            file.to_str().unwrap(),
            "--plan",
            p.to_str().unwrap(),
            "--profile",
            "latency",
            "--out",
            d.join("out").to_str().unwrap(),
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", &env())],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the plan has 2 candidates (slots1, slots4)")
            && stderr(&o).contains("--candidate NAME"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("out").join("runs").exists(), "nothing written");
}

/// The page's assignment of a dropped file (core `input::assign`, from the run the file reads
/// as without a plan) makes the run `sloscope import --plan --profile --candidate` writes: the
/// same profile, workload, candidate, lineage and measurement, field by field.
#[test]
fn assigning_a_read_file_makes_the_run_import_writes() {
    use sloscope_core::input::{assign, standalone_runs};
    let d = scratch("import-assign");
    let p = plan(&d);
    let out = d.join("out");
    let file = peer("guidellm/benchmarks.json");
    let o = sloscope(
        &[
            "import",
            file.to_str().unwrap(),
            "--plan",
            p.to_str().unwrap(),
            "--profile",
            "balanced",
            "--candidate",
            "slots4",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("SLOSCOPE_SCRIPTED_SERVER", &env())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Vec<serde_json::Value> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap())
        .collect();
    let plan_doc: sloscope_core::schema::Plan =
        serde_json::from_slice(&std::fs::read(out.join("plan.json")).unwrap()).unwrap();
    let dep: sloscope_core::schema::Deployment =
        serde_json::from_slice(&std::fs::read(out.join("lineage/deployment.json")).unwrap())
            .unwrap();
    let name = file.display().to_string();
    let runs = standalone_runs(&name, &std::fs::read(&file).unwrap()).unwrap();
    let made = assign(&name, &runs, &plan_doc, Some(&dep), ("balanced", "slots4")).unwrap();
    assert_eq!(made.runs.len(), written.len(), "{:?}", made.skipped);
    assert_eq!(made.skipped.len(), runs.len() - written.len());
    assert!(
        made.skipped[0].contains("ran another workload: concurrency 1"),
        "{:?}",
        made.skipped
    );
    let mut ours = serde_json::to_value(&made.runs[0].1).unwrap();
    let mut theirs = written[0].clone();
    // Where the tool's version is written (the same build: equal), and nothing else, may differ.
    for v in [&mut ours, &mut theirs] {
        v.as_object_mut().unwrap().remove("tool");
    }
    let keys: std::collections::BTreeSet<&String> = ours
        .as_object()
        .unwrap()
        .keys()
        .chain(theirs.as_object().unwrap().keys())
        .collect();
    for k in keys {
        assert_eq!(ours.get(k), theirs.get(k), "field {k}");
    }
    // What the plan lacks is said.
    let e = assign(&name, &runs, &plan_doc, None, ("chatty", "slots4")).unwrap_err();
    assert!(
        e.contains("\"chatty\" is not a profile of the plan (its profiles: latency, balanced"),
        "{e}"
    );
    let e = assign(&name, &runs, &plan_doc, None, ("balanced", "slots9")).unwrap_err();
    assert!(
        e.contains("\"slots9\" is not a candidate of the plan"),
        "{e}"
    );
}

/// Every peer file as the page reads it, stated under the profile it is shown under (the page's
/// default): the plan `stated_plan` makes of it is one `sloscope import --plan` accepts (the
/// collector's plan check, stricter than the analysis' — it needs a request count), and the
/// run import writes under it is the page's assignment, field by field; a file that cannot
/// define a profile is refused naming it. Violation class: a stated plan the CLI refuses.
#[test]
fn a_plan_stated_in_the_page_for_any_peer_file_is_one_import_accepts() {
    use sloscope_core::input::{
        assign, standalone_runs, stated_plan, StatedPlace, StatedProfile, Statement,
    };
    let lineage = repo().join("tests/fixtures/scripted");
    let mut files = Vec::new();
    let mut walk = vec![repo().join("tests/fixtures/peers")];
    while let Some(d) = walk.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk.push(p);
            } else if p.extension().is_some_and(|x| x != "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut made, mut refused) = (0, 0);
    for (n, file) in files.iter().enumerate() {
        let name = file.display().to_string();
        let Ok(runs) = standalone_runs(&name, &std::fs::read(file).unwrap()) else {
            continue; // set aside (AIPerf's inputs, markers) or not a measurement
        };
        let Some(profile) = runs.first().map(|r| r.1.profile.clone()) else {
            continue;
        };
        let st = Statement {
            profiles: vec![StatedProfile {
                name: profile.clone(),
                primary_metric: "ttft_p95_ms".into(),
                slo: [("ttft_p95_ms".to_string(), 1e6)].into(),
            }],
            places: vec![StatedPlace {
                file: 0,
                profile: profile.clone(),
                candidate: "c".into(),
            }],
        };
        let plan = match stated_plan(&st, &[(name.as_str(), runs.as_slice())]) {
            Ok(p) => p,
            Err(e) => {
                assert!(e.starts_with(&name), "{e}");
                refused += 1;
                continue;
            }
        };
        let d = scratch(&format!("stated-{n}"));
        let mut json = serde_json::to_value(&plan).unwrap();
        json["target"] = serde_json::json!({ "endpoint": "http://127.0.0.1:9" });
        json["lineage"] = serde_json::json!({
            "gate": lineage.join("gate.json"),
            "baseline": lineage.join("baseline.json"),
            "deployment": lineage.join("deployment.json"),
        });
        let plan_file = d.join("plan.json");
        std::fs::write(&plan_file, serde_json::to_vec(&json).unwrap()).unwrap();
        let out = d.join("out");
        let o = sloscope(
            &[
                "import",
                &name,
                "--plan",
                plan_file.to_str().unwrap(),
                "--profile",
                &profile,
                "--candidate",
                "c",
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let dep: sloscope_core::schema::Deployment =
            serde_json::from_slice(&std::fs::read(lineage.join("deployment.json")).unwrap())
                .unwrap();
        let ours = assign(&name, &runs, &plan, Some(&dep), (&profile, "c")).unwrap();
        let written = std::fs::read_dir(out.join("runs")).unwrap().count();
        assert_eq!(ours.runs.len(), written, "{name}: {:?}", ours.skipped);
        made += 1;
    }
    // Most peer files define a profile; the summaries-only ones that state no lengths do not.
    assert!(made >= 10 && refused >= 1, "made {made}, refused {refused}");
}

/// Files the analysis reads as one measurement (llmperf's records and summary of one
/// invocation; an AIPerf artifact's three exports) are imported as one run, not one per file:
/// two runs of one candidate would be one measurement counted twice (or a conflict). Control: a
/// file alone is imported as before.
#[test]
fn import_writes_one_run_per_measurement_as_analyze_joins_them() {
    let d = scratch("import-joined");
    let p = plan(&d);
    let cases: [(&str, &[&str]); 3] = [
        (
            "llmperf",
            &[
                "llmperf/smollm2-q4_64_32_individual_responses.json",
                "llmperf/smollm2-q4_64_32_summary.json",
            ],
        ),
        (
            "aiperf",
            &[
                "aiperf/profile_export.jsonl",
                "aiperf/profile_export_aiperf.json",
                "aiperf/profile_export_aiperf.csv",
            ],
        ),
        ("alone", &["vllm/save-detailed.json"]),
    ];
    for (name, files) in cases {
        let out = d.join(name);
        let paths: Vec<String> = files
            .iter()
            .map(|f| peer(f).display().to_string())
            .collect();
        let mut args = vec!["import"];
        args.extend(paths.iter().map(String::as_str));
        args.extend([
            "--plan",
            p.to_str().unwrap(),
            "--profile",
            "balanced",
            "--candidate",
            "slots4",
            "--out",
            out.to_str().unwrap(),
        ]);
        let o = sloscope(&args, &[("SLOSCOPE_SCRIPTED_SERVER", &env())]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let written: Vec<_> = std::fs::read_dir(out.join("runs")).unwrap().collect();
        assert_eq!(written.len(), 1, "{name}: {}", stderr(&o));
        if files.len() > 1 {
            assert!(
                stderr(&o).contains("written once"),
                "{name}: {}",
                stderr(&o)
            );
        }
    }
}

/// SLOs stated on the command line (`import --profile --slo`, no plan) judge other tools'
/// files as the page's "state the SLOs" does: a plan of the profile with the files' own
/// workload, each file its own candidate named after it, the lineage records beside them, and
/// `analyze` then gives a verdict. Violations: each bad argument refused, naming it.
#[test]
fn slos_stated_on_the_command_line_judge_other_tools_files() {
    let d = scratch("import-slo");
    let lineage = repo().join("tests/fixtures/scripted");
    let file = peer("vllm/save-detailed.json");
    let out = d.join("out");
    let import = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "import",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        sloscope(&args, &[])
    };
    let lin = lineage.display().to_string();
    let o = import(
        &[
            "--profile",
            "balanced",
            "--slo",
            "ttft_p95_ms=100000",
            "--primary-metric",
            "ttft_p95_ms",
            "--lineage",
            &lin,
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("plan.json").exists() && out.join("lineage/deployment.json").exists());
    let (code, a, err) = analyze_json(&[&out]);
    assert_ne!(code, 2, "{err}");
    let p = profile(&a, "balanced");
    assert_eq!(p["candidates"][0]["name"], "save-detailed", "{p}");
    assert_ne!(p["decision"], "incomplete", "{}", p["reason"]);
    assert_eq!(a["profiles"].as_array().unwrap().len(), 1);
    // Refused, each naming what is wrong.
    let result = peer("vllm/save-result.json").display().to_string();
    for (args, want) in [
        (
            vec!["--profile", "balanced"],
            "--profile and --candidate need --plan, or --slo",
        ),
        (
            vec!["--profile", "balanced", "--slo", "ttft_p95_ms"],
            "expected METRIC=LIMIT",
        ),
        (
            vec!["--profile", "balanced", "--slo", "ttft_p95_ms=soon"],
            "\"soon\" is not a limit",
        ),
        (
            vec!["--profile", "balanced", "--slo", "speed_ms=5"],
            "speed_ms",
        ),
        (
            vec!["--profile", "fast", "--slo", "ttft_p95_ms=5"],
            "unsupported profile name \"fast\"",
        ),
        (
            vec![
                "--profile",
                "balanced",
                "--slo",
                "ttft_p95_ms=5",
                "--candidate",
                "a b",
            ],
            "candidate \"a b\"",
        ),
    ] {
        let o = import(&args, &d.join("refused"));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    // A file that states no lengths and records none cannot define the profile.
    let o = sloscope(
        &[
            "import",
            &result,
            "--out",
            d.join("r").to_str().unwrap(),
            "--profile",
            "latency",
            "--slo",
            "ttft_p95_ms=500",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("states no prompt length"),
        "{}",
        stderr(&o)
    );
}

/// An output that cannot be written is exit 4 (the output), naming the path — not 2, and not
/// an error without a path. Control: a writable output is 0.
#[test]
fn a_stated_import_that_cannot_write_says_where() {
    let d = scratch("import-slo-unwritable");
    let file = peer("vllm/save-detailed.json");
    // A file where the output directory should be: nothing can be created under it.
    let blocked = d.join("blocked");
    std::fs::write(&blocked, "not a directory").unwrap();
    let args = |out: &Path| {
        vec![
            "import".to_string(),
            file.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--profile".into(),
            "balanced".into(),
            "--slo".into(),
            "ttft_p95_ms=100000".into(),
        ]
    };
    let run = |out: &Path| {
        let a = args(out);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        sloscope(&refs, &[])
    };
    let o = run(&blocked.join("out"));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write") && stderr(&o).contains("blocked"),
        "{}",
        stderr(&o)
    );
    let o = run(&d.join("ok"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// From a hostile review of `import --slo`: a file given twice is read once (it hung, the join
/// taking it for its own copy); AIPerf's warm-up phase summary is set aside, never a candidate;
/// files given one candidate never overwrite each other's run; an output folder already holding
/// files is refused (another plan's runs, or an earlier import's, would be read with the new
/// plan). Controls: each file's own run written.
#[test]
fn a_stated_import_reads_each_measurement_once_and_writes_into_its_own_folder() {
    let d = scratch("import-slo-hostile");
    let vllm = peer("vllm/save-detailed.json").display().to_string();
    let llmperf = peer("llmperf/smollm2-q4_64_32_individual_responses.json")
        .display()
        .to_string();
    let run = |files: &[&str], extra: &[&str], out: &Path| {
        let mut args: Vec<&str> = vec!["import"];
        args.extend(files);
        let o = out.display().to_string();
        args.extend([
            "--profile",
            "balanced",
            "--slo",
            "ttft_p95_ms=8000",
            "--out",
            &o,
        ]);
        args.extend(extra);
        sloscope(&args, &[])
    };
    let runs = |out: &Path| std::fs::read_dir(out.join("runs")).map_or(0, |d| d.count());
    let twice = d.join("twice");
    let o = run(&[&vllm, &vllm], &[], &twice);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(runs(&twice), 1);
    assert!(
        stderr(&o).contains("given twice, read once"),
        "{}",
        stderr(&o)
    );
    let artifact: Vec<String> = [
        "profile_export.jsonl",
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
        "phases/profiling/profile_export_aiperf.json",
        "phases/warmup/profile_export_aiperf.json",
    ]
    .iter()
    .map(|f| {
        peer(&format!("aiperf-artifact/c2/{f}"))
            .display()
            .to_string()
    })
    .collect();
    let refs: Vec<&str> = artifact.iter().map(String::as_str).collect();
    let aiperf = d.join("aiperf");
    let o = run(&refs, &[], &aiperf);
    assert!(
        stderr(&o).contains("warmup phase summary"),
        "{}",
        stderr(&o)
    );
    assert_eq!(runs(&aiperf), 1, "{}", stderr(&o));
    let shared = d.join("shared");
    let o = run(&[&vllm, &llmperf], &["--candidate", "x"], &shared);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(runs(&shared), 2, "{}", stderr(&o));
    let o = run(&[&vllm], &[], &shared);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
}
