//! Other tools' real result files (tests/fixtures/peers, made by running each tool against
//! llama-server): imported through the one read path, recomputed by sloscope, and compared with
//! the tool's own figures. Where the definitions agree the numbers must be equal within
//! rounding (0.01 ms, or 1e-6 relative); where they differ the difference is pinned with why.

use sloscope_core::analyse::report::CandidateReport;
use sloscope_core::base::metric::Metric;
use sloscope_core::{analyze, read_document, Document, LoadedFile};

pub(crate) fn fixture(rel: &str) -> (String, Vec<u8>) {
    let path = format!(
        "{}/../../tests/fixtures/peers/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (rel.to_string(), bytes)
}

/// Every candidate sloscope makes of the file, in file order.
fn candidates(rel: &str) -> Vec<CandidateReport> {
    let (name, bytes) = fixture(rel);
    candidates_of(&name, &bytes)
}

/// Every candidate sloscope makes of these bytes, named `name`, in file order.
fn candidates_of(name: &str, bytes: &[u8]) -> Vec<CandidateReport> {
    let (name, rel) = (name.to_string(), name);
    let doc = read_document(&name, bytes.to_vec()).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(doc, Document::Imported(_)), "{rel}: not imported");
    let a = analyze(&[LoadedFile { name, doc }]);
    let mut out: Vec<CandidateReport> = a
        .profiles
        .into_iter()
        .flat_map(|p| {
            assert!(p.summaries_only, "{}: a verdict without a plan", p.profile);
            assert!(p.excluded.is_empty(), "{:?}", p.excluded);
            p.candidates
        })
        .collect();
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

fn m(c: &CandidateReport, name: &str) -> Option<f64> {
    c.summary
        .as_ref()
        .and_then(|s| s.metric(Metric::parse(name).unwrap()))
}

fn reported(c: &CandidateReport, name: &str) -> f64 {
    c.reported
        .get(name)
        .copied()
        .flatten()
        .unwrap_or_else(|| panic!("{}: {name} not reported", c.name))
}

/// Recomputed equals reported within rounding, for each metric named.
fn agree(c: &CandidateReport, names: &[&str]) {
    for name in names {
        let r = reported(c, name);
        let got = m(c, name).unwrap_or_else(|| panic!("{}: {name} not recomputed", c.name));
        let tol = (1e-6 * r.abs()).max(0.01);
        assert!(
            (got - r).abs() <= tol,
            "{}: {name}: recomputed {got} vs reported {r}",
            c.name
        );
    }
}

fn counts(c: &CandidateReport) -> (u64, u64) {
    let s = c.summary.as_ref().unwrap();
    (s.requests_ok, s.requests_sent)
}

#[test]
fn vllm_detailed_arrays_reproduce_vllms_own_figures() {
    let c = &candidates("vllm/save-detailed.json")[0];
    agree(
        c,
        &[
            "ttft_mean_ms",
            "ttft_p50_ms",
            "ttft_p99_ms",
            "tpot_mean_ms",
            "tpot_p50_ms",
            "tpot_p99_ms",
            "itl_mean_ms",
            "itl_p50_ms",
            "itl_p99_ms",
        ],
    );
    assert!(
        !c.reported.contains_key("e2e_p50_ms"),
        "vLLM 0.33 writes no e2e summary"
    );
    assert_eq!(counts(c), (18, 20), "vLLM's 2 failed requests are kept");
    assert_eq!(reported(c, "requests_failed"), 2.0);
    // vLLM's duration includes the wait before the first send: its throughput is a little
    // lower than the one over sloscope's window (first send → last response).
    let (ours, theirs) = (
        m(c, "throughput_tps").unwrap(),
        reported(c, "throughput_tps"),
    );
    assert!(ours >= theirs && ours < theirs * 1.01, "{ours} vs {theirs}");
    assert!(c.disagreements.is_empty(), "{:?}", c.disagreements);
}

#[test]
fn vllm_without_details_is_carried_as_reported() {
    let c = &candidates("vllm/save-result.json")[0];
    assert!(c.summary.is_none());
    assert_eq!(
        c.metric(Metric::parse("ttft_p50_ms").unwrap()),
        Some(reported(c, "ttft_p50_ms"))
    );
    assert_eq!(
        c.metric(Metric::parse("e2e_p95_ms").unwrap()),
        None,
        "vLLM wrote no p95: unknown, not 0"
    );
}

#[test]
fn sglang_details_reproduce_sglangs_figures_python_and_rust_clients() {
    for rel in [
        "sglang/python-output-details.jsonl",
        "sglang/rust-output-details.jsonl",
    ] {
        let c = &candidates(rel)[0];
        agree(
            c,
            &[
                "ttft_mean_ms",
                "ttft_p50_ms",
                "ttft_p90_ms",
                "ttft_p95_ms",
                "ttft_p99_ms",
                "itl_mean_ms",
                "itl_p50_ms",
                "itl_p95_ms",
                "itl_p99_ms",
                // SGLang has no send times: throughput is over its own duration, so it agrees.
                "throughput_tps",
            ],
        );
        // e2e: recomputed to the last token (TTFT + Σ gaps); SGLang's runs to the end of the
        // stream, a fraction of a millisecond later, and so does its TPOT ((e2e − TTFT)/(out − 1),
        // out the requested length with llama-server: the same counts sloscope labels
        // `requested`).
        for name in ["e2e_p50_ms", "e2e_p99_ms", "tpot_mean_ms", "tpot_p50_ms"] {
            let (ours, theirs) = (m(c, name).unwrap(), reported(c, name));
            assert!(
                ours <= theirs + 0.01 && theirs - ours < 0.005 * theirs,
                "{rel} {name}: {ours} vs {theirs}"
            );
        }
        let sources = &c.summary.as_ref().unwrap().output_tokens_sources;
        assert_eq!(sources.keys().collect::<Vec<_>>(), ["requested"], "{rel}");
        assert!(c.disagreements.is_empty(), "{rel}: {:?}", c.disagreements);
    }
}

#[test]
fn sglang_appended_runs_are_each_a_run() {
    let cs = candidates("sglang/python-two-runs.jsonl");
    assert_eq!(cs.len(), 2);
    let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
    assert!(names.iter().any(|n| n.contains("c1 64→32")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("c2 64→32")), "{names:?}");
    for c in &cs {
        assert!(c.summary.is_none(), "no details: as reported");
        assert!(
            !c.reported.contains_key("failure_rate"),
            "SGLang writes no failed count"
        );
    }
}

#[test]
fn guidellm_benchmarks_are_recomputed_and_its_percentile_method_shows() {
    let cs = candidates("guidellm/benchmarks.json");
    assert_eq!(cs.len(), 2, "concurrent@1 and concurrent@4");
    for c in &cs {
        assert_eq!(counts(c), (12, 12));
        // Means do not depend on the percentile method: equal.
        agree(c, &["ttft_mean_ms", "e2e_mean_ms"]);
        // GuideLLM's percentiles are not linearly interpolated: with 12 requests its median
        // is the 7th value, so it can only be at or above the interpolated one.
        let (ours, theirs) = (m(c, "ttft_p50_ms").unwrap(), reported(c, "ttft_p50_ms"));
        assert!(theirs >= ours, "{ours} vs {theirs}");
        assert!(
            m(c, "itl_p95_ms").is_none(),
            "GuideLLM keeps no chunk gaps: unknown"
        );
        assert!(
            !c.reported.contains_key("tpot_p95_ms"),
            "its TPOT includes TTFT: not taken over"
        );
        // Every reported percentile is GuideLLM's own rule (the nearest rank) on the same
        // requests: no disagreement is said, though the interpolated figures differ.
        assert!(c.disagreements.is_empty(), "{:?}", c.disagreements);
    }
    // …and a figure that neither rule gives still is one.
    let (name, bytes) = fixture("guidellm/benchmarks.json");
    let text = String::from_utf8(bytes).unwrap();
    let p50 = reported(&cs[0], "ttft_p50_ms");
    let needle = format!("{p50}");
    assert!(text.contains(&needle), "{needle}");
    let doctored = text.replacen(&needle, &format!("{}", p50 * 1.5), 1);
    let cs = candidates_of(&name, doctored.as_bytes());
    assert!(
        cs.iter().any(|c| !c.disagreements.is_empty()),
        "a doctored median must disagree"
    );
    // With 4 requests a benchmark's p50 is the 2nd value, not the 3rd (GuideLLM adds weights
    // of 1/n in floating point: two of 0.25 reach 0.5 exactly, six of 1/12 fall just short).
    for c in candidates("guidellm/small-benchmarks.json") {
        assert!(
            c.disagreements.is_empty(),
            "{}: {:?}",
            c.name,
            c.disagreements
        );
    }
}

#[test]
fn aiperf_records_reproduce_its_summary() {
    let c = &candidates("aiperf/profile_export.jsonl")[0];
    let s = &candidates("aiperf/profile_export_aiperf.json")[0];
    for name in [
        "ttft_mean_ms",
        "ttft_p50_ms",
        "ttft_p90_ms",
        "ttft_p95_ms",
        "ttft_p99_ms",
        "e2e_p50_ms",
        "e2e_p99_ms",
        "itl_p50_ms",
        "itl_p99_ms",
    ] {
        let ours = m(c, name).unwrap();
        let theirs = reported(s, name);
        assert!(
            (ours - theirs).abs() <= (1e-6 * theirs).max(0.01),
            "{name}: {ours} vs {theirs}"
        );
    }
    // TPOT: AIPerf divides by its tokenizer's count of the text (31 or 34 tokens in 2 of the 20
    // requests), sloscope by the server's usage (32): equal where the counts agree, close on
    // the whole.
    for name in ["tpot_mean_ms", "tpot_p50_ms"] {
        let (ours, theirs) = (m(c, name).unwrap(), reported(s, name));
        assert!(
            (ours / theirs - 1.0).abs() < 0.005,
            "{name}: {ours} vs {theirs}"
        );
    }
    assert_eq!(
        c.summary
            .as_ref()
            .unwrap()
            .output_tokens_sources
            .keys()
            .collect::<Vec<_>>(),
        ["usage"]
    );
    assert_eq!(counts(c), (20, 20));
    // AIPerf's benchmark_duration runs from its start to the last response; sloscope's window
    // from the first send: within a few percent on this run.
    let (ours, theirs) = (
        m(c, "throughput_tps").unwrap(),
        reported(s, "throughput_tps"),
    );
    assert!((ours / theirs - 1.0).abs() < 0.05, "{ours} vs {theirs}");
}

#[test]
fn llmperf_individual_responses_reproduce_its_summary() {
    let c = &candidates("llmperf/smollm2-q4_64_32_individual_responses.json")[0];
    let s = &candidates("llmperf/smollm2-q4_64_32_summary.json")[0];
    for name in [
        "ttft_mean_ms",
        "ttft_p50_ms",
        "ttft_p90_ms",
        "ttft_p95_ms",
        "ttft_p99_ms",
        "e2e_mean_ms",
        "e2e_p50_ms",
        "e2e_p99_ms",
    ] {
        let (ours, theirs) = (m(c, name).unwrap(), reported(s, name));
        assert!(
            (ours - theirs).abs() <= (1e-6 * theirs).max(0.01),
            "{name}: {ours} vs {theirs}"
        );
    }
    assert_eq!(counts(c), (12, 12));
    assert_eq!(
        m(c, "throughput_tps"),
        None,
        "no send times, no duration: unknown, not made up"
    );
    assert!(reported(s, "throughput_tps") > 0.0);
}

#[test]
fn aiperf_csv_summary_equals_its_json_summary() {
    let csv = &candidates("aiperf/profile_export_aiperf.csv")[0];
    let json = &candidates("aiperf/profile_export_aiperf.json")[0];
    for name in [
        "ttft_p50_ms",
        "ttft_p99_ms",
        "e2e_p95_ms",
        "tpot_p50_ms",
        "throughput_tps",
    ] {
        let (a, b) = (reported(csv, name), reported(json, name));
        // The CSV rounds to 2 decimals.
        assert!((a - b).abs() <= 0.006, "{name}: csv {a} vs json {b}");
    }
}

#[test]
fn workloads_are_taken_from_the_tools_own_description() {
    let (name, bytes) = fixture("guidellm/benchmarks.json");
    let Document::Imported(runs) = read_document(&name, bytes).unwrap() else {
        panic!()
    };
    let w: Vec<_> = runs
        .iter()
        .map(|(_, r)| r.import.as_ref().unwrap().workload.clone())
        .collect();
    assert_eq!(w[0].concurrency, Some(1));
    assert_eq!(w[1].concurrency, Some(4));
    assert_eq!(
        (w[0].prompt_tokens, w[0].max_output_tokens),
        (Some(64), Some(32))
    );
    let imp = runs[0].1.import.as_ref().unwrap();
    assert_eq!(imp.tool_version.as_deref(), Some("0.8.1"));
    assert_eq!(imp.tool, "GuideLLM");
    assert_eq!(
        runs[0].1.tool.name, "sloscope",
        "the run file is sloscope's; the tool is in import"
    );
    assert_eq!(imp.sha256.len(), 64);
    assert_eq!(runs[0].1.profile, "latency");
    assert_eq!(runs[1].1.profile, "balanced");
}

#[test]
fn guidellm_yaml_is_its_json_and_its_csv_holds_the_same_summaries() {
    let json = candidates("guidellm/small-benchmarks.json");
    let yaml = candidates("guidellm/small-benchmarks.yaml");
    let csv = candidates("guidellm/small-benchmarks.csv");
    assert_eq!((json.len(), yaml.len(), csv.len()), (2, 2, 2));
    for ((j, y), c) in json.iter().zip(&yaml).zip(&csv) {
        // The same requests; GuideLLM's YAML writer rounds epoch seconds a little differently
        // from its JSON writer (1 µs here and there).
        for name in [
            "ttft_p50_ms",
            "ttft_p99_ms",
            "e2e_mean_ms",
            "e2e_p99_ms",
            "tpot_p95_ms",
            "throughput_tps",
        ] {
            let (a, b) = (m(y, name).unwrap(), m(j, name).unwrap());
            assert!((a - b).abs() < 0.002, "{name}: yaml {a} vs json {b}");
        }
        assert_eq!(counts(j), counts(y));
        assert_eq!(
            j.reported.keys().collect::<Vec<_>>(),
            y.reported.keys().collect::<Vec<_>>()
        );
        for (k, v) in &j.reported {
            let (a, b) = (v.unwrap(), reported(y, k));
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{k}: json {a} vs yaml {b}"
            );
        }
        assert!(
            c.summary.is_none(),
            "the CSV keeps no requests: as reported"
        );
        for name in [
            "ttft_mean_ms",
            "ttft_p50_ms",
            "ttft_p95_ms",
            "e2e_mean_ms",
            "e2e_p99_ms",
        ] {
            let (a, b) = (reported(c, name), reported(j, name));
            assert!(
                (a - b).abs() <= 1e-6 * b.abs(),
                "{name}: csv {a} vs json {b}"
            );
        }
        let wc = &c.name;
        assert!(
            wc.contains(if j.name.contains("c1") { "c1" } else { "c2" }),
            "{wc}"
        );
    }
}

/// Dropped beside a plan's own files, another tool's file read directly keeps the lineage
/// intact (it belongs to no deployment) and is left out of the comparison with the reason.
#[test]
fn a_peer_file_beside_a_plans_results_is_left_out_not_breaking_lineage() {
    let dir = format!("{}/../../static/examples", env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let name = p.display().to_string();
                let doc = read_document(&name, std::fs::read(&p).unwrap()).unwrap();
                files.push(LoadedFile { name, doc });
            }
        }
    }
    let before = analyze(&files);
    let (name, bytes) = fixture("sglang/python-output-details.jsonl");
    let doc = read_document(&name, bytes).unwrap();
    files.push(LoadedFile { name, doc });
    let after = analyze(&files);
    assert!(after.lineage.ready, "{:?}", after.lineage.issues);
    let balanced = |a: &sloscope_core::Analysis| {
        a.profiles
            .iter()
            .find(|p| p.profile == "balanced")
            .cloned()
            .unwrap()
    };
    let (b0, b1) = (balanced(&before), balanced(&after));
    assert_eq!(b0.decision, b1.decision);
    assert_eq!(b0.recommended_name, b1.recommended_name);
    assert_eq!(b1.excluded.len(), b0.excluded.len() + 1);
    assert!(b1
        .excluded
        .iter()
        .any(|e| e.file.ends_with("python-output-details.jsonl")));
}

/// SGLang's own line, edited to contradict its details: `completed` against the records is
/// refused (`stated_counts_match`), and so is a `duration` its stated rates do not fit; one with
/// rates to match, too short for its requests at its stated concurrency, leaves the run out
/// (`window_too_short`), though each request alone fits in it.
#[test]
fn an_sglang_line_that_contradicts_its_details_is_refused_or_left_out() {
    let (name, bytes) = fixture("sglang/python-output-details.jsonl");
    let text = String::from_utf8(bytes).unwrap();
    // Python's JSON (`Infinity`): edited as text, read as serde would not.
    let readable: serde_json::Value =
        serde_json::from_str(&text.replace("Infinity", "null")).unwrap();
    let field = |k: &str| format!("\"{k}\": {}", readable[k]);
    let fewer = text.replace(&field("completed"), "\"completed\": 5");
    assert_ne!(fewer, text);
    let e = read_document(&name, fewer.into_bytes()).expect_err("completed 5 of 20 records");
    assert!(e.to_string().contains("[stated_counts_match]"), "{e}");
    let longest = readable["ttfts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(readable["itls"].as_array().unwrap())
        .map(|(t, g)| {
            let gaps: f64 = g
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|x| x.as_f64())
                .sum();
            t.as_f64().unwrap_or(0.0) + gaps
        })
        .fold(0.0, f64::max);
    // Longer than any one request, far shorter than twenty of them four at a time.
    let d = readable["duration"].as_f64().unwrap();
    let short = text.replace(
        &field("duration"),
        &format!("\"duration\": {}", longest * 1.05),
    );
    assert_ne!(short, text);
    // The rates over that duration alone are the file's own totals contradicted.
    let e = read_document(&name, short.clone().into_bytes()).expect_err("rates past totals");
    assert!(e.to_string().contains("its own totals give"), "{e}");
    // Its rates made to agree with it: the window is what gives it away.
    let mut short = short;
    for k in ["output_throughput", "request_throughput"] {
        let rate = readable[k].as_f64().unwrap() * d / (longest * 1.05);
        short = short.replace(&field(k), &format!("\"{k}\": {rate}"));
    }
    let doc = read_document(&name, short.into_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let a = analyze(&[LoadedFile { name, doc }]);
    let why = &a.profiles[0].excluded;
    assert!(
        why.iter()
            .any(|e| e.reason.contains("at the stated concurrency")),
        "{why:?}"
    );
}

/// The tool's statement of its workload is shown whole: a reviewer checks the run against the
/// profile on it (concurrency, request count, lengths), so it is never cut mid-JSON.
#[test]
fn the_tools_stated_workload_is_shown_whole() {
    for (rel, tail) in [
        (
            "aiperf/profile_export_aiperf.json",
            "\"type\":\"synthetic\"}",
        ),
        (
            "guidellm/benchmarks.json",
            "\"type_\":\"concurrent\",\"worker_count\":",
        ),
    ] {
        let c = &candidates(rel)[0];
        let said = c
            .notes
            .iter()
            .find(|n| n.contains("the tool's workload: "))
            .unwrap_or_else(|| panic!("{rel}: {:?}", c.notes));
        let workload = said.split("the tool's workload: ").nth(1).unwrap();
        assert!(
            workload.contains(tail) && !workload.contains('…'),
            "{rel}: {said}"
        );
    }
}

/// Two files of one tool and workload (SGLang's Python and Rust clients) are two measurements:
/// the names made for them carry their files, rather than one name that reads as reruns and
/// leaves both out. Control: one file alone keeps the made name.
#[test]
fn made_names_never_merge_two_files() {
    let files: Vec<LoadedFile> = [
        "sglang/python-output-details.jsonl",
        "sglang/rust-output-details.jsonl",
    ]
    .iter()
    .map(|rel| {
        let (name, bytes) = fixture(rel);
        LoadedFile {
            doc: read_document(&name, bytes).unwrap(),
            name,
        }
    })
    .collect();
    let a = analyze(&files);
    let names: Vec<&str> = a
        .profiles
        .iter()
        .flat_map(|p| p.candidates.iter().map(|c| c.name.as_str()))
        .filter(|n| n.starts_with("SGLang c4"))
        .collect();
    assert_eq!(
        names,
        [
            "SGLang c4 64→32 (python-output-details.jsonl)",
            "SGLang c4 64→32 (rust-output-details.jsonl)"
        ]
    );
    assert!(a.profiles.iter().all(|p| p.excluded.is_empty()));
    let one = candidates("sglang/rust-output-details.jsonl");
    assert_eq!(one[0].name, "SGLang c4 64→32");
}

/// Two files of one base name in two folders are told apart by their folder.
#[test]
fn made_names_tell_two_folders_apart() {
    let (_, bytes) = fixture("sglang/python-output-details.jsonl");
    let (_, other) = fixture("sglang/rust-output-details.jsonl");
    let files: Vec<LoadedFile> = [("c/out.jsonl", bytes), ("d/out.jsonl", other)]
        .into_iter()
        .map(|(n, b)| LoadedFile {
            doc: read_document(n, b).unwrap(),
            name: n.into(),
        })
        .collect();
    let a = analyze(&files);
    let mut names: Vec<&str> = a
        .profiles
        .iter()
        .flat_map(|p| p.candidates.iter().map(|c| c.name.as_str()))
        .filter(|n| n.starts_with("SGLang c4"))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "SGLang c4 64→32 (c/out.jsonl)",
            "SGLang c4 64→32 (d/out.jsonl)"
        ]
    );
}

/// llmperf writes one invocation as two files (the requests, and the summary that states the
/// workload and the figures): read together they are one run — the requests recomputed, the
/// summary's workload and figures kept — not two candidates, one of which asks for the file
/// beside it. Control: a summary of another prefix stays its own run.
#[test]
fn llmperfs_two_files_of_one_invocation_are_one_run() {
    let read = |names: [&str; 2]| -> Vec<CandidateReport> {
        let files: Vec<LoadedFile> = [
            (
                "llmperf/smollm2-q4_64_32_individual_responses.json",
                names[0],
            ),
            ("llmperf/smollm2-q4_64_32_summary.json", names[1]),
        ]
        .into_iter()
        .map(|(rel, name)| {
            let (_, bytes) = fixture(rel);
            LoadedFile {
                doc: read_document(name, bytes).unwrap(),
                name: name.into(),
            }
        })
        .collect();
        analyze(&files)
            .profiles
            .into_iter()
            .flat_map(|p| p.candidates)
            .collect()
    };
    let one = read(["d/x_individual_responses.json", "d/x_summary.json"]);
    assert_eq!(
        one.len(),
        1,
        "{:?}",
        one.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    let c = &one[0];
    assert_eq!(counts(c), (12, 12));
    assert!(
        c.reported
            .get("throughput_tps")
            .copied()
            .flatten()
            .is_some(),
        "the summary's figures kept: {:?}",
        c.reported
    );
    assert!(
        c.notes.iter().any(|n| n.contains("one llmperf run")),
        "{:?}",
        c.notes
    );
    assert!(
        c.notes.iter().any(|n| n.contains("closed loop, 2 streams")),
        "the summary's workload: {:?}",
        c.notes
    );
    let two = read(["d/x_individual_responses.json", "d/y_summary.json"]);
    assert_eq!(two.len(), 2);
}

/// Another tool's records are held to the input length it states it asked for, as
/// sloscope's own runs are to their workload's: GuideLLM's prompts of 64 tokens asked, 94 by
/// the server's count (the chat template), pass; the same file with every prompt counted at 400
/// tokens is another workload than it states, and is left out with the prompt-length check.
#[test]
fn a_tools_records_are_held_to_the_input_length_it_states() {
    let (name, bytes) = fixture("guidellm/benchmarks.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        for r in b["requests"]["successful"].as_array_mut().unwrap() {
            r["prompt_tokens"] = 400.into();
        }
    }
    let edited = serde_json::to_vec(&doc).unwrap();
    let excluded = |bytes: Vec<u8>| {
        let doc = read_document(&name, bytes).unwrap_or_else(|e| panic!("{e}"));
        let a = analyze(&[LoadedFile {
            name: name.clone(),
            doc,
        }]);
        a.profiles
            .iter()
            .flat_map(|p| p.excluded.iter())
            .map(|e| format!("{:?} {}", e.code, e.reason))
            .collect::<Vec<_>>()
    };
    let out = excluded(edited);
    assert!(
        !out.is_empty()
            && out
                .iter()
                .all(|e| e.contains("PromptsMatchWorkload") && e.contains("asks 64")),
        "{out:?}"
    );
    assert_eq!(
        excluded(bytes.clone()),
        Vec::<String>::new(),
        "the file as GuideLLM wrote it"
    );
    // A shared prefix of 512 tokens before each 64-token prompt: the server counts both, and
    // so does the length GuideLLM is held to.
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    doc["config"]["spec"]["data"][0]["prefix_buckets"] =
        serde_json::json!([{"prefix_tokens": 512, "bucket_weight": 100, "prefix_count": 1}]);
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        for r in b["requests"]["successful"].as_array_mut().unwrap() {
            let p = r["prompt_tokens"].as_u64().unwrap();
            r["prompt_tokens"] = (p + 512).into();
        }
    }
    assert_eq!(
        excluded(serde_json::to_vec(&doc).unwrap()),
        Vec::<String>::new(),
        "a shared prefix"
    );
}
