//! Analysis of raw runs: comparability, verdicts, binding SLOs, intervals, baseline comparison.

use serde_json::json;
use sloscope_core::analyse::report::SummarySource;
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::analyze;
use sloscope_core::schema::{EvidenceLevel, Role, RunStatus};
use sloscope_core::{read_document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

pub(crate) fn load(name: &str, v: &serde_json::Value) -> LoadedFile {
    LoadedFile {
        name: name.into(),
        doc: read_document(name, v.to_string().into_bytes()).unwrap_or_else(|e| panic!("{e}")),
    }
}

pub(crate) fn lineage_files() -> Vec<LoadedFile> {
    let [g, b, d] = synth::lineage();
    vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
    ]
}

pub(crate) fn run_file(name: &str, run: &sloscope_core::schema::Run) -> LoadedFile {
    load(name, &serde_json::to_value(run).unwrap())
}

pub(crate) fn latency() -> sloscope_core::schema::ProfileSpec {
    synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100, "failure_rate": 0.0}),
    )
}

#[test]
fn picks_the_lowest_primary_metric_among_feasible_candidates() {
    let p = latency();
    let fast = Shape {
        ttft_us: (20_000, 30_000),
        ..Shape::default()
    };
    let slow = Shape {
        ttft_us: (50_000, 70_000),
        seed: 2,
        ..Shape::default()
    };
    let mut files = lineage_files();
    files.push(run_file(
        "np1.json",
        &synth::run("q4", &p, "np1", 1, EvidenceLevel::RealBackendProfile, &fast),
    ));
    files.push(run_file(
        "np4.json",
        &synth::run("q4", &p, "np4", 4, EvidenceLevel::RealBackendProfile, &slow),
    ));
    let a = analyze(&files);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    let prof = &a.profiles[0];
    assert_eq!(prof.decision, ProfileDecision::Accept, "{}", prof.reason);
    assert_eq!(prof.recommended_name.as_deref(), Some("np1"));
    let c = prof
        .confidence
        .as_ref()
        .expect("3 repeats give an interval");
    assert!(c.distinguishable, "{}", c.statement);
    // The answer first: decision, configuration, primary metric with its interval, and the
    // SLO with the least room.
    let view = sloscope_core::show::view::report_view(&a);
    let h = &view.profiles[0].headline;
    assert!(
        h.starts_with(&format!("{}: ACCEPT · np1 (", prof.profile)),
        "{h}"
    );
    assert!(
        h.contains("(95% ") && h.contains("tightest SLO ") && h.contains("ms below the limit ("),
        "{h}"
    );
    let np1 = &prof.candidates[0];
    assert_eq!(np1.source, SummarySource::Recomputed);
    assert_eq!(np1.per_repeat.len(), 3);
    let s = np1.summary.as_ref().unwrap();
    assert_eq!(s.requests_sent, 90);
    assert_eq!(s.failure_rate, Some(0.0));
    let p95 = s.ttft.p95_ms.unwrap();
    assert!((20.0..=30.0).contains(&p95), "{p95}");
    assert_eq!(s.tpot.count, 90);
    assert!((9.0..=11.3).contains(&s.tpot.mean_ms.unwrap()));
}

#[test]
fn simulation_never_yields_accept() {
    let p = latency();
    let mut files = lineage_files();
    files.push(run_file(
        "np1.json",
        &synth::run(
            "q4",
            &p,
            "np1",
            1,
            EvidenceLevel::CpuProfileSimulation,
            &Shape::default(),
        ),
    ));
    let a = analyze(&files);
    assert_eq!(a.profiles[0].decision, ProfileDecision::Tune);
    assert_eq!(a.profiles[0].recommended_name.as_deref(), Some("np1"));
    assert!(a.profiles[0].reason.contains("cpu_profile_simulation"));
}

#[test]
fn failure_rate_is_computed_and_names_the_binding_slo() {
    let p = latency();
    let flaky = Shape {
        fail_every: 10,
        ..Shape::default()
    };
    let mut files = lineage_files();
    files.push(run_file(
        "np1.json",
        &synth::run(
            "q4",
            &p,
            "np1",
            1,
            EvidenceLevel::RealBackendProfile,
            &flaky,
        ),
    ));
    let a = analyze(&files);
    let prof = &a.profiles[0];
    let s = prof.candidates[0].summary.as_ref().unwrap();
    assert_eq!((s.requests_sent, s.requests_failed), (90, 9));
    assert!((s.failure_rate.unwrap() - 0.1).abs() < 1e-12);
    assert_eq!(prof.decision, ProfileDecision::Tune);
    let b = prof.binding_slo.as_ref().unwrap();
    assert_eq!(b.metric.name(), "failure_rate");
    assert_eq!(b.candidate, "np1");
    assert!((b.missed_by.unwrap() - 0.1).abs() < 1e-12);
}

#[test]
fn binding_slo_reports_the_closest_candidate_and_the_miss() {
    let p = synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 40}),
    );
    let a_shape = Shape {
        ttft_us: (44_000, 44_000),
        ..Shape::default()
    };
    let b_shape = Shape {
        ttft_us: (80_000, 80_000),
        ..Shape::default()
    };
    let mut files = lineage_files();
    files.push(run_file(
        "a.json",
        &synth::run(
            "q4",
            &p,
            "a",
            1,
            EvidenceLevel::RealBackendProfile,
            &a_shape,
        ),
    ));
    files.push(run_file(
        "b.json",
        &synth::run(
            "q4",
            &p,
            "b",
            4,
            EvidenceLevel::RealBackendProfile,
            &b_shape,
        ),
    ));
    let prof = &analyze(&files).profiles[0];
    let b = prof.binding_slo.as_ref().unwrap();
    assert_eq!(
        (b.candidate.as_str(), b.metric.name().as_str()),
        ("a", "ttft_p95_ms")
    );
    assert!((b.missed_by.unwrap() - 4.0).abs() < 1e-9);
    assert!((b.missed_by_ratio.unwrap() - 0.1).abs() < 1e-9);
    assert!(prof.reason.contains("missed by 4"), "{}", prof.reason);
}

#[test]
fn throughput_profile_maximises() {
    let p = synth::profile(
        "throughput",
        "batch",
        4,
        "throughput_tps",
        json!({"failure_rate": 0.0}),
    );
    let slow = Shape {
        gap_us: (20_000, 22_000),
        concurrency: 4,
        ..Shape::default()
    };
    let fast = Shape {
        gap_us: (5_000, 6_000),
        concurrency: 4,
        ..Shape::default()
    };
    let mut files = lineage_files();
    files.push(run_file(
        "slow.json",
        &synth::run(
            "q4",
            &p,
            "slow",
            1,
            EvidenceLevel::RealBackendProfile,
            &slow,
        ),
    ));
    files.push(run_file(
        "fast.json",
        &synth::run(
            "q4",
            &p,
            "fast",
            4,
            EvidenceLevel::RealBackendProfile,
            &fast,
        ),
    ));
    let prof = &analyze(&files).profiles[0];
    assert_eq!(prof.recommended_name.as_deref(), Some("fast"));
}

#[test]
fn non_comparable_runs_are_listed_with_reasons() {
    let p = latency();
    let other = synth::profile(
        "latency",
        "other-workload",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100}),
    );
    let mut bigger = latency();
    bigger.workload.as_mut().unwrap().concurrency = Some(8);
    let shape = Shape::default();
    let mut partial = synth::run(
        "q4",
        &p,
        "partial",
        2,
        EvidenceLevel::RealBackendProfile,
        &Shape {
            seed: 2,
            ..Shape::default()
        },
    );
    partial.status = RunStatus::Partial;
    partial.failure = Some("interrupted by Ctrl-C".into());
    let mut files = lineage_files();
    files.push(run_file(
        "ok.json",
        &synth::run("q4", &p, "ok", 1, EvidenceLevel::RealBackendProfile, &shape),
    ));
    files.push(run_file(
        "dup.json",
        &synth::run("q4", &p, "ok", 1, EvidenceLevel::RealBackendProfile, &shape),
    ));
    files.push(run_file(
        "wl.json",
        &synth::run(
            "q4",
            &other,
            "wl",
            3,
            EvidenceLevel::RealBackendProfile,
            &Shape {
                seed: 3,
                ..Shape::default()
            },
        ),
    ));
    files.push(run_file(
        "conc.json",
        &synth::run(
            "q4",
            &bigger,
            "conc",
            4,
            EvidenceLevel::RealBackendProfile,
            &Shape {
                seed: 4,
                ..Shape::default()
            },
        ),
    ));
    files.push(run_file("partial.json", &partial));
    // The plan defines the profile: without one, runs that define it differently leave it
    // undefined (never the first file's definition).
    let plan = synth::plan(&[&p], &[("ok", 1), ("partial", 2), ("wl", 3), ("conc", 4)]);
    files.push(load("plan.json", &plan));
    let prof = &analyze(&files).profiles[0];
    assert_eq!(prof.candidates.len(), 1);
    let reasons: Vec<(&str, &str)> = prof
        .excluded
        .iter()
        .map(|e| (e.file.as_str(), e.reason.as_str()))
        .collect();
    let find = |f: &str| {
        reasons
            .iter()
            .find(|r| r.0 == f)
            .map(|r| r.1)
            .unwrap_or_else(|| panic!("{f} not excluded: {reasons:?}"))
    };
    // An identical copy is counted once and said so, not excluded (files in name order).
    assert!(prof.flags.iter().any(|f| f.code
        == sloscope_core::analyse::report::Code::DuplicateRun
        && f.message
            .contains("ok.json is an identical copy of dup.json")));
    assert!(find("wl.json").contains("workload \"other-workload\""));
    assert!(find("conc.json").contains("concurrency 8 (profile 1)"));
    assert!(find("partial.json").contains("partial run (90 requests kept): interrupted by Ctrl-C"));
}

#[test]
fn baseline_runs_are_the_reference_not_candidates() {
    let p = latency();
    let q = Shape {
        gap_us: (5_000, 6_000),
        ..Shape::default()
    };
    let f = Shape {
        gap_us: (15_000, 16_000),
        seed: 9,
        rss_mb: Some(700.0),
        ..Shape::default()
    };
    let mut base = synth::run("f16", &p, "float", 1, EvidenceLevel::RealBackendProfile, &f);
    base.role = Role::Baseline;
    let mut files = lineage_files();
    files.push(run_file(
        "np1.json",
        &synth::run("q4", &p, "np1", 1, EvidenceLevel::RealBackendProfile, &q),
    ));
    files.push(run_file("float.json", &base));
    let a = analyze(&files);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    let prof = &a.profiles[0];
    assert_eq!(prof.candidates.len(), 1);
    let b = prof.baseline.as_ref().expect("baseline comparison");
    assert_eq!(b.compared_with.as_deref(), Some("np1"));
    let tpot = b
        .rows
        .iter()
        .find(|r| r.metric.name() == "tpot_p95_ms")
        .unwrap();
    assert!(tpot.ratio.unwrap() < 0.5, "{tpot:?}");
    let iv = tpot.difference_interval.expect("3 repeats each");
    assert!(iv.high.unwrap() < 0.0, "quantized is faster: {iv:?}");
    let mem = b
        .rows
        .iter()
        .find(|r| r.metric.name() == "peak_memory_mb")
        .unwrap();
    assert_eq!(mem.baseline, Some(700.0));
}

#[test]
fn reported_summaries_disagreeing_with_raw_data_are_flagged() {
    let p = latency();
    let mut run = synth::run(
        "q4",
        &p,
        "np1",
        1,
        EvidenceLevel::RealBackendProfile,
        &Shape::default(),
    );
    let mut reported = std::collections::BTreeMap::new();
    reported.insert("ttft_p95_ms".to_string(), Some(1.0));
    reported.insert("failure_rate".to_string(), Some(0.0));
    run.reported = Some(reported);
    let mut files = lineage_files();
    files.push(run_file("np1.json", &run));
    let c = &analyze(&files).profiles[0].candidates[0];
    assert_eq!(c.disagreements.len(), 1);
    assert_eq!(c.disagreements[0].metric.name(), "ttft_p95_ms");
}

#[test]
fn renders_markdown_and_text() {
    let p = latency();
    let mut files = lineage_files();
    files.push(run_file(
        "np1.json",
        &synth::run(
            "q4",
            &p,
            "np1",
            1,
            EvidenceLevel::RealBackendProfile,
            &Shape::default(),
        ),
    ));
    let a = analyze(&files);
    let md = sloscope_core::show::render::markdown(&a);
    assert!(
        md.contains("| latency | ACCEPT | np1 | ttft\\_p95\\_ms |"),
        "{md}"
    );
    assert!(md.contains("| np1 ★ | 1 |"), "{md}");
    let txt = sloscope_core::show::render::text(&a);
    assert!(txt.contains("Lineage: ready"), "{txt}");
}

/// Runs are comparable only under the same traffic shape: a run sent with other length
/// distributions or another arrival process is left out, and the reason names the part.
#[test]
fn runs_of_another_traffic_shape_are_left_out_with_the_part_named() {
    use sloscope_core::base::traffic::{Arrival, LengthDist};
    let mut p = latency();
    {
        let w = p.workload.as_mut().unwrap();
        w.request_rate_rps = Some(2.0);
        w.arrival = Some(Arrival::Gamma { burstiness: 0.5 });
        w.prompt_length = Some(LengthDist::Uniform { min: 16, max: 256 });
        w.output_length = Some(LengthDist::LogNormal {
            mean: 64.0,
            stddev: 32.0,
            min: 4,
            max: 512,
        });
    }
    let mut other_lengths = p.clone();
    other_lengths.workload.as_mut().unwrap().output_length = Some(LengthDist::Fixed { tokens: 64 });
    let mut poisson = p.clone();
    poisson.workload.as_mut().unwrap().arrival = None;
    let shape = Shape::default();
    let mut files = lineage_files();
    for (name, spec, value) in [
        ("ok.json", &p, 1),
        ("lengths.json", &other_lengths, 2),
        ("poisson.json", &poisson, 3),
    ] {
        let run = synth::run(
            "q4",
            spec,
            name.trim_end_matches(".json"),
            value,
            EvidenceLevel::RealBackendProfile,
            &shape,
        );
        files.push(run_file(name, &run));
    }
    let plan = synth::plan(&[&p], &[("ok", 1), ("lengths", 2), ("poisson", 3)]);
    files.push(load("plan.json", &plan));
    let prof = &analyze(&files).profiles[0];
    assert_eq!(prof.candidates.len(), 1, "{:?}", prof.excluded);
    let reason = |f: &str| {
        prof.excluded
            .iter()
            .find(|e| e.file == f)
            .map(|e| e.reason.clone())
            .unwrap_or_else(|| panic!("{f} not excluded: {:?}", prof.excluded))
    };
    assert!(
        reason("lengths.json")
            .contains("output_length 64 (profile log-normal mean 64 sd 32 [4, 512])"),
        "{}",
        reason("lengths.json")
    );
    assert!(
        reason("poisson.json").contains("arrival Poisson (profile gamma, burstiness 0.5)"),
        "{}",
        reason("poisson.json")
    );
}

/// Two candidates the data cannot tell apart on the primary metric, both meeting every SLO:
/// the answer is the cheaper one (the lower knob value, no more memory), with the rule said —
/// one answer, not a winner and "an equivalent, cheaper choice" beside it.
fn tie(np1_ttft: (u64, u64), np1_rss: f64) -> sloscope_core::Analysis {
    let p = latency();
    let np1 = Shape {
        ttft_us: np1_ttft,
        rss_mb: Some(np1_rss),
        ..Shape::default()
    };
    let np4 = Shape {
        ttft_us: (20_000, 29_000),
        rss_mb: Some(400.0),
        seed: 2,
        ..Shape::default()
    };
    let mut files = lineage_files();
    for (name, value, shape) in [("np1", 1, &np1), ("np4", 4, &np4)] {
        let run = synth::run(
            "q4",
            &p,
            name,
            value,
            EvidenceLevel::RealBackendProfile,
            shape,
        );
        files.push(run_file(&format!("{name}.json"), &run));
    }
    analyze(&files)
}

#[test]
fn of_tied_candidates_the_cheaper_is_the_answer() {
    let a = tie((20_500, 30_000), 400.0);
    let prof = &a.profiles[0];
    let p95 = |n: &str| {
        prof.candidates
            .iter()
            .find(|c| c.name == n)
            .and_then(|c| c.metric(sloscope_core::base::metric::Metric::TTFT_P95))
            .unwrap()
    };
    assert!(
        p95("np4") < p95("np1"),
        "np4 must rank first for the rule to matter"
    );
    assert_eq!(prof.decision, ProfileDecision::Accept, "{}", prof.reason);
    assert_eq!(
        prof.recommended_name.as_deref(),
        Some("np1"),
        "{}",
        prof.reason
    );
    assert!(
        prof.reason.contains("tied with np4")
            && prof.reason.contains("parallel 1 vs 4")
            && prof
                .reason
                .contains("of tied candidates the cheaper is chosen"),
        "{}",
        prof.reason
    );
    let c = prof.confidence.as_ref().unwrap();
    assert!(
        !c.distinguishable && c.runner_up.as_deref() == Some("np4"),
        "{}",
        c.statement
    );
    // One answer: no flag offers another candidate as an equivalent, cheaper choice.
    assert!(prof
        .flags
        .iter()
        .all(|f| f.code.as_str() != "equivalent_cheaper"));
}

#[test]
fn the_tie_rule_needs_a_tie_and_a_cheaper_candidate() {
    // Told apart: the faster candidate is the answer, however many slots it takes.
    let a = tie((50_000, 70_000), 400.0);
    assert_eq!(a.profiles[0].recommended_name.as_deref(), Some("np4"));
    assert!(!a.profiles[0].reason.contains("tied with"));
    // Tied, but the lower knob value takes more memory: not cheaper, so the first stays.
    let a = tie((20_500, 30_000), 480.0);
    assert_eq!(
        a.profiles[0].recommended_name.as_deref(),
        Some("np4"),
        "{}",
        a.profiles[0].reason
    );
}

/// A throughput floor bounded by the spread of the repeats, from one repeat: undecided for want
/// of a second repeat, and said so — not "no number of requests decides a value this close to
/// the limit" when the value is far from it — with the next step to measure more repeats.
/// Control: three repeats far from the floor decide it.
#[test]
fn a_figure_bounded_by_repeats_from_one_repeat_asks_for_repeats() {
    let p = synth::profile(
        "throughput",
        "long",
        4,
        "throughput_tps",
        json!({"throughput_tps": 1.0}),
    );
    let judged = |repeats: usize| {
        let mut p = p.clone();
        p.workload.as_mut().unwrap().repeats = Some(repeats as i64);
        let shape = Shape {
            repeats,
            concurrency: 4,
            ..Shape::default()
        };
        let mut files = lineage_files();
        files.push(run_file(
            "c.json",
            &synth::run("q4", &p, "c", 4, EvidenceLevel::RealBackendProfile, &shape),
        ));
        analyze(&files)
    };
    let a = judged(1);
    let prof = &a.profiles[0];
    assert_eq!(
        prof.decision,
        ProfileDecision::NotEnoughData,
        "{}",
        prof.reason
    );
    assert!(
        prof.reason
            .contains("it takes 2 repeats or more to have one"),
        "{}",
        prof.reason
    );
    assert!(
        !prof.reason.contains("this close to the limit"),
        "{}",
        prof.reason
    );
    let v = sloscope_core::show::view::report_view(&a);
    let next = v.profiles[0]
        .next_step
        .as_ref()
        .map(|s| s.to_string())
        .unwrap_or_default();
    assert!(next.contains("with 2 repeats or more"), "{next}");
    assert_eq!(
        judged(3).profiles[0].decision,
        ProfileDecision::Accept,
        "{}",
        judged(3).profiles[0].reason
    );
}
