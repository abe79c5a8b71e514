//! Multi-turn sessions through a real collection against the test kit's scripted server (its
//! own process, logging every request it receives): each turn carries the conversation so far —
//! the earlier user messages and the server's own answers, in order — sent after the previous
//! answer and the think time; the run records session and turn; later turns hit the server's
//! prefix cache; the analysis gives TTFT by turn.

use crate::common::sloscope;
use crate::traffic::{balanced_run, run_logged_with, STREAM_GAP_MS};

/// Three-turn sessions, two at a time, 7 turns: sessions of 3, 3 and 1 turns.
const WORKLOAD: &str = r#"workload = { id = "chat", concurrency = 2, prompt_tokens = 6, max_output_tokens = 3, repeats = 1, requests_per_repeat = 7, sessions = { turns = { kind = "fixed", tokens = 3 }, think_time_ms = { kind = "fixed", tokens = 30 } } }"#;

fn words(line: &serde_json::Value) -> Vec<String> {
    line["prompt"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The log line of session `s`, turn `t` of repeat 0.
fn turn(log: &[serde_json::Value], s: u32, t: u32) -> Option<&serde_json::Value> {
    let id = format!("0-s{s}.{t}");
    log.iter().find(|l| l["request_id"] == id.as_str())
}

#[test]
fn each_turn_resends_the_conversation_and_the_run_records_session_and_turn() {
    let d = crate::common::scratch("sessions");
    let (out, log) = run_logged_with(&d, WORKLOAD, "--prefix-cache", STREAM_GAP_MS, 0);
    for s in 0..2 {
        for t in 2..=3 {
            let (before, now) = (turn(&log, s, t - 1).unwrap(), turn(&log, s, t).unwrap());
            let (b, n) = (words(before), words(now));
            // The previous turn's conversation, then the server's answer to it (the test kit's
            // first event names the request: `a<index>`), then the new user message.
            assert_eq!(n[..b.len()], b[..], "session {s} turn {t}");
            let answer = &n[b.len()..b.len() + 3];
            assert!(answer[0].starts_with('a'), "{answer:?}");
            assert_eq!(answer[1..], ["tok", "tok"], "{answer:?}");
            assert!(n.len() > b.len() + 3, "a new user message follows");
            let new = &n[b.len() + 3..];
            assert_ne!(
                new,
                &b[b.len() - new.len()..],
                "a different message each turn"
            );
            let gap = now["at_us"].as_u64().unwrap() - before["at_us"].as_u64().unwrap();
            assert!(gap >= 30_000, "sent {gap} µs after the previous turn");
        }
    }
    assert!(turn(&log, 2, 1).is_some() && turn(&log, 2, 2).is_none());
    let (_, run) = balanced_run(&out);
    let cols = &run["repeats"][0]["requests"];
    let col = |c: &str| -> Vec<u64> {
        cols[c]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (sessions, turns, prompts, cached) = (
        col("session"),
        col("turn"),
        col("prompt_tokens"),
        col("cached_prompt_tokens"),
    );
    assert_eq!(turns.len(), 7);
    let mut counts = [0; 3];
    for (i, (&s, &t)) in sessions.iter().zip(&turns).enumerate() {
        counts[s as usize] += 1;
        if t > 1 {
            // The conversation so far is cached: at least the previous turn's prompt.
            let prev = (0..i)
                .rev()
                .find(|&j| sessions[j] == s)
                .expect("an earlier turn");
            assert!(prompts[i] > prompts[prev]);
            assert!(cached[i] >= prompts[prev], "{cached:?} {prompts:?}");
        }
    }
    assert_eq!(counts, [3, 3, 1]);
    let a = sloscope(&["analyze", out.to_str().unwrap(), "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "balanced");
    let by_turn = p["candidates"][0]["summary"]["signals"]["by_turn"]
        .as_array()
        .unwrap_or_else(|| panic!("no TTFT by turn: {p:#}\n{}", crate::common::stderr(&a)));
    let n: Vec<u64> = by_turn
        .iter()
        .map(|t| t["ttft"]["count"].as_u64().unwrap())
        .collect();
    assert_eq!(n, [3, 2, 2]);
    assert_eq!(by_turn[0]["prefix_cache_hit_rate"], 0.0);
    assert!(by_turn[2]["prefix_cache_hit_rate"].as_f64().unwrap() > 0.5);
    let lines = v["view"]["profiles"].to_string();
    assert!(lines.contains("TTFT p95 by turn 1:"), "{lines}");
    assert!(
        lines.contains("sessions of 3 turns, think time 30 ms"),
        "{lines}"
    );
}

/// On the real llama-server (one slot, its prompt cache on by default): a session's later
/// turns are served from the cache as the server's `timings.cache_n` reports it — at least the
/// previous turn's prompt — and the analysis shows the hit rate rising by turn.
#[test]
#[ignore = "needs llama-server and the model: run through scripts/test.sh (it runs scripts/setup-llama.sh)"]
fn a_sessions_later_turns_hit_llama_servers_prompt_cache() {
    let _cores = crate::common::llama_cores(1);
    use crate::faults::{setup, wait_bounded, SERVER};
    let s = setup("sessions-llama", SERVER, "", "", 6);
    let plan = std::fs::read_to_string(&s.plan).unwrap();
    let short = r#"workload = { id = "short", concurrency = 1, prompt_tokens = 16, max_output_tokens = 8, repeats = 1, requests_per_repeat = 6 }"#;
    assert!(plan.contains(short), "the fixture plan changed");
    let chat = r#"workload = { id = "chat", concurrency = 1, prompt_tokens = 16, max_output_tokens = 8, repeats = 1, requests_per_repeat = 6, sessions = { turns = { kind = "fixed", tokens = 3 } } }"#;
    std::fs::write(&s.plan, plan.replace(short, chat)).unwrap();
    let mut child = s.spawn(&["--profiles", "latency", "--candidates", "np1"], &[]);
    let st = wait_bounded(
        &mut child,
        std::time::Duration::from_secs(240),
        "sloscope run",
    );
    assert_eq!(st.code(), Some(0), "{}", s.stderr());
    let run = s.run_file("latency", "np1");
    let cols = &run["repeats"][0]["requests"];
    let col = |c: &str| -> Vec<u64> {
        cols[c]
            .as_array()
            .unwrap_or_else(|| panic!("no {c} column: {cols}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (turns, prompts, cached) = (
        col("turn"),
        col("prompt_tokens"),
        col("cached_prompt_tokens"),
    );
    assert_eq!(turns, [1, 2, 3, 1, 2, 3]);
    for i in [1, 2, 4, 5] {
        assert!(prompts[i] > prompts[i - 1], "{prompts:?}");
        assert!(
            cached[i] >= prompts[i - 1],
            "turn {} cached {cached:?} of {prompts:?}",
            turns[i]
        );
    }
    let out = s.out.to_str().unwrap();
    let an = sloscope(&["analyze", out, "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&an.stdout).unwrap();
    let p = crate::common::profile(&v["profiles"], "latency");
    let by_turn = &p["candidates"][0]["summary"]["signals"]["by_turn"];
    let rate = |t: usize| by_turn[t]["prefix_cache_hit_rate"].as_f64().unwrap();
    assert!(rate(2) > rate(0) && rate(2) > 0.5, "{by_turn}");
}

/// A turn the server fails is left out of the conversation: the next turn carries the turns
/// before it and their answers, not the failed message, and the session goes on.
#[test]
fn a_failed_turn_is_left_out_and_the_session_goes_on() {
    let d = crate::common::scratch("sessions-fail");
    let one = WORKLOAD.replace("concurrency = 2", "concurrency = 1");
    // Arrival 1 is session 0's second turn (one session at a time, no warm-up).
    let (out, log) = run_logged_with(&d, &one, "--http500-at 1", STREAM_GAP_MS, 0);
    let (t1, t2, t3) = (
        words(turn(&log, 0, 1).unwrap()),
        words(turn(&log, 0, 2).unwrap()),
        words(turn(&log, 0, 3).unwrap()),
    );
    let kept = t1.len() + 3;
    assert_eq!(t3[..kept], t2[..kept], "turn 1 and its answer, in both");
    assert_ne!(t3[kept..], t2[kept..], "turn 2's message is not resent");
    assert_eq!(
        t3.len(),
        t2.len(),
        "turn 3 is turn 1, its answer and a new message"
    );
    let (_, run) = balanced_run(&out);
    let cols = &run["repeats"][0]["requests"];
    assert!(cols["error"][1].as_str().unwrap().contains("500"), "{cols}");
    assert_eq!(cols["turn"], serde_json::json!([1, 2, 3, 1, 2, 3, 1]));
}
