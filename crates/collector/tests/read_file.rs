//! `read_file` reads a large run file in chunks: the same document as the whole-file read, and
//! for a broken one the same precise error (file and JSON path).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sloscope_collector::read_file::read_file;
use sloscope_core::schema::EvidenceLevel;
use sloscope_core::{read_document, Document};
use sloscope_testkit::synth::{self, Shape};

fn big_run() -> Vec<u8> {
    let p = synth::profile(
        "throughput",
        "batch",
        8,
        "throughput_tps",
        serde_json::json!({"failure_rate": 0.01}),
    );
    let shape = Shape {
        requests: 40_000,
        repeats: 2,
        output_tokens: 16,
        fail_every: 97,
        seed: 11,
        ..Shape::default()
    };
    let run = synth::run(
        "q4",
        &p,
        "np8",
        8,
        EvidenceLevel::CpuProfileSimulation,
        &shape,
    );
    serde_json::to_vec(&run).unwrap()
}

#[test]
fn a_large_run_read_in_chunks_is_the_whole_file_read() {
    let dir = std::env::temp_dir().join(format!("sloscope-read-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = big_run();
    assert!(
        bytes.len() > 8 << 20,
        "more than one 8 MB chunk: {}",
        bytes.len()
    );
    let path = dir.join("big.json");
    std::fs::write(&path, &bytes).unwrap();
    let chunked = read_file(&path, "big.json").unwrap();
    let whole = read_document("big.json", bytes.clone()).unwrap();
    assert!(matches!(chunked, Document::Run(_)));
    assert_eq!(chunked, whole);

    // A bad gap deep in the file: the error is the whole-file read's, with its JSON path.
    let text = String::from_utf8(bytes).unwrap();
    let at = text.rfind("\"itl_us\":[[").unwrap();
    let bad = format!(
        "{}\"itl_us\":[[1.5{}",
        &text[..at],
        &text[at + "\"itl_us\":[[".len()..]
    );
    let path = dir.join("bad.json");
    std::fs::write(&path, &bad).unwrap();
    let e = read_file(&path, "bad.json").unwrap_err();
    let plain = read_document("bad.json", bad.into_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(e, plain);
    assert!(e.starts_with("bad.json: $.repeats[1]"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
