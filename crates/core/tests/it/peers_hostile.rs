//! Hostile versions of other tools' real result files (tests/fixtures/peers): cut, keys renamed,
//! values of the wrong type or unit. Read or refused with the file and path, never a panic.

use sloscope_core::{analyze, read_document, Document, LoadedFile};

use crate::peers::fixture;

const ALL: [&str; 14] = [
    "vllm/save-detailed.json",
    "vllm/save-result.json",
    "sglang/python-output-details.jsonl",
    "sglang/rust-output-details.jsonl",
    "sglang/python-two-runs.jsonl",
    "guidellm/benchmarks.json",
    "aiperf/profile_export.jsonl",
    "aiperf/profile_export_aiperf.json",
    "aiperf/profile_export_aiperf.csv",
    "llmperf/smollm2-q4_64_32_individual_responses.json",
    "llmperf/smollm2-q4_64_32_summary.json",
    "guidellm/small-benchmarks.yaml",
    "guidellm/small-benchmarks.csv",
    "guidellm/small-benchmarks.json",
];

/// Hostile versions of every real file: cut anywhere, each top-level key (or each line's key)
/// removed, values replaced by strings, negatives or NaN. Each must be read or refused with the
/// file's name, never panic, and never turn a latency it cannot read into a 0.
#[test]
fn mutated_peer_files_are_read_or_refused_never_panic() {
    let mut refused = 0;
    let mut read = 0;
    for rel in ALL {
        let (name, bytes) = fixture(rel);
        let mut variants: Vec<Vec<u8>> = Vec::new();
        for k in 1..12 {
            variants.push(bytes[..bytes.len() * k / 12].to_vec());
        }
        let text = String::from_utf8_lossy(&bytes).to_string();
        let mut keys: Vec<String> = Vec::new();
        for line in text.lines().take(2) {
            if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(line) {
                keys.extend(o.keys().cloned());
            }
        }
        if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(&text) {
            keys.extend(o.keys().cloned());
        }
        keys.sort();
        keys.dedup();
        for key in &keys {
            let quoted = format!("\"{key}\"");
            for (with, what) in [
                (format!("\"{key}_gone\""), "renamed"),
                (quoted.clone(), "string"),
                (quoted.clone(), "negative"),
                (quoted.clone(), "nan"),
            ] {
                let mut out = String::with_capacity(text.len());
                let mut rest = text.as_str();
                while let Some(i) = rest.find(&quoted) {
                    out.push_str(&rest[..i]);
                    out.push_str(&with);
                    rest = &rest[i + quoted.len()..];
                    if what != "renamed" {
                        // replace the value's first number
                        let j = rest
                            .find(|c: char| c.is_ascii_digit())
                            .unwrap_or(rest.len());
                        let end = rest[j..]
                            .find(|c: char| {
                                !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-')
                            })
                            .map_or(rest.len(), |e| j + e);
                        if j < rest.len() && rest[..j].chars().all(|c| " :[".contains(c)) {
                            out.push_str(&rest[..j]);
                            out.push_str(match what {
                                "string" => "\"x\"",
                                "negative" => "-1",
                                _ => "NaN",
                            });
                            rest = &rest[end..];
                        }
                    }
                }
                out.push_str(rest);
                variants.push(out.into_bytes());
            }
        }
        for v in variants {
            match read_document(&name, v) {
                Err(e) => {
                    assert_eq!(e.file, name);
                    assert!(!e.message.is_empty());
                    refused += 1;
                }
                Ok(doc) => {
                    read += 1;
                    if let Document::Imported(runs) = &doc {
                        for (_, r) in runs {
                            for rep in &r.repeats {
                                for (i, t) in rep.requests.ttft_us.iter().enumerate() {
                                    if rep.requests.error[i].is_none() {
                                        assert!(
                                            t.is_some(),
                                            "{rel}: a successful request without TTFT"
                                        );
                                    }
                                }
                            }
                        }
                        let _ = analyze(&[LoadedFile {
                            name: name.clone(),
                            doc,
                        }]);
                    }
                }
            }
        }
    }
    assert!(refused > 50 && read > 50, "refused {refused}, read {read}");
}

/// Per-request values written in another unit (ms where the tool writes s) are refused by name,
/// not recomputed into TTFTs a thousand times too long.
#[test]
fn per_request_values_in_the_wrong_unit_are_refused() {
    let (name, bytes) = fixture("vllm/save-detailed.json");
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    for t in v["ttfts"].as_array_mut().unwrap() {
        *t = serde_json::json!(t.as_f64().unwrap() * 1000.0);
    }
    let e = read_document(&name, serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert!(e.message.contains("another unit"), "{e}");
    let (name, bytes) = fixture("sglang/rust-output-details.jsonl");
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    for t in v["ttfts"].as_array_mut().unwrap() {
        *t = serde_json::json!(t.as_f64().unwrap() / 1000.0);
    }
    let e = read_document(&name, serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert!(e.message.contains("1000 times smaller"), "{e}");
}
