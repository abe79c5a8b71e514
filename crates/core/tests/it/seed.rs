//! The seed chapter's four tests, ported with the same data and the same expected outcomes.
//!
//! Adaptations, each forced by the schema and none changing an outcome:
//! - every record carries `kind` and `schema_version`;
//! - the seed's summary records become run files with `reported` summaries (no raw requests);
//! - c1 states `failure_rate: 0.0`: the seed hard-coded a zero failure rate, sloscope refuses to
//!   assume one (see `unmeasured_failure_rate_is_not_assumed_zero`).

use serde_json::{json, Value};
use sloscope_core::analyse::analyze;
use sloscope_core::analyse::verdict::ProfileDecision;
use sloscope_core::check::contract::validate_profile;
use sloscope_core::check::lineage::{check_lineage, LineageInputs};
use sloscope_core::schema::{Deployment, FloatBaseline, ProfileSpec, QualityGate};
use sloscope_core::{read_document, Document, LoadedFile};

fn gate() -> Value {
    json!({"kind": "quality_gate", "schema_version": "1.0", "artifact_id": "awq-r1", "backend": "vllm",
           "backend_version": "0.x", "hardware": "gpu-a", "decision": "accept"})
}
fn baseline() -> Value {
    json!({"kind": "float_baseline", "schema_version": "1.0", "artifact_id": "fp16-r1", "backend": "vllm",
           "backend_version": "0.x", "hardware": "gpu-a", "decision": "accept"})
}
fn deployment() -> Value {
    json!({"kind": "deployment", "schema_version": "1.0", "artifact_id": "awq-r1", "backend": "vllm",
           "backend_version": "0.x", "hardware": "gpu-a", "gate_artifact_id": "awq-r1", "decision": "accept"})
}
fn profile() -> Value {
    json!({"name": "latency", "workload": {"id": "short-chat", "concurrency": 1, "prompt_tokens": 64,
           "max_output_tokens": 64, "repeats": 3}, "primary_metric": "ttft_p95_ms",
           "slo": {"ttft_p95_ms": 500, "failure_rate": 0.0}})
}

fn lineage_ready(g: &Value, b: &Value, d: &Value) -> bool {
    let g: QualityGate = serde_json::from_value(g.clone()).unwrap();
    let b: FloatBaseline = serde_json::from_value(b.clone()).unwrap();
    let d: Deployment = serde_json::from_value(d.clone()).unwrap();
    let inputs = LineageInputs {
        gates: vec![("gate.json", &g)],
        baselines: vec![("baseline.json", &b)],
        deployments: vec![("deployment.json", &d)],
        runs: vec![],
        plan_gate: None,
    };
    check_lineage(&inputs).ready
}

#[test]
fn test_artifact_lineage() {
    assert!(lineage_ready(&gate(), &baseline(), &deployment()));
    let mut moved = deployment();
    moved["hardware"] = json!("gpu-b");
    assert!(!lineage_ready(&gate(), &baseline(), &moved));
}

#[test]
fn test_profile_contract() {
    let p: ProfileSpec = serde_json::from_value(profile()).unwrap();
    assert!(validate_profile(&p).is_ok());
    let mut empty = profile();
    empty["workload"] = json!({});
    let p: ProfileSpec = serde_json::from_value(empty).unwrap();
    assert!(validate_profile(&p).is_err());
}

fn run(
    name: &str,
    status: &str,
    evidence: &str,
    reported: Option<Value>,
    failure: Option<&str>,
) -> Value {
    json!({"kind": "run", "schema_version": "1.0", "tool": {"name": "seed", "version": "83"},
           "artifact_id": "awq-r1", "profile": "latency", "workload_id": "short-chat",
           "profile_spec": profile(), "candidate": {"name": name}, "backend": "vllm",
           "backend_version": "0.x", "hardware": "gpu-a", "status": status, "failure": failure,
           "evidence_level": evidence, "source": "imported", "reported": reported})
}

fn seed_files(c1_evidence: &str, c1_reported: Value) -> Vec<LoadedFile> {
    let docs = [
        ("gate.json", gate()),
        ("baseline.json", baseline()),
        ("deployment.json", deployment()),
        (
            "c1.json",
            run("c1", "ok", c1_evidence, Some(c1_reported), None),
        ),
        (
            "c2.json",
            run("c2", "failed", "failed_backend_profile", None, Some("oom")),
        ),
    ];
    docs.into_iter()
        .map(|(name, v)| LoadedFile {
            name: name.to_string(),
            doc: read_document(name, v.to_string().into_bytes()).unwrap(),
        })
        .collect()
}

fn c1_reported() -> Value {
    json!({"ttft_p95_ms": 380, "tpot_p95_ms": 12, "throughput_tps": 80, "peak_memory_mb": 1300,
           "queue_wait_p95_ms": 5, "failure_rate": 0.0})
}

#[test]
fn test_profile_summary() {
    let a = analyze(&seed_files("real_backend_profile", c1_reported()));
    let p = &a.profiles[0];
    assert_eq!(p.candidates.len(), 1, "comparable_count");
    let failures: Vec<&str> = p.excluded.iter().map(|e| e.candidate.as_str()).collect();
    assert_eq!(failures, ["c2"]);
    assert!(p.excluded[0].reason.contains("oom"));
}

#[test]
fn test_profile_decision() {
    let a = analyze(&seed_files("real_backend_profile", c1_reported()));
    assert_eq!(a.profiles[0].decision, ProfileDecision::Accept);
    assert_eq!(a.profiles[0].recommended_name.as_deref(), Some("c1"));
    let tuned = analyze(&seed_files("cpu_profile_simulation", c1_reported()));
    assert_eq!(tuned.profiles[0].decision, ProfileDecision::Tune);
}

#[test]
fn unmeasured_failure_rate_is_not_assumed_zero() {
    let mut r = c1_reported();
    r.as_object_mut().unwrap().remove("failure_rate");
    let a = analyze(&seed_files("real_backend_profile", r));
    let p = &a.profiles[0];
    // Not assumed zero, nor taken for a miss: undecided, and the next step is to measure it.
    assert_eq!(p.decision, ProfileDecision::NotEnoughData);
    let b = p.binding_slo.as_ref().unwrap();
    assert_eq!(b.metric.name(), "failure_rate");
    assert_eq!(b.value, None);
    assert!(
        p.reason
            .contains("failure_rate ≤ 0 cannot be decided: not measured"),
        "{}",
        p.reason
    );
    let v = sloscope_core::view::report_view(&a);
    let next = v.profiles[0].next_step.as_deref().unwrap();
    assert!(
        next.starts_with("measure c1 with per-request data") && next.contains("no failure_rate"),
        "{next}"
    );
}

#[test]
fn seed_documents_parse_as_their_kinds() {
    let files = seed_files("real_backend_profile", c1_reported());
    assert!(matches!(files[0].doc, Document::QualityGate(_)));
    assert!(matches!(files[3].doc, Document::Run(_)));
}
