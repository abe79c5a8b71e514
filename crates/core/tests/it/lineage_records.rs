//! Verdicts against the lineage records: a broken lineage rejects every profile and lists every
//! problem, missing records and fields not stated are said, identical copies of a record are one
//! record and different ones a conflict.

use serde_json::json;
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::base::problem::ProblemCode;
use sloscope_core::check::lineage::FieldStatus;
use sloscope_core::schema::EvidenceLevel;
use sloscope_core::{analyze, Document};
use sloscope_testkit::synth::{self, Shape};

use crate::analysis::{latency, load, run_file};

#[test]
fn broken_lineage_rejects_every_profile_and_lists_all_problems() {
    let [mut g, b, mut d] = synth::lineage();
    g["decision"] = json!("tune");
    d["tokenizer_sha256"] = json!("ff00");
    d["backend_version"] = json!("b2");
    let p = latency();
    let files = vec![
        load("gate.json", &g),
        load("baseline.json", &b),
        load("deployment.json", &d),
        run_file(
            "np1.json",
            &synth::run(
                "other-artifact",
                &p,
                "np1",
                1,
                EvidenceLevel::RealBackendProfile,
                &Shape::default(),
            ),
        ),
    ];
    let a = analyze(&files);
    assert!(!a.lineage.ready);
    let all = a
        .lineage
        .issues
        .iter()
        .map(|p| p.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    // Each kind of problem has a stable code and names its field.
    let has = |code: ProblemCode, field: &str| {
        a.lineage
            .issues
            .iter()
            .any(|p| p.code == code && p.field == field)
    };
    assert!(has(ProblemCode::FieldMismatch, "tokenizer_sha256"), "{all}");
    assert!(has(ProblemCode::FieldMismatch, "backend_version"), "{all}");
    for want in [
        "gate decision is \"tune\"",
        "tokenizer_sha256 differs",
        "backend_version differs",
    ] {
        assert!(all.contains(want), "{want} missing from:\n{all}");
    }
    let tok = a
        .lineage
        .fields
        .iter()
        .find(|f| f.field == "tokenizer_sha256")
        .unwrap();
    assert_eq!(tok.status, FieldStatus::Mismatch);
    assert_eq!(a.profiles[0].decision, ProfileDecision::Reject);
    assert!(a.profiles[0].reason.starts_with("lineage is broken"));
    // The run of another lineage (its artifact, and the version the deployment no longer
    // states) is that run's problem, named in its profile (not comparable, the seed's rule),
    // not one of the lineage's.
    assert!(a.lineage.runs_apart.iter().any(|r| r.file == "np1.json"));
    assert!(
        a.profiles[0]
            .excluded
            .iter()
            .any(|e| e.file == "np1.json" && e.code.as_str() == "lineage_mismatch"),
        "{:?}",
        a.profiles[0].excluded
    );
}

#[test]
fn missing_records_and_unstated_fields() {
    let [g, b, d] = synth::lineage();
    let a = analyze(&[load("gate.json", &g), load("deployment.json", &d)]);
    assert!(a
        .lineage
        .issues
        .iter()
        .any(|i| i.code == ProblemCode::MissingRecord
            && i.field == "float_baseline"
            && i.message.contains("no float_baseline record")));
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("revision");
        v
    };
    let a = analyze(&[
        load("g", &strip(g.clone())),
        load("b", &strip(b.clone())),
        load("d", &strip(d.clone())),
    ]);
    assert!(a.lineage.ready);
    assert!(a
        .lineage
        .warnings
        .iter()
        .any(|w| w.code == ProblemCode::NotRecorded
            && w.message
                .contains("revision is recorded in no lineage record")));
    let a = analyze(&[load("g", &strip(g)), load("b", &b), load("d", &d)]);
    assert!(
        a.lineage.issues.iter().any(|i| i.message.contains(
            "revision is stated by baseline \"main\", deployment \"main\" but missing from gate"
        )),
        "{:?}",
        a.lineage.issues
    );
    let mut bq = synth::lineage()[1].clone();
    bq["format"] = json!("Q8_0");
    let [g, _, d] = synth::lineage();
    let a = analyze(&[load("g", &g), load("b", &bq), load("d", &d)]);
    assert!(a
        .lineage
        .issues
        .iter()
        .any(|i| i.message.contains("expected a float format")));
}

/// Copies of one lineage record (every output directory, every shard's attempt copies the
/// plan's records) are one record; two records that differ are a conflict, shown as broken —
/// never as "no records loaded".
#[test]
fn identical_record_copies_are_one_record_and_different_ones_a_conflict() {
    use sloscope_core::show::view::report_view;
    let mut files = crate::snapshots::example_files();
    let gate = files
        .iter()
        .find(|f| matches!(f.doc, Document::QualityGate(_)))
        .unwrap()
        .clone();
    let mut copy = gate.clone();
    copy.name = "elsewhere/lineage/gate.json".into();
    files.push(copy);
    let a = sloscope_core::analyze(&files);
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    let one = crate::snapshots::example_analysis();
    assert_eq!(a.lineage.fields, one.lineage.fields);
    assert_eq!(a.lineage.warnings, one.lineage.warnings);
    // The copy read is the first by name, whatever the order the files came in.
    assert_eq!(
        a.lineage.gate_file.as_deref(),
        Some("elsewhere/lineage/gate.json")
    );
    let mut other = gate;
    other.name = "other/lineage/gate.json".into();
    if let Document::QualityGate(g) = &mut other.doc {
        g.notes = Some("a different gate".into());
    }
    files.push(other);
    let a = sloscope_core::analyze(&files);
    assert!(!a.lineage.ready);
    let issue = &a.lineage.issues[0].message;
    assert!(issue.contains("different quality_gate records"), "{issue}");
    let v = report_view(&a);
    assert!(
        !v.lineage.absent,
        "records were loaded: {}",
        v.lineage.status_line
    );
    assert!(v.lineage.status_line.to_string().contains("BROKEN"));
}

/// Gate records of several artifacts (the deployed one's and another's, as the example set
/// holds) with no deployment record to say which is deployed: a record missing, so every
/// profile is INCOMPLETE and says to load the deployment record — never REJECT as if two gates
/// of one artifact contradicted each other. Control: with the deployment record, a verdict.
#[test]
fn gates_of_several_artifacts_without_the_deployment_record_are_a_record_missing() {
    let files = crate::snapshots::example_files();
    let without: Vec<_> = files
        .iter()
        .filter(|f| !matches!(f.doc, Document::Deployment(_)))
        .cloned()
        .collect();
    assert!(
        without
            .iter()
            .filter(|f| matches!(f.doc, Document::QualityGate(_)))
            .count()
            >= 2
    );
    let a = analyze(&without);
    for p in &a.profiles {
        assert_eq!(
            p.decision,
            ProfileDecision::Incomplete,
            "{}: {}",
            p.profile,
            p.reason
        );
        assert!(
            p.reason.contains("load the deployment record"),
            "{}",
            p.reason
        );
    }
    assert!(
        a.lineage
            .issues
            .iter()
            .all(|i| i.code == ProblemCode::MissingRecord),
        "{:?}",
        a.lineage.issues
    );
    let a = analyze(&files);
    assert!(a
        .profiles
        .iter()
        .all(|p| p.decision != ProfileDecision::Incomplete || !p.reason.contains("deployment")));
}
