//! What servers report of their prefix cache, through a real collection against the test kit's
//! scripted server (its own process): a Mooncake trace's hash ids become shared blocks of
//! prompt words, the server's cache hits are recorded per request and summarised with TTFT by
//! hit and miss; a server whose counts cannot be is not believed, and its run stays readable.

use crate::common::{scratch, sloscope, stderr};
use crate::traffic::{balanced_run, run_logged_with, STREAM_GAP_MS};

/// Six requests in 4-token blocks: 1 is shared by four of them, 2 by three.
const TRACE: &str = r#"{"timestamp": 0, "input_length": 8, "output_length": 2, "hash_ids": [1, 2]}
{"timestamp": 100, "input_length": 8, "output_length": 2, "hash_ids": [1, 3]}
{"timestamp": 200, "input_length": 12, "output_length": 2, "hash_ids": [1, 2, 4]}
{"timestamp": 300, "input_length": 4, "output_length": 2, "hash_ids": [5]}
{"timestamp": 400, "input_length": 6, "output_length": 2, "hash_ids": [1, 2]}
{"timestamp": 500, "input_length": 8, "output_length": 2, "hash_ids": [2, 1]}
"#;

const WORKLOAD: &str = r#"workload = { id = "mixed", concurrency = 4, prompt_tokens = 8, max_output_tokens = 2, repeats = 1, trace = { file = "trace.jsonl", format = "mooncake", block_tokens = 4 } }"#;

fn words(line: &serde_json::Value) -> Vec<String> {
    line["prompt_head"]
        .as_str()
        .unwrap()
        .split(' ')
        .map(String::from)
        .collect()
}

#[test]
fn hash_id_blocks_are_shared_and_the_servers_cache_hits_are_summarised() {
    let d = scratch("signals-cache");
    std::fs::write(d.join("trace.jsonl"), TRACE).unwrap();
    let (out, log) = run_logged_with(&d, WORKLOAD, "--prefix-cache", STREAM_GAP_MS, 0);
    let m: Vec<Vec<String>> = log[log.len() - 6..].iter().map(words).collect();
    // The server saw block 1 as the same four words wherever it was named, block 2 too.
    assert_eq!(m[0][..4], m[1][..4]);
    assert_eq!(m[0][..4], m[2][..4]);
    assert_eq!(m[0][4..8], m[2][4..8]);
    assert_eq!(m[5][..4], m[0][4..8], "block 2 first, then block 1");
    assert_eq!(m[5][4..8], m[0][..4]);
    assert_ne!(m[1][4..8], m[0][4..8]);
    assert_ne!(m[3][..4], m[0][..4]);
    let (_, run) = balanced_run(&out);
    let cached = run["repeats"][0]["requests"]["cached_prompt_tokens"].clone();
    let cached: Vec<Option<u64>> = serde_json::from_value(cached).unwrap();
    assert_eq!(cached.len(), 6, "{cached:?}");
    assert_eq!(cached[0], Some(0), "nothing was cached before the first");
    assert!(cached[1..].iter().all(Option::is_some));
    assert!(
        cached[2].unwrap() >= 8,
        "blocks 1 and 2 were seen: {cached:?}"
    );
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "balanced");
    let s = &p["candidates"][0]["summary"]["signals"];
    assert_eq!(s["cache_reported_requests"], 6, "{s}");
    let rate = s["prefix_cache_hit_rate"].as_f64().unwrap();
    // Hits: [1, 3] (block 1), [1, 2, 4] (blocks 1 and 2), the 6-token [1, 2] (all but the
    // token a server always computes); 17 of 46 prompt tokens.
    assert_eq!(s["ttft_cache_hit"]["count"], 3, "{s}");
    assert_eq!(s["ttft_cache_miss"]["count"], 3, "{s}");
    assert!((rate - 17.0 / 46.0).abs() < 1e-12, "{rate}");
    let view = crate::common::profile(&v["view"]["profiles"], "balanced");
    let lines = view["signals"].to_string();
    assert!(lines.contains("prefix-cache hit rate"), "{lines}");
    assert!(
        lines.contains("speculative decoding: no draft tokens reported"),
        "{lines}"
    );
}

#[test]
fn a_server_that_claims_more_cached_tokens_than_the_prompt_has_is_not_believed() {
    let d = scratch("signals-lying-cache");
    std::fs::write(d.join("trace.jsonl"), TRACE).unwrap();
    // Every request fails, so the run is incomplete (exit 3), and kept.
    let (out, _) = run_logged_with(&d, WORKLOAD, "--lie-cache", STREAM_GAP_MS, 3);
    let (_, run) = balanced_run(&out);
    let errors = run["repeats"][0]["requests"]["error"].to_string();
    assert!(errors.contains("its counts are not believed"), "{errors}");
    assert!(run["repeats"][0]["requests"]["cached_prompt_tokens"].is_null());
    // The run file is still read (not refused): a failed run, left out with why.
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    assert_ne!(a.status.code(), Some(2), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "balanced");
    let excluded = p["excluded"].to_string();
    assert!(excluded.contains("failed_run"), "{excluded}");
}

/// Speculative decoding on the real llama-server: the shipped Q4_1 served with the Q4_0
/// quantization drafting for it (`--spec-type draft-simple`). The acceptance sloscope
/// records from the server's `timings` is the one the server's own log prints per request.
#[test]
#[ignore = "needs llama-server and the models: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn a_draft_models_acceptance_is_recorded_as_the_server_logs_it() {
    let _cores = crate::common::llama_cores(1);
    use crate::faults::{setup, wait_bounded};
    let server = "{llama_server} -m {model_path} -md {draft} --spec-type draft-simple --spec-draft-n-max 4 --parallel {parallel} -c 2048 -t 1 --host 127.0.0.1 --port {port} --metrics --no-webui --alias {tag}";
    let s = setup("signals-spec", server, "", "", 6);
    let plan = std::fs::read_to_string(&s.plan).unwrap().replace(
        "llama_server = \"$LLAMA_SERVER\"",
        "llama_server = \"$LLAMA_SERVER\"\ndraft = \"$SLOSCOPE_Q4_0_GGUF\"",
    );
    std::fs::write(&s.plan, plan).unwrap();
    let mut child = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    let st = wait_bounded(
        &mut child,
        std::time::Duration::from_secs(300),
        "sloscope run",
    );
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    let cols = &run["repeats"][0]["requests"];
    let sum = |c: &str| -> u64 {
        cols[c]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    let (drafted, accepted) = (sum("draft_tokens"), sum("draft_accepted_tokens"));
    assert!(drafted > 0 && accepted <= drafted, "{drafted} {accepted}");
    // The server's own log: "draft acceptance = 0.64000 (   16 accepted /    25 generated)".
    let log = std::fs::read_to_string(s.out.join("logs/server-np1.log")).unwrap();
    let (mut a, mut g) = (0u64, 0u64);
    for line in log.lines().filter(|l| l.contains("draft acceptance =")) {
        let nums: Vec<u64> = line
            .split(['(', '/', ')'])
            .filter_map(|p| p.split_whitespace().next()?.parse().ok())
            .collect();
        a += nums[0];
        g += nums[1];
    }
    assert_eq!((accepted, drafted), (a, g), "the server logged {a} / {g}");
    let out = s.out.to_str().unwrap();
    let an = crate::common::sloscope(&["analyze", out, "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&an.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "latency");
    let rate = p["candidates"][0]["summary"]["signals"]["draft_acceptance_rate"]
        .as_f64()
        .unwrap();
    assert!((rate - a as f64 / g as f64).abs() < 1e-12);
    let lines = v["view"]["profiles"][0]["signals"].to_string();
    assert!(lines.contains("draft tokens accepted"), "{lines}");
}
