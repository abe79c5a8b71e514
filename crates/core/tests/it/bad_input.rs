//! Malformed files get errors naming the file, the JSON path and what was expected; the parser
//! and the analysis never panic.

use proptest::prelude::*;
use serde_json::json;
use sloscope_core::schema::EvidenceLevel;
use sloscope_core::LoadErrorKind;
use sloscope_core::{analyze, read_document, LoadedFile};
use sloscope_testkit::synth::{self, Shape};

fn valid_run() -> serde_json::Value {
    let p = synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100}),
    );
    let shape = Shape {
        requests: 4,
        repeats: 1,
        output_tokens: 3,
        ..Shape::default()
    };
    serde_json::to_value(synth::run(
        "q4",
        &p,
        "np1",
        1,
        EvidenceLevel::CpuProfileSimulation,
        &shape,
    ))
    .unwrap()
}

fn err(v: &str) -> sloscope_core::LoadError {
    read_document("bad.json", v.as_bytes().to_vec()).expect_err("must be refused")
}

fn err_v(v: &serde_json::Value) -> sloscope_core::LoadError {
    err(&v.to_string())
}

#[test]
fn truncated_json() {
    let s = valid_run().to_string();
    let e = err(&s[..s.len() / 2]);
    assert_eq!(e.kind, LoadErrorKind::Syntax);
    assert!(
        e.to_string().starts_with("bad.json: $: truncated JSON"),
        "{e}"
    );
}

#[test]
fn nan_and_infinity() {
    let s = valid_run()
        .to_string()
        .replacen("\"ttft_us\":[", "\"ttft_us\":[NaN,", 1);
    let e = err(&s);
    assert!(
        e.message.contains("NaN and Infinity are not JSON numbers"),
        "{e}"
    );
    let e = err(r#"{"kind":"run","schema_version":"1.0","x":Infinity}"#);
    assert_eq!(e.kind, LoadErrorKind::Syntax);
}

#[test]
fn wrong_type_names_the_path() {
    let mut v = valid_run();
    v["repeats"][0]["requests"]["ttft_us"][2] = json!("fast");
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests.ttft_us[2]", "{e}");
    assert!(e.message.contains("expected u64"), "{e}");
}

#[test]
fn negative_times() {
    let mut v = valid_run();
    v["repeats"][0]["requests"]["e2e_us"][1] = json!(-5);
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests.e2e_us[1]");
    assert!(e.message.contains("-5"), "{e}");
}

#[test]
fn non_monotonic_times() {
    let mut v = valid_run();
    v["repeats"][0]["requests"]["send_offset_us"][2] = json!(0);
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests.send_offset_us[2]");
    assert!(e.message.contains("expected requests in send order"), "{e}");
    let mut v = valid_run();
    let ttft = v["repeats"][0]["requests"]["ttft_us"][0].as_u64().unwrap();
    v["repeats"][0]["requests"]["e2e_us"][0] = json!(ttft - 1);
    let e = err_v(&v);
    assert!(e.message.contains("before the first token"), "{e}");
    let mut v = valid_run();
    v["repeats"][0]["requests"]["itl_us"][0] = json!([4_000_000_000u64, 1]);
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests.itl_us[0]");
}

#[test]
fn missing_field() {
    let mut v = valid_run();
    v.as_object_mut().unwrap().remove("evidence_level");
    let e = err_v(&v);
    assert_eq!(e.kind, LoadErrorKind::Field);
    assert!(e.message.contains("missing field `evidence_level`"), "{e}");
    let mut v = valid_run();
    v["repeats"][0]["requests"]
        .as_object_mut()
        .unwrap()
        .remove("error");
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests");
}

#[test]
fn column_length_mismatch() {
    let mut v = valid_run();
    v["repeats"][0]["requests"]["output_tokens"]
        .as_array_mut()
        .unwrap()
        .pop();
    let e = err_v(&v);
    assert_eq!(e.path, "$.repeats[0].requests.output_tokens");
    assert!(e.message.contains("has 3 entries: expected 4"), "{e}");
}

#[test]
fn unknown_kind_and_missing_kind() {
    let e = err(r#"{"kind":"runs","schema_version":"1.0"}"#);
    assert_eq!(e.kind, LoadErrorKind::Kind);
    assert!(
        e.message
            .contains("unknown kind \"runs\": expected one of quality_gate"),
        "{e}"
    );
    let e = err(r#"{"date":"x","backend":"vllm"}"#);
    assert!(e.message.contains("missing field `kind`"), "{e}");
    let e = err("[1,2]");
    assert_eq!(e.kind, LoadErrorKind::Syntax);
}

#[test]
fn newer_schema_version_is_refused_by_name() {
    let mut v = valid_run();
    v["schema_version"] = json!("2.0");
    let e = err_v(&v);
    assert_eq!(e.kind, LoadErrorKind::Version);
    assert!(
        e.message
            .contains("schema version 2.0 is newer than this sloscope reads (1.x)"),
        "{e}"
    );
    v["schema_version"] = json!("1.7");
    read_document("minor.json", v.to_string().into_bytes()).expect("a newer minor is read");
    v["schema_version"] = json!(1);
    assert_eq!(err_v(&v).kind, LoadErrorKind::Version);
}

#[test]
fn empty_request_list() {
    let mut v = valid_run();
    let r = &mut v["repeats"][0]["requests"];
    for k in [
        "send_offset_us",
        "ttft_us",
        "e2e_us",
        "prompt_tokens",
        "prompt_tokens_source",
        "output_tokens",
        "output_tokens_source",
        "server_queue_us",
        "error",
        "itl_us",
    ] {
        r[k] = json!([]);
    }
    let e = err_v(&v);
    assert!(e.message.contains("empty request list"), "{e}");
    let mut v = valid_run();
    v["repeats"] = json!([]);
    assert!(err_v(&v).message.contains("needs at least one repeat"));
}

#[test]
fn unknown_reported_metric() {
    let mut v = valid_run();
    v["reported"] = json!({"ttft_p95": 3.0});
    let e = err_v(&v);
    assert_eq!(e.path, "$.reported.ttft_p95");
}

fn mutate(base: &[u8], ops: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = base.to_vec();
    for &(pos, byte, op) in ops {
        if b.is_empty() {
            break;
        }
        let i = pos % b.len();
        match op % 3 {
            0 => b[i] = byte,
            1 => {
                b.remove(i);
            }
            _ => b.insert(i, byte),
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn parser_and_analysis_never_panic(ops in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6)) {
        let base = valid_run().to_string().into_bytes();
        let bytes = mutate(&base, &ops);
        if let Ok(doc) = read_document("fuzz.json", bytes.clone()) {
            let [g, b, d] = synth::lineage();
            let mut files: Vec<LoadedFile> = [("g", g), ("b", b), ("d", d)]
                .into_iter()
                .map(|(n, v)| LoadedFile { name: n.into(), doc: read_document(n, v.to_string().into_bytes()).unwrap() })
                .collect();
            files.push(LoadedFile { name: "fuzz.json".into(), doc });
            let a = analyze(&files);
            let _ = sloscope_core::show::render::markdown(&a);
        }
    }

    #[test]
    fn arbitrary_bytes_are_refused_not_panicked_on(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = read_document("junk.json", bytes.clone());
    }
}

fn big_run() -> sloscope_core::schema::Run {
    let p = synth::profile(
        "latency",
        "short",
        1,
        "ttft_p95_ms",
        json!({"ttft_p95_ms": 100}),
    );
    let shape = Shape {
        requests: 3000,
        repeats: 2,
        output_tokens: 64,
        ..Shape::default()
    };
    synth::run(
        "q4",
        &p,
        "np1",
        1,
        EvidenceLevel::CpuProfileSimulation,
        &shape,
    )
}

#[test]
fn large_file_fast_path_reads_the_same_document() {
    let run = big_run();
    let text = serde_json::to_vec(&run).unwrap();
    assert!(
        text.len() > 1 << 20,
        "exercise the fast path: {} bytes",
        text.len()
    );
    let plain = sloscope_core::read::json::parse_document("big.json", &text).unwrap();
    let fast = sloscope_core::read_document("big.json", text).unwrap();
    assert_eq!(plain, fast);
    let pretty = serde_json::to_vec_pretty(&run).unwrap();
    let fast = sloscope_core::read_document("big.json", pretty).unwrap();
    assert_eq!(plain, fast);
}

#[test]
fn large_file_errors_keep_their_paths() {
    let mut v = serde_json::to_value(big_run()).unwrap();
    v["repeats"][1]["requests"]["itl_us"][5][2] = json!(-1);
    let e = sloscope_core::read_document("big.json", v.to_string().into_bytes()).unwrap_err();
    assert_eq!(e.path, "$.repeats[1].requests.itl_us", "{e}");
    assert!(e.message.contains("request 5, gap 2"), "{e}");
    let mut v = serde_json::to_value(big_run()).unwrap();
    v["repeats"][1]["requests"]["ttft_us"][7] = json!("x");
    let e = sloscope_core::read_document("big.json", v.to_string().into_bytes()).unwrap_err();
    assert_eq!(e.path, "$.repeats[1].requests.ttft_us[7]", "{e}");
    let mut v = serde_json::to_value(big_run()).unwrap();
    v["notes"] = json!({"itl_us": [[1]]});
    let e = sloscope_core::read_document("big.json", v.to_string().into_bytes()).unwrap_err();
    assert!(
        e.to_string()
            .contains("`itl_us` arrays in the file for 2 repeats")
            || e.path.starts_with("$.notes"),
        "{e}"
    );
}

/// A reader built without the importer (the page's lean reader) refuses every other tool's
/// file with `NoImporter`, naming the file and the tool, and reads sloscope's own files exactly
/// as the full reader does; the full reader imports them.
#[test]
fn a_reader_without_the_importer_says_so_for_every_peer_file() {
    use sloscope_core::input::{importer, read_document_with, Reader};
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/peers");
    let mut seen = 0;
    for dir in std::fs::read_dir(&peers).unwrap().flatten() {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if !f.path().is_file() {
                continue;
            }
            let bytes = std::fs::read(f.path()).unwrap();
            let name = f.file_name().to_string_lossy().into_owned();
            if !matches!(
                read_document_with(&name, bytes.clone(), Some(importer())),
                Ok(sloscope_core::Document::Imported(_))
            ) {
                continue;
            }
            seen += 1;
            let e = read_document_with(&name, bytes.clone(), None).unwrap_err();
            assert_eq!(e.kind, LoadErrorKind::NoImporter, "{e}");
            assert_eq!(e.file, name);
            assert!(e.message.contains("result file"), "{e}");
            let mut r = Reader::with_importer(&name, bytes.len() as u64, None, None);
            r.feed(&bytes).unwrap();
            assert_eq!(r.end().unwrap_err().kind, LoadErrorKind::NoImporter);
        }
    }
    assert!(seen >= 8, "{seen} peer files imported");
    // A collector journal is recovered by the full reader too (the lean one asks for it).
    let journal = crate::semantic::as_journal(&serde_json::to_value(valid_run()).unwrap());
    let e =
        read_document_with("run.journal.jsonl", journal.clone().into_bytes(), None).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::NoImporter, "{e}");
    assert!(e.message.contains("collector journal"), "{}", e.message);
    assert!(matches!(
        read_document_with("run.journal.jsonl", journal.into_bytes(), Some(importer())),
        Ok(sloscope_core::Document::Run(_))
    ));
    let own = serde_json::to_vec(&valid_run()).unwrap();
    assert_eq!(
        read_document_with("run.json", own.clone(), None).unwrap(),
        read_document("run.json", own).unwrap()
    );
}
