//! A run's drawn values against the ones its profile draws: output caps and think times. A run
//! that was sent other requests, or paced otherwise, than its profile says was measured under
//! another load than its label: left out of the verdict, the reason named.

use sloscope_core::analyse::report::Code;
use sloscope_core::analyze;
use sloscope_core::check::invariant::Invariant;

use crate::snapshots::example_files;
use crate::trust::{excluded_code, set_with};

/// The balanced profile draws each request's output cap from its seed (uniform 16–48): a run
/// whose caps are not that sequence (every cap raised to 48, the counts with them, which lowers
/// every time per token) sent other requests, or was edited. Left out; the example set's own
/// runs and capacity trials keep theirs.
#[test]
fn output_caps_other_than_the_drawn_ones_are_another_workload() {
    let clean = analyze(&example_files());
    let balanced = clean
        .profiles
        .iter()
        .find(|p| p.profile == "balanced")
        .unwrap();
    assert!(balanced.excluded.is_empty(), "{:?}", balanced.excluded);
    let files = set_with("balanced--np4.json", |v| {
        for rep in v["repeats"].as_array_mut().unwrap() {
            let n = rep["requests"]["output_tokens"].as_array().unwrap().len();
            rep["requests"]["output_tokens"] = serde_json::json!(vec![48; n]);
            rep["requests"]["max_output_tokens"] = serde_json::json!(vec![48; n]);
        }
    });
    let a = analyze(&files);
    assert_eq!(
        excluded_code(&a, "balanced", "balanced--np4.json"),
        Some(Code::Invariant(Invariant::WorkloadMatches))
    );
}

/// The latency profile's sessions think 100 ms between an answer and the next turn: a run
/// whose next turns went out a microsecond after each answer put a heavier load on the server
/// than its label. Left out; the example set's measured sessions keep theirs (each waited
/// at least 100 ms).
#[test]
fn turns_sent_sooner_than_the_think_time_are_another_workload() {
    let clean = analyze(&example_files());
    let latency = clean
        .profiles
        .iter()
        .find(|p| p.profile == "latency")
        .unwrap();
    assert!(latency.excluded.is_empty(), "{:?}", latency.excluded);
    // One session at a time (concurrency 1): each request sent 1 µs after the one before ended.
    let files = set_with("latency--np4.json", |v| {
        for rep in v["repeats"].as_array_mut().unwrap() {
            let q = &mut rep["requests"];
            let n = q["turn"].as_array().unwrap().len();
            for i in 1..n {
                let ended = q["send_offset_us"][i - 1].as_u64().unwrap()
                    + q["e2e_us"][i - 1].as_u64().unwrap();
                q["send_offset_us"][i] = (ended + 1).into();
            }
        }
    });
    let a = analyze(&files);
    assert_eq!(
        excluded_code(&a, "latency", "latency--np4.json"),
        Some(Code::Invariant(Invariant::WorkloadMatches))
    );
    let p = a.profiles.iter().find(|p| p.profile == "latency").unwrap();
    let why = &p.excluded[0].reason;
    assert!(why.contains("expected at least 100000 µs"), "{why}");
}
