//! `compare`: calibrated (no real change raises no more false alarms than the nominal 5%; a known
//! injected change is found), matched only on the same workload, and every bad input told.

use serde_json::json;
use sloscope_core::analyse::regression::types::{Comparison, Label, Outcome, Pairing};
use sloscope_core::analyse::regression::{compare, CompareOptions};
use sloscope_core::base::metric::Metric;
use sloscope_core::schema::{EvidenceLevel, ProfileSpec};
use sloscope_core::{read_document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

pub fn load(name: &str, v: &serde_json::Value) -> LoadedFile {
    LoadedFile {
        name: name.into(),
        doc: read_document(name, v.to_string().into_bytes()).unwrap_or_else(|e| panic!("{e}")),
    }
}

fn balanced() -> ProfileSpec {
    synth::profile(
        "balanced",
        "mixed",
        1,
        "tpot_p95_ms",
        json!({"ttft_p95_ms": 200, "tpot_p95_ms": 20, "failure_rate": 0.05}),
    )
}

/// A collection: the plan, the lineage records and one run of `shape` per candidate.
fn collection(shape: &Shape, version: &str) -> Vec<LoadedFile> {
    let mut p = balanced();
    // The plan asks for what the side measured.
    let w = p.workload.as_mut().unwrap();
    w.repeats = Some(shape.repeats as i64);
    w.requests_per_repeat = Some(shape.requests as i64);
    let [mut g, mut b, mut d] = synth::lineage();
    for r in [&mut g, &mut b, &mut d] {
        r["backend_version"] = json!(version);
    }
    let mut files = vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
        load("plan.json", &synth::plan(&[&p], &[("np1", 1)])),
    ];
    let mut run = synth::run("q4", &p, "np1", 1, EvidenceLevel::RealBackendProfile, shape);
    run.backend_version = version.into();
    files.push(load("np1.json", &serde_json::to_value(&run).unwrap()));
    files
}

fn shape(seed: u64) -> Shape {
    Shape {
        requests: 30,
        repeats: 3,
        seed,
        ..Shape::default()
    }
}

fn metric(c: &Comparison, m: Metric) -> &sloscope_core::analyse::regression::types::MetricChange {
    c.cells[0]
        .metrics
        .iter()
        .find(|x| x.metric == m)
        .unwrap_or_else(|| panic!("{} not compared", m.name()))
}

#[test]
fn no_real_change_raises_at_most_the_nominal_false_alarms() {
    // 200 pairs of collections of one server with no change, only the noise's seed differs:
    // a regression in any metric of the cell counts as a false alarm.
    let opts = CompareOptions::default();
    let (mut alarms, mut no_change) = (0, 0);
    let pairs = 200;
    for i in 0..pairs {
        let c = compare(
            &collection(&shape(1000 + i), "b1"),
            &collection(&shape(5000 + i), "b1"),
            &opts,
        );
        assert_eq!(c.cells.len(), 1, "{:?}", c.not_comparable);
        alarms += usize::from(c.outcome == Outcome::Regression);
        no_change += c.cells[0]
            .metrics
            .iter()
            .filter(|m| m.label == Label::NoChange)
            .count();
    }
    eprintln!("calibration: {alarms} false alarms in {pairs} pairs, {no_change} no-change labels");
    assert!(
        alarms * 20 <= pairs as usize,
        "{alarms} false alarms in {pairs}"
    );
    // …and the gate is not blind: most metrics are positively shown unchanged.
    assert!(
        no_change > pairs as usize * 5,
        "{no_change} no-change labels"
    );
}

#[test]
fn injected_changes_are_found_in_their_direction() {
    let opts = CompareOptions::default();
    let before = collection(&shape(1), "b1");
    // Decode time +10% (gaps 9–11 ms → 9.9–12.1 ms): TPOT and ITL regress.
    let slower = Shape {
        gap_us: (9_900, 12_100),
        ..shape(2)
    };
    let c = compare(&before, &collection(&slower, "b2"), &opts);
    assert_eq!(c.outcome, Outcome::Regression, "{c:#?}");
    assert_eq!(metric(&c, Metric::TPOT_P95).label, Label::Regression);
    assert_eq!(metric(&c, Metric::ITL_P95).label, Label::Regression);
    assert_ne!(metric(&c, Metric::TTFT_P95).label, Label::Regression);
    // What changed is said first: the backend version of the records and of the runs.
    assert!(
        c.changed
            .iter()
            .any(|x| x.what == "run backend_version" && x.before == ["b1"] && x.after == ["b2"]),
        "{:?}",
        c.changed
    );
    // A TTFT shift of +20 ms.
    let later = Shape {
        ttft_us: (60_000, 80_000),
        ..shape(3)
    };
    let c = compare(&before, &collection(&later, "b1"), &opts);
    assert_eq!(metric(&c, Metric::TTFT_P95).label, Label::Regression);
    assert_eq!(metric(&c, Metric::TPOT_P95).label, Label::NoChange);
    // A throughput drop (decode 40% slower): found over the per-repeat values.
    let drop = Shape {
        gap_us: (12_600, 15_400),
        ..shape(4)
    };
    let c = compare(&before, &collection(&drop, "b1"), &opts);
    let t = metric(&c, Metric::THROUGHPUT);
    assert_eq!(t.label, Label::Regression, "{t:?}");
    // The reverse is an improvement, and no regression.
    let c = compare(&collection(&drop, "b1"), &before, &opts);
    assert_eq!(metric(&c, Metric::THROUGHPUT).label, Label::Improvement);
    assert_eq!(c.outcome, Outcome::NoRegression);
}

#[test]
fn a_threshold_decides_what_counts() {
    let slower = Shape {
        gap_us: (9_900, 12_100),
        ..shape(2)
    };
    let mut opts = CompareOptions::default();
    opts.thresholds.insert(
        Metric::TPOT_P95,
        sloscope_core::analyse::regression::types::Threshold {
            relative: 0.5,
            absolute: 0.2,
        },
    );
    let c = compare(
        &collection(&shape(1), "b1"),
        &collection(&slower, "b1"),
        &opts,
    );
    assert_ne!(metric(&c, Metric::TPOT_P95).label, Label::Regression);
}

#[test]
fn the_same_request_sequence_is_paired_by_index() {
    let c = compare(
        &collection(&shape(1), "b1"),
        &collection(&shape(2), "b1"),
        &CompareOptions::default(),
    );
    assert_eq!(
        c.cells[0].pairing,
        Pairing::Paired,
        "{:?}",
        c.cells[0].pairing_note
    );
    // Another prompt length at one position is another sequence.
    let mut after = collection(&shape(2), "b1");
    if let sloscope_core::Document::Run(r) = &mut after[4].doc {
        let p = &mut r.repeats[0].requests.prompt_tokens[0];
        *p = p.map(|n| n + 1);
    }
    let c = compare(
        &collection(&shape(1), "b1"),
        &after,
        &CompareOptions::default(),
    );
    assert_eq!(c.cells[0].pairing, Pairing::Unpaired);
    assert!(c.cells[0]
        .pairing_note
        .as_deref()
        .unwrap()
        .contains("repeat 0, request 0: prompt of"));
}

#[test]
fn bad_input_is_told_never_an_empty_success() {
    let opts = CompareOptions::default();
    let a = collection(&shape(1), "b1");
    // The same files on both sides.
    let c = compare(&a, &collection(&shape(1), "b1"), &opts);
    assert_eq!(c.outcome, Outcome::Refused);
    assert!(
        c.refused[0].contains("holds measurements of the before"),
        "{:?}",
        c.refused
    );
    // A side with no run.
    let c = compare(&a, &a[..4], &opts);
    assert_eq!(c.outcome, Outcome::Refused);
    assert!(c
        .refused
        .iter()
        .any(|r| r.contains("after collection holds no run")));
    // A broken lineage.
    let mut broken = collection(&shape(2), "b1");
    let [_, _, mut d] = synth::lineage();
    d["backend_version"] = json!("b1");
    d["artifact_id"] = json!("some-other-artifact");
    broken[2] = load("deployment.json", &d);
    let c = compare(&a, &broken, &opts);
    assert_eq!(c.outcome, Outcome::Refused);
    assert!(
        c.refused.iter().any(|r| r.contains("lineage is broken")),
        "{:?}",
        c.refused
    );
    // Another workload: not comparable, with the field that differs.
    let mut other = collection(&shape(2), "b1");
    let mut p = balanced();
    if let Some(w) = p.workload.as_mut() {
        w.concurrency = Some(4);
    }
    let four = Shape {
        concurrency: 4,
        ..shape(2)
    };
    let mut run = synth::run("q4", &p, "np1", 1, EvidenceLevel::RealBackendProfile, &four);
    run.backend_version = "b1".into();
    other[3] = load("plan.json", &synth::plan(&[&p], &[("np1", 1)]));
    other[4] = load("np1.json", &serde_json::to_value(&run).unwrap());
    let c = compare(&a, &other, &opts);
    assert_eq!(c.outcome, Outcome::NothingComparable, "{c:#?}");
    assert!(
        c.not_comparable[0]
            .reason
            .contains("concurrency 1 before, 4 after"),
        "{:?}",
        c.not_comparable
    );
}

#[test]
fn markdown_leads_with_the_answer_and_what_changed() {
    let slower = Shape {
        gap_us: (9_900, 12_100),
        ..shape(2)
    };
    let c = compare(
        &collection(&shape(1), "b1"),
        &collection(&slower, "b2"),
        &CompareOptions::default(),
    );
    let md = sloscope_core::show::comparison::markdown(&c);
    assert!(
        md.starts_with("## sloscope compare: regression: 1 of 1"),
        "{md}"
    );
    let changed = md.find("### What changed").unwrap();
    let table = md.find("### Changes").unwrap();
    assert!(changed < table, "{md}");
    assert!(md.contains(r"| tpot\_p95\_ms |"), "{md}");
    assert!(md.contains("REGRESSION"), "{md}");
    // The headline names the cell that got worse and its first three metrics that did, and
    // how many more (the table holds them all).
    let head = sloscope_core::show::comparison::headline(&c);
    let cell = &c.cells[0];
    assert!(
        head.contains(&format!(": {} {} (", cell.profile, cell.candidate)),
        "{head}"
    );
    let worse: Vec<_> = cell
        .metrics
        .iter()
        .filter(|m| m.label == Label::Regression)
        .collect();
    for m in worse.iter().take(3) {
        assert!(head.contains(&m.metric.name()), "{head} lacks {}", m.metric);
    }
    let more = worse.len()
        + cell
            .shifts
            .iter()
            .filter(|s| s.label == Label::Regression)
            .count();
    if more > 3 {
        assert!(head.contains(&format!(" and {} more)", more - 3)), "{head}");
    }
    // Rows listed first are the ones that can matter: never one shown unchanged, never an
    // undecided one whose measured change is within its threshold; every regression leads.
    use sloscope_core::show::comparison::leads;
    for m in &cell.metrics {
        if m.label == Label::Regression {
            assert!(leads(m));
        }
        if m.label == Label::NoChange {
            assert!(!leads(m));
        }
    }
}

#[test]
fn an_after_run_that_failed_is_a_regression_not_a_missing_cell() {
    let before = collection(&shape(1), "b1");
    let failing = Shape {
        fail_every: 1,
        ..shape(2)
    };
    let c = compare(
        &before,
        &collection(&failing, "b1"),
        &CompareOptions::default(),
    );
    assert_eq!(c.outcome, Outcome::Regression, "{c:#?}");
    let n = &c.not_comparable[0];
    assert_eq!(
        n.kind,
        sloscope_core::analyse::regression::types::NotComparableKind::FailedAfter
    );
    assert!(n.reason.contains("every request failed"), "{}", n.reason);
    // The other way round (fixed after the change) is no regression, and no pass either: the
    // before side's run was left out.
    let c = compare(
        &collection(&failing, "b1"),
        &before,
        &CompareOptions::default(),
    );
    assert_eq!(c.outcome, Outcome::Incomplete, "{c:#?}");
}

#[test]
fn one_repeat_a_side_calls_no_change_either_way() {
    let one = |seed, gap| Shape {
        repeats: 1,
        requests: 60,
        gap_us: gap,
        ..shape(seed)
    };
    let c = compare(
        &collection(&one(1, (9_000, 11_000)), "b1"),
        &collection(&one(2, (18_000, 22_000)), "b1"),
        &CompareOptions::default(),
    );
    assert!(c.cells[0]
        .metrics
        .iter()
        .all(|m| m.label == Label::Inconclusive));
    assert!(metric(&c, Metric::TPOT_P95)
        .method
        .contains("one repeat on a side"));
    // Nothing was decided: a comparison that compared nothing does not pass.
    assert_eq!(c.outcome, Outcome::Inconclusive);
}

#[test]
fn runs_alone_are_compared_and_other_headers_do_not_hide_the_same_measurements() {
    let runs_only = |files: Vec<LoadedFile>| -> Vec<LoadedFile> {
        files.into_iter().filter(|f| f.name == "np1.json").collect()
    };
    let c = compare(
        &runs_only(collection(&shape(1), "b1")),
        &runs_only(collection(&shape(2), "b1")),
        &CompareOptions::default(),
    );
    assert_eq!(c.outcome, Outcome::NoRegression, "{:?}", c.refused);
    assert!(c.notes.iter().any(|n| n.contains("no lineage records")));
    // The same requests under another backend version and file name: refused as the same runs.
    let mut other = collection(&shape(1), "b2");
    other[4].name = "renamed.json".into();
    let c = compare(
        &collection(&shape(1), "b1"),
        &other,
        &CompareOptions::default(),
    );
    assert_eq!(c.outcome, Outcome::Refused);
    assert!(
        c.refused
            .iter()
            .any(|r| r.contains("holds measurements of the before")),
        "{:?}",
        c.refused
    );
}

#[test]
fn two_plans_on_a_side_are_refused() {
    let mut after = collection(&shape(2), "b1");
    let mut p = balanced();
    p.primary_metric = Some("ttft_p95_ms".into());
    after.push(load("plan2.json", &synth::plan(&[&p], &[("np1", 1)])));
    let c = compare(
        &collection(&shape(1), "b1"),
        &after,
        &CompareOptions::default(),
    );
    assert_eq!(c.outcome, Outcome::Refused);
    assert!(
        c.refused.iter().any(|r| r.contains("2 different plans")),
        "{:?}",
        c.refused
    );
}

#[test]
fn what_changed_names_the_slo_and_a_renamed_candidate_is_no_flip() {
    let before = collection(&shape(1), "b1");
    // The same configuration (parallel = 1) under another name, and a tighter SLO.
    let mut p = balanced();
    p.slo = serde_json::from_value(
        json!({"ttft_p95_ms": 150, "tpot_p95_ms": 20, "failure_rate": 0.05}),
    )
    .unwrap();
    let run = {
        let mut r = synth::run(
            "q4",
            &p,
            "one",
            1,
            EvidenceLevel::RealBackendProfile,
            &shape(2),
        );
        r.backend_version = "b1".into();
        r
    };
    let mut after = collection(&shape(2), "b1");
    after[3] = load("plan.json", &synth::plan(&[&p], &[("one", 1)]));
    after[4] = load("one.json", &serde_json::to_value(&run).unwrap());
    let c = compare(&before, &after, &CompareOptions::default());
    assert_eq!(
        c.cells.len(),
        1,
        "matched by knob value: {:?}",
        c.not_comparable
    );
    assert!(
        c.changed.iter().any(|x| x.what == "balanced SLO"),
        "{:?}",
        c.changed
    );
    let v = &c.verdicts[0];
    assert!(!v.flipped, "{v:?}");
}

#[test]
fn the_real_servers_own_repeats_against_each_other_are_no_regression() {
    use sloscope_core::Document;
    // The example set (llama-server on CPU, 3 repeats per run): every side made of some of its
    // repeats, against every other such side — no change was made, so none may regress.
    let subset = |keep: &[u32]| -> Vec<LoadedFile> {
        crate::snapshots::example_files()
            .into_iter()
            .map(|mut f| {
                // The fixed-load runs; a capacity trial has one repeat, kept whole.
                // The plan and the runs' own copies of it ask for as many repeats as kept.
                let n = Some(keep.len() as i64);
                match &mut f.doc {
                    Document::Run(r) if r.trial.is_some() => return f,
                    Document::Run(r) => {
                        r.repeats.retain(|x| keep.contains(&x.index));
                        for (i, x) in r.repeats.iter_mut().enumerate() {
                            x.index = i as u32;
                        }
                        if let Some(w) = r.profile_spec.as_mut().and_then(|p| p.workload.as_mut()) {
                            w.repeats = n;
                        }
                    }
                    Document::Plan(p) => {
                        for w in p.profiles.iter_mut().filter_map(|p| p.workload.as_mut()) {
                            w.repeats = n;
                        }
                    }
                    _ => {}
                }
                f
            })
            .collect()
    };
    let sets: [&[u32]; 6] = [&[0], &[1], &[2], &[0, 1], &[1, 2], &[0, 2]];
    for b in sets {
        for a in sets {
            // The same plan on both sides: as many repeats each.
            if b == a || b.len() != a.len() {
                continue;
            }
            let c = compare(&subset(b), &subset(a), &CompareOptions::default());
            // Sides that share a repeat share measurements: never compared as new data.
            if b.iter().any(|x| a.contains(x)) {
                assert!(
                    matches!(c.outcome, Outcome::Refused | Outcome::Incomplete),
                    "{b:?} vs {a:?}: {:?}",
                    c.outcome
                );
                continue;
            }
            assert!(!c.cells.is_empty(), "{b:?} vs {a:?}: {:?}", c.refused);
            assert_ne!(
                c.outcome,
                Outcome::Regression,
                "{b:?} vs {a:?}: {}",
                sloscope_core::show::comparison::text(&c)
            );
        }
    }
}

/// Every time of a value stretched by `k` (each number under a `*_us` key), wall-clock stamps
/// dropped: the same server, slower by that much.
pub fn stretch(v: &serde_json::Value, k: f64, scale: bool) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Array(a) => Value::Array(a.iter().map(|x| stretch(x, k, scale)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(key, x)| {
                    let y = if key == "started_at" || key == "finished_at" {
                        Value::Null
                    } else {
                        stretch(x, k, scale || key.ends_with("_us"))
                    };
                    (key.clone(), y)
                })
                .collect(),
        ),
        Value::Number(n) if scale => json!((n.as_f64().unwrap_or(0.0) * k).round() as u64),
        other => other.clone(),
    }
}

#[test]
fn a_capacity_that_fell_is_a_regression() {
    use sloscope_core::Document;
    // Only the capacity search's trials are slower after: the fixed-load cells are unchanged,
    // the sustained load falls.
    let before = crate::snapshots::example_files();
    let after: Vec<LoadedFile> = before
        .iter()
        .map(|f| match &f.doc {
            Document::Run(r) if r.trial.is_some() => {
                let v = stretch(&serde_json::to_value(&**r).unwrap(), 3.0, false);
                load(&f.name, &v)
            }
            _ => LoadedFile {
                name: f.name.clone(),
                doc: f.doc.clone(),
            },
        })
        .collect();
    let c = compare(&before, &after, &CompareOptions::default());
    let k = &c.capacity[0];
    assert!(k.candidates.iter().any(|x| x.worse), "{k:?}");
    assert_eq!(c.outcome, Outcome::Regression);
    assert!(
        sloscope_core::show::comparison::headline(&c).contains("sustained load fell"),
        "{}",
        sloscope_core::show::comparison::headline(&c)
    );
}

/// A verdict that changed is named in the headline whatever the outcome, not only beside a
/// regression (a better collection can change the recommendation too).
#[test]
fn the_headline_names_a_changed_recommendation_without_a_regression() {
    let mut c = compare(
        &collection(&shape(1), "b1"),
        &collection(&shape(2), "b2"),
        &CompareOptions::default(),
    );
    assert_ne!(c.outcome, sloscope_core::comparison::Outcome::Regression);
    let head = sloscope_core::show::comparison::headline(&c);
    assert!(!head.contains("the verdict changed"), "{head}");
    let v = c.verdicts.first_mut().expect("a verdict row per profile");
    v.flipped = true;
    v.recommended_before = Some("np1".into());
    v.recommended_after = Some("np4".into());
    let profile = v.profile.clone();
    let head = sloscope_core::show::comparison::headline(&c);
    assert!(
        head.ends_with(&format!("; the verdict changed in {profile} (np1 → np4)")),
        "{head}"
    );
}

/// A run left out of one side (partial there) is an absence: the comparison is incomplete,
/// the profile's verdict is not said to have changed (its after side gave none), and its
/// candidates are not said to have changed either — the plan's candidates are the same.
#[test]
fn a_run_left_out_of_one_side_is_no_verdict_flip() {
    use sloscope_core::schema::RunStatus;
    use sloscope_core::Document;
    let before = crate::snapshots::example_files();
    // The after side measured afresh: every time 2 % longer, sends and gaps included (the
    // same collection twice is refused as one measurement).
    let nudged = |files: &[LoadedFile]| -> Vec<LoadedFile> {
        let mut out = files.to_vec();
        let scale = |t: u64| t * 102 / 100;
        for f in &mut out {
            let Document::Run(r) = &mut f.doc else {
                continue;
            };
            for rep in &mut r.repeats {
                let q = &mut rep.requests;
                q.send_offset_us.iter_mut().for_each(|t| *t = scale(*t));
                q.ttft_us.iter_mut().flatten().for_each(|t| *t = scale(*t));
                q.e2e_us.iter_mut().flatten().for_each(|t| *t = scale(*t));
                let mut gaps = sloscope_core::schema::Gaps::new();
                for g in q.itl_us.iter() {
                    let moved: Vec<u32> = g.iter().map(|&x| scale(u64::from(x)) as u32).collect();
                    gaps.push(&moved);
                }
                q.itl_us = gaps;
            }
        }
        out
    };
    let mut after = nudged(&before);
    for f in &mut after {
        if let Document::Run(r) = &mut f.doc {
            if f.name.ends_with("runs/latency--np4.json") {
                r.status = RunStatus::Partial;
            }
        }
    }
    let c = compare(&before, &after, &CompareOptions::default());
    assert_eq!(c.outcome, Outcome::Incomplete, "{:?}", c.refused);
    let v = c.verdicts.iter().find(|v| v.profile == "latency").unwrap();
    assert!(!v.flipped, "{v:?}");
    assert_eq!(
        v.incomplete_side,
        Some(sloscope_core::analyse::regression::types::WhichSide::After)
    );
    let view = sloscope_core::show::comparison::view::comparison_view(&c);
    assert!(
        !view.headline.contains("the verdict changed"),
        "{}",
        view.headline
    );
    assert!(
        !c.changed.iter().any(|x| x.what == "latency candidates"),
        "{:?}",
        c.changed
    );
    // Control: a verdict that truly changes (the latency SLO tightened past np1's TTFT) is
    // still a flip.
    let mut slower = nudged(&before);
    for f in &mut slower {
        if let Document::Plan(p) = &mut f.doc {
            for pr in &mut p.profiles {
                if pr.name.as_deref() == Some("latency") {
                    pr.slo.as_mut().unwrap().insert("ttft_p95_ms".into(), 100.0);
                }
            }
        }
    }
    let c = compare(&before, &slower, &CompareOptions::default());
    let v = c.verdicts.iter().find(|v| v.profile == "latency").unwrap();
    assert!(v.flipped && v.incomplete_side.is_none(), "{v:?}");
}

/// A regression beside a cell the after side did not measure names both: what got worse, and
/// that a cell was not compared — never a headline that reads as if every cell was compared.
/// Control: the same regression with every cell measured says nothing of cells not compared.
#[test]
fn a_regression_beside_a_cell_not_measured_after_names_both() {
    use sloscope_core::Document;
    let before = crate::snapshots::example_files();
    let slower = |drop: bool| -> Vec<LoadedFile> {
        before
            .iter()
            .filter(|f| !(drop && f.name.ends_with("runs/latency--np1.json")))
            .map(|f| match &f.doc {
                Document::Run(r) => load(
                    &f.name,
                    &stretch(&serde_json::to_value(&**r).unwrap(), 1.25, false),
                ),
                _ => LoadedFile {
                    name: f.name.clone(),
                    doc: f.doc.clone(),
                },
            })
            .collect()
    };
    let c = compare(&before, &slower(true), &CompareOptions::default());
    let head = sloscope_core::show::comparison::headline(&c);
    assert_eq!(c.outcome, Outcome::Regression, "{head}");
    assert!(head.contains("cell(s) not compared"), "{head}");
    let c = compare(&before, &slower(false), &CompareOptions::default());
    let head = sloscope_core::show::comparison::headline(&c);
    assert!(!head.contains("not compared"), "{head}");
}
