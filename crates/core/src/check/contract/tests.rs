use super::*;

fn spec() -> ProfileSpec {
    serde_json::from_str(
        r#"{"name":"latency","workload":{"id":"short-chat","concurrency":1,"prompt_tokens":64,
        "max_output_tokens":64,"repeats":3},"primary_metric":"ttft_p95_ms",
        "slo":{"ttft_p95_ms":500,"failure_rate":0.0}}"#,
    )
    .unwrap()
}

#[test]
fn accepts_a_complete_profile() {
    let p = validate_profile(&spec()).unwrap();
    assert_eq!(p.name, ProfileName::Latency);
    assert_eq!(p.slo.len(), 2);
}

#[test]
fn traffic_shapes_are_checked_field_by_field() {
    use crate::base::traffic::{Arrival, LengthDist};
    let mut s = spec();
    let w = s.workload.as_mut().unwrap();
    w.prompt_length = Some(LengthDist::Uniform { min: 300, max: 20 });
    w.output_length = Some(LengthDist::Empirical { values: vec![] });
    w.arrival = Some(Arrival::Gamma { burstiness: 0.5 });
    let issues = validate_profile(&s).unwrap_err();
    let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "workload.prompt_length: min 300 and max 20: expected 1 ≤ min ≤ max",
            "workload.output_length: values is empty: expected observed lengths",
            "workload.arrival is set but workload.request_rate_rps is not: arrivals need a rate (without one the load is closed-loop)",
        ]
    );
    let w = s.workload.as_mut().unwrap();
    w.prompt_length = Some(LengthDist::Uniform { min: 20, max: 300 });
    w.output_length = Some(LengthDist::Fixed { tokens: 64 });
    w.request_rate_rps = Some(4.0);
    assert!(validate_profile(&s).is_ok());
}

#[test]
fn datasets_traces_and_prefixes_are_checked_and_exclude_what_they_replace() {
    use crate::schema::replay::{Dataset, DatasetFormat, SharedPrefix, Trace, TraceFormat};
    let mut s = spec();
    let w = s.workload.as_mut().unwrap();
    w.trace = Some(Trace {
        file: "t.jsonl".into(),
        format: TraceFormat::Mooncake,
        time_scale: Some(-2.0),
        sha256: None,
        block_tokens: None,
    });
    w.request_rate_rps = Some(3.0);
    w.dataset = Some(Dataset {
        file: " ".into(),
        format: DatasetFormat::Jsonl,
        sha256: None,
    });
    w.shared_prefix = Some(SharedPrefix {
        groups: 0,
        tokens: 8,
    });
    let issues = validate_profile(&s).unwrap_err();
    let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "workload.dataset: file is empty: expected a path relative to the plan",
            "workload.trace: time_scale -2: expected a positive factor",
            "workload.shared_prefix: groups is 0: expected 1 or more prefix groups",
            "workload.request_rate_rps is set with workload.trace: a trace sets the send times and both lengths; remove one",
            "workload.dataset is set with workload.trace: a trace sets the send times and both lengths; remove one",
            "workload.shared_prefix is set with workload.dataset: a dataset sets the prompts; remove one",
        ]
    );
    let w = s.workload.as_mut().unwrap();
    w.request_rate_rps = None;
    w.dataset = None;
    w.trace.as_mut().unwrap().time_scale = Some(0.5);
    w.shared_prefix = Some(SharedPrefix {
        groups: 4,
        tokens: 64,
    });
    assert!(validate_profile(&s).is_ok());
}

#[test]
fn sessions_need_turns_and_a_closed_loop() {
    use crate::base::traffic::LengthDist;
    use crate::schema::replay::{Dataset, DatasetFormat, Sessions};
    let mut s = spec();
    let w = s.workload.as_mut().unwrap();
    w.sessions = Some(Sessions {
        turns: None,
        think_time_ms: Some(LengthDist::Uniform { min: 0, max: 10 }),
    });
    w.request_rate_rps = Some(2.0);
    let issues = validate_profile(&s).unwrap_err();
    let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "workload.sessions: turns is missing: expected a distribution of turns per session (or a dataset of conversations)",
            "workload.request_rate_rps is set with workload.sessions: sessions send each turn when the previous answer has ended (a closed loop of sessions); remove one",
        ]
    );
    let w = s.workload.as_mut().unwrap();
    w.request_rate_rps = None;
    w.dataset = Some(Dataset {
        file: "chats.json".into(),
        format: DatasetFormat::Sharegpt,
        sha256: None,
    });
    let issues = validate_profile(&s).unwrap_err();
    assert_eq!(
        issues[0].message,
        "workload.sessions: think_time_ms: min 0 and max 10: expected 1 ≤ min ≤ max"
    );
    s.workload.as_mut().unwrap().sessions = Some(Sessions {
        turns: Some(LengthDist::Fixed { tokens: 4 }),
        think_time_ms: None,
    });
    assert!(validate_profile(&s).is_ok());
}

#[test]
fn lists_every_problem() {
    let mut s = spec();
    s.workload = Some(WorkloadSpec::default());
    s.primary_metric = Some("ttft_p97_ms".into());
    s.slo.as_mut().unwrap().insert("latency_ms".into(), 3.0);
    let issues = validate_profile(&s).unwrap_err();
    for want in [
        "missing workload.id",
        "missing workload.concurrency",
        "missing workload.repeats",
        "primary_metric: unknown metric \"ttft_p97_ms\"",
        "slo.latency_ms: unknown metric",
    ] {
        assert!(
            issues.iter().any(|i| i.message.contains(want)),
            "{want} not in {issues:?}"
        );
    }
}

#[test]
fn slo_limits_out_of_range_make_the_profile_invalid() {
    for (metric, limit, word) in [
        ("ttft_p95_ms", -1.0, "above 0"),
        ("ttft_p95_ms", 0.0, "above 0"),
        ("peak_memory_mb", 0.0, "above 0"),
        ("failure_rate", 1.5, "between 0 and 1"),
        ("failure_rate", -0.1, "between 0 and 1"),
        ("goodput_ratio", 2.0, "between 0 and 1"),
        ("throughput_tps", -5.0, "0 or more"),
    ] {
        let mut s = spec();
        s.slo.as_mut().unwrap().insert(metric.into(), limit);
        let issues = validate_profile(&s).unwrap_err();
        assert!(
            issues.iter().any(|i| i.code == ProblemCode::OutOfRange
                && i.field == format!("slo.{metric}")
                && i.message.contains(word)),
            "{metric} {limit}: {issues:?}"
        );
    }
    let mut s = spec();
    s.slo.as_mut().unwrap().insert("failure_rate".into(), 0.0);
    s.slo.as_mut().unwrap().insert("throughput_tps".into(), 0.0);
    assert!(validate_profile(&s).is_ok());
}

#[test]
fn rejects_non_positive_counts_and_empty_slo() {
    let mut s = spec();
    s.workload.as_mut().unwrap().concurrency = Some(0);
    s.slo = Some(Default::default());
    let issues = validate_profile(&s).unwrap_err();
    assert!(issues.iter().any(|i| i.code == ProblemCode::OutOfRange
        && i.field == "workload.concurrency"
        && i.message.contains("workload.concurrency is 0")));
    assert!(issues
        .iter()
        .any(|i| i.code == ProblemCode::MissingField && i.message.contains("slo is empty")));
}
