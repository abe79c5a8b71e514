//! A quality gate with evidence (`sloscope gate`'s record, measured on llama-server) read beside
//! the example set: the figures recomputed from its per-position data, its artifacts held to the
//! lineage records, and each way it could claim more than it holds is refused.

use sloscope_core::base::problem::ProblemCode;
use sloscope_core::schema::GateDecision;
use sloscope_core::{analyze, read_document, Analysis, Document, LoadedFile};

use crate::snapshots::example_files;

/// The example set's own gate record (measured by `sloscope gate` in the demo).
fn gate_record() -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/examples/lineage/gate.json"
    );
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The example set with its gate records replaced by `gates`.
fn with_gates(gates: &[&serde_json::Value]) -> Analysis {
    let mut files: Vec<LoadedFile> = example_files()
        .into_iter()
        .filter(|f| !matches!(f.doc, Document::QualityGate(_)))
        .collect();
    for (i, g) in gates.iter().enumerate() {
        let name = format!("gate-{i}.json");
        let doc = read_document(&name, serde_json::to_vec(g).unwrap()).unwrap();
        files.push(LoadedFile { name, doc });
    }
    analyze(&files)
}

/// The example set with its gate replaced by `gate`.
fn with_gate(gate: &serde_json::Value) -> Analysis {
    with_gates(&[gate])
}

/// The example's other measured gate (its own scoring, which rejects) as the record of
/// artifact `id`.
fn another_artifacts(_: &serde_json::Value, id: &str) -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/examples/lineage/other-gates/q4_0.gate.json"
    );
    let mut o: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    o["artifact_id"] = id.into();
    o["artifact_sha256"] = "cd".repeat(32).into();
    o["evidence"]["quantized"]["artifact_id"] = id.into();
    o["evidence"]["quantized"]["artifact_sha256"] = "cd".repeat(32).into();
    o
}

#[test]
fn one_scoring_under_two_artifacts_breaks_the_lineage() {
    // The deployed artifact's measurement relabelled as another artifact's: which is it of?
    let g = gate_record();
    let mut relabelled = g.clone();
    for at in ["", "/evidence/quantized"] {
        let v = relabelled.pointer_mut(at).unwrap();
        v["artifact_id"] = "smollm2-135m-instruct-q2_k".into();
        v["artifact_sha256"] = "cd".repeat(32).into();
    }
    let a = with_gates(&[&g, &relabelled]);
    assert!(!a.lineage.ready);
    assert!(
        a.lineage
            .issues
            .iter()
            .any(|p| p.field == "evidence.positions"
                && p.message.contains("one scoring under two artifacts")),
        "{:?}",
        a.lineage.issues
    );
}

#[test]
fn another_artifacts_gate_is_shown_beside_the_deployed_one_not_hidden_nor_blocking() {
    let g = gate_record();
    let other = another_artifacts(&g, "smollm2-135m-instruct-q2_k");
    let a = with_gates(&[&g, &other]);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    assert_eq!(a.lineage.other_gates.len(), 1);
    let o = &a.lineage.other_gates[0];
    assert_eq!(o.artifact_id, "smollm2-135m-instruct-q2_k");
    let m = o.measured.as_ref().expect("recomputed");
    assert_eq!(m.decision, GateDecision::Reject);
    assert!(o.problems.is_empty(), "{:?}", o.problems);
    let text = sloscope_core::show::render::text(&a);
    assert!(
        text.contains("Also gated, not deployed: smollm2-135m-instruct-q2_k")
            && text.contains("measured REJECT over"),
        "{text}"
    );
    // Identical copies count once; one that claims more than it holds is shown with why.
    let mut lying = other.clone();
    lying["evidence"]["figures"]["kld_mean"] = 0.0.into();
    let b = with_gates(&[&g, &other, &other.clone(), &lying]);
    assert!(b.lineage.ready);
    assert_eq!(b.lineage.other_gates.len(), 2);
    assert!(b.lineage.other_gates.iter().any(|o| !o.problems.is_empty()));
    // Two different records of the deployed artifact are still a conflict.
    let mut twin = g.clone();
    twin["notes"] = "another".into();
    let c = with_gates(&[&g, &twin]);
    assert!(codes(&c).contains(&ProblemCode::DuplicateRecords));
}

fn codes(a: &Analysis) -> Vec<ProblemCode> {
    a.lineage.issues.iter().map(|p| p.code).collect()
}

#[test]
fn a_measured_gate_is_recomputed_shown_and_no_longer_asserted() {
    let g = gate_record();
    let a = with_gate(&g);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    assert!(a
        .lineage
        .warnings
        .iter()
        .all(|w| w.code != ProblemCode::GateWithoutEvidence));
    let r = a.lineage.gate.as_ref().unwrap();
    assert_eq!(r.decision, GateDecision::Accept);
    let stated: sloscope_core::schema::GateFigures =
        serde_json::from_value(g["evidence"]["figures"].clone()).unwrap();
    assert_eq!(r.figures.positions, stated.positions);
    assert!((r.figures.kld_mean.unwrap() - stated.kld_mean.unwrap()).abs() < 1e-12);
    assert_eq!(
        r.kld_histogram.iter().map(|b| b.positions).sum::<u64>(),
        stated.positions
    );
    let noise = r.noise_floor.unwrap();
    assert!(noise.kld_mean.unwrap() <= r.figures.kld_mean.unwrap());
    // Every number survives a JSON round trip (the page's worker and a downloaded report).
    let json = serde_json::to_string(&a).unwrap();
    let back: Analysis = serde_json::from_str(&json).unwrap();
    let bins = |x: &Analysis| x.lineage.gate.as_ref().map(|g| g.kld_histogram.clone());
    assert_eq!(bins(&back), bins(&a));
    let v = sloscope_core::show::view::report_view(&a);
    let text = sloscope_core::show::render::text(&a);
    assert!(v.lineage.gate.is_some());
    assert!(text.contains("Quality gate measured: ACCEPT"), "{text}");
    // The same gate without its evidence is an assertion again, and warned.
    let mut asserted = g.clone();
    asserted.as_object_mut().unwrap().remove("evidence");
    let plain = with_gate(&asserted);
    assert!(plain.lineage.ready);
    assert!(plain
        .lineage
        .warnings
        .iter()
        .any(|w| w.code == ProblemCode::GateWithoutEvidence));
}

#[test]
fn a_gate_that_claims_more_than_it_holds_breaks_the_lineage() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit, ProblemCode); 13] = [
        (
            "a figure typed beside the evidence",
            |g| g["quality"]["kld_mean"] = 0.0001.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a limit no gate can have",
            |g| g["evidence"]["thresholds"]["top1_min"] = (-5.0).into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "no log-probabilities",
            |g| g["evidence"]["top_k"] = 0.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "more texts scored than the set holds",
            |g| g["evidence"]["eval_set"]["texts"] = 0.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a stated figure",
            |g| g["evidence"]["figures"]["kld_mean"] = 0.0001.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a stricter threshold",
            |g| g["evidence"]["thresholds"]["kld_mean_max"] = 0.0001.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a partial scoring",
            |g| g["evidence"]["partial"] = "text 1 of 2: connection refused".into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a column cut short",
            |g| {
                g["evidence"]["positions"]["kld"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            },
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a stated noise floor",
            |g| g["evidence"]["noise_floor"]["kld_mean"] = 0.5.into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "a noise floor with no noise data",
            |g| g["evidence"]["noise_positions"] = serde_json::Value::Null,
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "noise data out of range",
            |g| g["evidence"]["noise_positions"]["kld"][0] = (-1.0).into(),
            ProblemCode::GateEvidenceContradicted,
        ),
        (
            "another quantized artifact",
            |g| g["evidence"]["quantized"]["artifact_sha256"] = "ab".repeat(32).into(),
            ProblemCode::GateArtifactMismatch,
        ),
        (
            "another float artifact",
            |g| g["evidence"]["float"]["artifact_id"] = "smollm2-360m-f16".into(),
            ProblemCode::GateArtifactMismatch,
        ),
    ];
    let mut held = 0;
    for (what, edit, code) in cases {
        let mut g = gate_record();
        edit(&mut g);
        let a = with_gate(&g);
        assert!(!a.lineage.ready, "{what}: lineage still ready");
        assert!(codes(&a).contains(&code), "{what}: {:?}", a.lineage.issues);
        assert!(
            a.profiles
                .iter()
                .all(|p| p.decision != sloscope_core::analyse::verdict::ProfileDecision::Accept),
            "{what}"
        );
        held += usize::from(held_if_unbelievable(what, &a));
        // Its data's decision is never shown as the gate's answer beside "broken".
        if let Some(g) = sloscope_core::show::view::report_view(&a).lineage.gate {
            assert_eq!(g.decision_label.as_str(), "NOT BELIEVED", "{what}");
        }
    }
    assert!(
        held >= 11,
        "{held} of the contradictions alone held as incomplete"
    );
    // A rejecting measurement under an accept decision.
    let mut g = gate_record();
    g["evidence"]["decision"] = "reject".into();
    assert!(codes(&with_gate(&g)).contains(&ProblemCode::GateEvidenceContradicted));
}

/// A record that cannot be believed (every problem a contradiction of its own data) judges
/// nothing: incomplete, never a reject. Whether it was such a record.
fn held_if_unbelievable(what: &str, a: &Analysis) -> bool {
    if !a.lineage.issues.iter().all(|p| {
        matches!(
            p.code,
            ProblemCode::GateEvidenceContradicted | ProblemCode::GateArtifactMismatch
        )
    }) {
        return false;
    }
    for p in &a.profiles {
        assert_eq!(
            p.decision,
            sloscope_core::analyse::verdict::ProfileDecision::Incomplete,
            "{what}: {}",
            p.reason
        );
        assert!(
            p.reason
                .starts_with("incomplete: the quality gate record cannot be believed: "),
            "{what}: {}",
            p.reason
        );
    }
    true
}

/// Control for the above: a gate that honestly rejects the artifact rejects it, said as a
/// judgement of the artifact, not as a broken record.
#[test]
fn a_gate_that_rejects_the_artifact_rejects_it() {
    let mut g = gate_record();
    g.as_object_mut().unwrap().remove("evidence");
    g["decision"] = "reject".into();
    for p in &with_gate(&g).profiles {
        assert_eq!(
            p.decision,
            sloscope_core::analyse::verdict::ProfileDecision::Reject
        );
        assert!(
            p.reason.starts_with(
                "the artifact is not accepted by its own records: gate decision is \"reject\""
            ),
            "{}",
            p.reason
        );
    }
}

/// The example set's gate record with looser limits than the plan's (kld ≤ 0.05, top-1 ≥ 0.9,
/// perplexity ratio ≤ 1.05).
fn loosened() -> Analysis {
    let mut g = gate_record();
    g["evidence"]["thresholds"] =
        serde_json::json!({"kld_mean_max": 0.5, "top1_min": 0.5, "ppl_ratio_max": 1.5});
    with_gate(&g)
}

#[test]
fn a_gate_decided_against_looser_limits_than_the_plans_is_held_to_the_plans() {
    // Its figures meet the plan's limits: a warning, the figures shown against the plan's.
    let a = loosened();
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    let w = a
        .lineage
        .warnings
        .iter()
        .find(|w| w.field == "evidence.thresholds")
        .expect("the looser limits are said");
    assert!(
        w.message.contains("where the plan says 0.05"),
        "{}",
        w.message
    );
    let shown = a.lineage.gate.as_ref().unwrap();
    assert_eq!(shown.thresholds.kld_mean_max, 0.05);
    assert_eq!(shown.thresholds.top1_min, 0.9);
    // Figures the record's own limits accept and the plan's reject (its KL divergence mean is
    // 0.0038): the lineage breaks.
    let mut files = example_files();
    let f = files
        .iter_mut()
        .find(|f| matches!(f.doc, Document::Plan(_)))
        .unwrap();
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/examples/plan.json"
    );
    let mut plan: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    plan["gate"]["kld_mean_max"] = 0.001.into();
    f.doc = read_document(&f.name, plan.to_string().into_bytes()).unwrap();
    let a = analyze(&files);
    assert!(!a.lineage.ready);
    let i = a
        .lineage
        .issues
        .iter()
        .find(|i| i.field == "evidence.thresholds")
        .expect("the plan's limits reject it");
    assert_eq!(i.code, ProblemCode::GateEvidenceContradicted);
    assert!(
        i.message.contains("by the plan's its own figures reject"),
        "{}",
        i.message
    );
    assert_eq!(
        a.lineage.gate.as_ref().unwrap().decision,
        GateDecision::Reject
    );
}
