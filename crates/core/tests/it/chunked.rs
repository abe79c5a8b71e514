//! A run file fed in chunks through `GapStream` (how `sloscope analyze` reads a large run, and
//! how the page can stream a dropped file) gives exactly the document the whole-file read gives,
//! however the chunks fall: across the `"itl_us"` key, inside a number, between requests.

use proptest::prelude::*;
use serde_json::json;
use sloscope_core::read::json::assemble_run;
use sloscope_core::schema::{EvidenceLevel, GapStream};
use sloscope_core::{read_document, Document};
use sloscope_testkit::synth::{self, Shape};

fn run_bytes(requests: usize, repeats: usize, seed: u64, pretty: bool) -> Vec<u8> {
    let p = synth::profile(
        "balanced",
        "mixed",
        4,
        "tpot_p95_ms",
        json!({"ttft_p95_ms": 500}),
    );
    let shape = Shape {
        requests,
        repeats,
        output_tokens: 9,
        fail_every: 5,
        seed,
        ..Shape::default()
    };
    let run = synth::run(
        "q4",
        &p,
        "np4",
        4,
        EvidenceLevel::CpuProfileSimulation,
        &shape,
    );
    if pretty {
        serde_json::to_vec_pretty(&run).unwrap()
    } else {
        serde_json::to_vec(&run).unwrap()
    }
}

fn chunked(bytes: &[u8], sizes: &[usize]) -> Result<Document, String> {
    let mut s = GapStream::new();
    let mut i = 0;
    let mut k = 0;
    while i < bytes.len() {
        let n = sizes[k % sizes.len()].max(1).min(bytes.len() - i);
        s.feed(&bytes[i..i + n])?;
        i += n;
        k += 1;
    }
    let (rest, found) = s.finish()?;
    assemble_run("f.json", rest, found).map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_chunking_gives_the_whole_file_read(
        requests in 1usize..40,
        repeats in 1usize..3,
        seed in 0u64..1000,
        pretty in any::<bool>(),
        sizes in proptest::collection::vec(1usize..300, 1..6),
    ) {
        let bytes = run_bytes(requests, repeats, seed, pretty);
        let whole = read_document("f.json", bytes.clone()).unwrap();
        let streamed = chunked(&bytes, &sizes).unwrap();
        prop_assert_eq!(whole, streamed);
    }
}

#[test]
fn the_stream_counts_the_requests_it_has_read() {
    let bytes = run_bytes(25, 2, 3, false);
    let mut s = GapStream::new();
    assert_eq!(s.requests(), 0);
    let half = bytes.len() / 2;
    s.feed(&bytes[..half]).unwrap();
    let midway = s.requests();
    assert!(
        midway > 0 && midway < 50,
        "{midway} of 50 requests half-way"
    );
    s.feed(&bytes[half..]).unwrap();
    assert_eq!(s.requests(), 50);
}

#[test]
fn one_byte_chunks_and_one_chunk_agree() {
    let bytes = run_bytes(25, 2, 3, true);
    let whole = read_document("f.json", bytes.clone()).unwrap();
    assert_eq!(chunked(&bytes, &[1]).unwrap(), whole);
    assert_eq!(chunked(&bytes, &[bytes.len()]).unwrap(), whole);
}

#[test]
fn strings_that_look_like_the_key_are_left_alone() {
    let bytes = run_bytes(6, 1, 1, false);
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["notes"] = json!([
        "\"itl_us\": [[1,2]] inside a note",
        "a quoted key \\\"itl_us\\\": [[3]]",
        "itl_us"
    ]);
    let bytes = serde_json::to_vec(&v).unwrap();
    let whole = read_document("f.json", bytes.clone()).unwrap();
    for sizes in [&[1usize][..], &[7, 3], &[bytes.len()]] {
        assert_eq!(chunked(&bytes, sizes).unwrap(), whole);
    }
}

#[test]
fn bad_or_cut_gap_arrays_are_refused() {
    let bytes = run_bytes(6, 1, 2, false);
    let text = String::from_utf8(bytes.clone()).unwrap();
    let cut = &bytes[..text.find("\"itl_us\"").unwrap() + 20];
    assert!(chunked(cut, &[5]).unwrap_err().contains("truncated"));
    let bad = text.replacen("\"itl_us\":[[", "\"itl_us\":[[-", 1);
    let e = chunked(bad.as_bytes(), &[11]).unwrap_err();
    assert!(e.contains("is not a gap"), "{e}");
}

/// The one reader over an in-memory source, `chunk` bytes a read.
fn read_in_chunks(name: &str, bytes: &[u8], chunk: usize) -> Result<Document, String> {
    let read = |at: u64, buf: &mut [u8]| -> Result<usize, std::convert::Infallible> {
        let at = (at as usize).min(bytes.len());
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        Ok(n)
    };
    let Ok(doc) =
        sloscope_core::read::reader::read_with(name, bytes.len() as u64, None, chunk, read);
    doc.map_err(|e| e.to_string())
}

/// The reader streams a large run in chunks and gives the whole-file read's document; for a
/// broken one it starts again whole and gives the whole-file read's precise error.
#[test]
fn the_reader_streams_a_large_run_and_errs_as_the_whole_read_does() {
    let bytes = run_bytes(30_000, 2, 11, false);
    assert!(bytes.len() > 2 << 20, "{}", bytes.len());
    let chunked = read_in_chunks("big.json", &bytes, 1 << 20).unwrap();
    let whole = read_document("big.json", bytes.clone()).unwrap();
    assert!(matches!(chunked, Document::Run(_)));
    assert_eq!(chunked, whole);
    let text = String::from_utf8(bytes).unwrap();
    let at = text.rfind("\"itl_us\":[[").unwrap();
    let bad = format!(
        "{}\"itl_us\":[[1.5{}",
        &text[..at],
        &text[at + "\"itl_us\":[[".len()..]
    );
    let e = read_in_chunks("bad.json", bad.as_bytes(), 1 << 20).unwrap_err();
    let plain = read_document("bad.json", bad.into_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(e, plain);
    assert!(e.starts_with("bad.json: $.repeats[1]"), "{e}");
    // Cut short: refused, never a partial document.
    let cut = &text.as_bytes()[..text.len() / 2];
    assert!(read_in_chunks("cut.json", cut, 1 << 20).is_err());
}
