//! Other tools' result files, recognised by their keys (never by file name) so that a file
//! given to sloscope by mistake is named as what it is, with what to do instead. The keys are
//! the ones each tool writes (vLLM `bench serve`, SGLang `bench_serving`, AIPerf, GenAI-Perf,
//! GuideLLM, llmperf).

use serde_json::Value;

pub use super::registry::Format;

/// A recognised foreign result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Foreign {
    /// The tool and file, as its users call it.
    pub tool: &'static str,
    /// What to do with it in sloscope.
    pub how: &'static str,
    /// The format.
    pub format: Format,
}

const IMPORT_HOW: &str = "give it to `sloscope analyze` (or drop it on the page) for its \
     summaries, or `sloscope import FILE --out DIR --plan PLAN --profile NAME --candidate NAME` for a verdict";
const GENAI_PERF_HOW: &str = "sloscope has no importer for GenAI-Perf (replaced by AIPerf, whose \
     profile_export.jsonl it imports); run the profile with `sloscope run` against the same \
     server instead";

fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some()
}

/// The tool whose result this JSON value (a whole file, or the first line of JSON Lines) is.
pub fn identify(v: &Value) -> Option<Foreign> {
    let f = |tool, format| {
        Some(Foreign {
            tool,
            how: if format == Format::GenaiPerf {
                GENAI_PERF_HOW
            } else {
                IMPORT_HOW
            },
            format,
        })
    };
    if let Some(first) = v.as_array().and_then(|a| a.first()) {
        if has(first, "ttft_s") && has(first, "end_to_end_latency_s") {
            return f(
                "llmperf *_individual_responses.json",
                Format::LlmperfIndividual,
            );
        }
        return None;
    }
    if !v.is_object() || has(v, "kind") {
        return None;
    }
    if has(v, "mean_e2e_latency_ms")
        || has(v, "total_output_tokens_retokenized")
        || has(v, "server_info")
    {
        return f("SGLang bench_serving --output-file", Format::Sglang);
    }
    if (has(v, "endpoint_type") || has(v, "backend"))
        && (has(v, "mean_ttft_ms") || has(v, "ttfts"))
        && has(v, "request_throughput")
    {
        return f("vLLM bench serve --save-result", Format::Vllm);
    }
    if v.pointer("/time_to_first_token/unit").is_some() {
        if has(v, "was_cancelled") || has(v, "error_summary") || !has(v, "input_config") {
            return f("AIPerf profile_export_aiperf.json", Format::AiperfSummary);
        }
        return f(
            "GenAI-Perf profile_export_genai_perf.json",
            Format::GenaiPerf,
        );
    }
    if v.pointer("/metadata/x_request_id").is_some()
        || (v.pointer("/metadata/benchmark_phase").is_some() && has(v, "metrics"))
    {
        return f("AIPerf profile_export.jsonl", Format::AiperfRecords);
    }
    if v.pointer("/metadata/guidellm_version").is_some()
        || v.get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|b| {
                b.iter()
                    .any(|x| x.get("type_").and_then(Value::as_str) == Some("generative_benchmark"))
            })
    {
        return f("GuideLLM benchmarks.json", Format::GuideLlm);
    }
    if has(v, "results_ttft_s_mean") || has(v, "num_concurrent_requests") {
        return f("llmperf *_summary.json", Format::LlmperfSummary);
    }
    None
}

/// Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity` (SGLang's `"request_rate":
/// Infinity`, an empty series' mean), which JSON has not: outside strings they become `null`
/// (a value that is not a number is unknown). Borrowed when there are none.
pub fn nonfinite_to_null(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memmem::find(bytes, b"NaN").is_none()
        && memchr::memmem::find(bytes, b"Infinity").is_none()
    {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let (mut in_str, mut esc) = (false, false);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_str {
            out.push(c);
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let rest = &bytes[i..];
        let word = [&b"-Infinity"[..], b"Infinity", b"NaN"]
            .into_iter()
            .find(|w| rest.starts_with(w));
        if let Some(w) = word {
            out.extend_from_slice(b"null");
            i += w.len();
            continue;
        }
        if c == b'"' {
            in_str = true;
        }
        out.push(c);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// The foreign tool of a CSV or YAML file, by its first line: AIPerf's summary CSV
/// (`Metric,avg,…`), GuideLLM's CSV (`Run Info,…`) or YAML (`benchmarks:`).
pub fn identify_text(bytes: &[u8]) -> Option<Foreign> {
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim_end();
    let f = |tool, format| {
        Some(Foreign {
            tool,
            how: IMPORT_HOW,
            format,
        })
    };
    if first.starts_with("Metric,avg,") {
        return f("AIPerf profile_export_aiperf.csv", Format::AiperfCsv);
    }
    if first.starts_with("Run Info,") {
        return f("GuideLLM benchmarks.csv", Format::GuideLlmCsv);
    }
    if first == "benchmarks:" || (first == "---" && text.contains("\nbenchmarks:\n")) {
        return f("GuideLLM benchmarks.yaml", Format::GuideLlmYaml);
    }
    None
}

/// What a JSON file another tool writes beside its results is, when it holds no measurement
/// (AIPerf's helper files and warm-up phase summary). Files without any of the keys that
/// mark one are not parsed here.
pub fn aside_bytes(bytes: &[u8]) -> Option<String> {
    let marked = [
        &b"\"ready\""[..],
        b"\"phase_kind\"",
        b"\"payloads\"",
        b"\"warmup\"",
    ]
    .iter()
    .any(|k| memchr::memmem::find(bytes, k).is_some());
    if !marked {
        return None;
    }
    let bytes = nonfinite_to_null(bytes);
    let v = serde_json::from_slice::<Value>(&bytes).ok()?;
    let what = super::aiperf::aside(&v)?;
    // A key given twice: which value counts cannot be told, so it is said, not picked.
    Some(match crate::read::strict::value(&bytes) {
        Ok(_) => what,
        Err(e) => format!(
            "{what}; but a key is given twice, so its flags cannot be read: {} [unique_keys]",
            e.message
        ),
    })
}

/// The foreign tool of a file's bytes: the whole JSON value, or the first line of JSON Lines.
pub fn identify_bytes(bytes: &[u8]) -> Option<Foreign> {
    let bytes = &*nonfinite_to_null(bytes);
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return identify(&v);
    }
    let first = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))?;
    identify(&serde_json::from_slice::<Value>(first).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_is_named_by_its_keys() {
        let cases: [(&[u8], &str); 8] = [
            (br#"{"backend":"vllm","endpoint_type":"openai","mean_ttft_ms":1,"request_throughput":2,"completed":3}"#, "vLLM"),
            (br#"{"backend":"sglang","mean_ttft_ms":1,"request_throughput":2,"mean_e2e_latency_ms":3}"#, "SGLang"),
            (b"{\"server_info\":{},\"mean_ttft_ms\":1}\n{\"server_info\":{}}\n", "SGLang"),
            (br#"{"time_to_first_token":{"unit":"ms","avg":1},"was_cancelled":false}"#, "AIPerf profile_export_aiperf"),
            (b"{\"metadata\":{\"x_request_id\":\"a\"},\"metrics\":{}}\n{\"metadata\":{}}\n", "AIPerf profile_export.jsonl"),
            (br#"{"metadata":{"guidellm_version":"0.4"},"benchmarks":[]}"#, "GuideLLM"),
            (br#"{"results_ttft_s_mean":0.1,"num_concurrent_requests":4}"#, "llmperf *_summary"),
            (br#"[{"ttft_s":0.1,"end_to_end_latency_s":1.0}]"#, "llmperf *_individual"),
        ];
        for (bytes, want) in cases {
            let got = identify_bytes(bytes).map(|f| f.tool).unwrap_or("nothing");
            assert!(got.starts_with(want), "{want}: got {got}");
        }
        assert_eq!(identify_bytes(br#"{"kind":"run"}"#), None);
        let py = br#"{"backend":"vllm","request_rate":Infinity,"mean_e2e_latency_ms":NaN,"tag":"NaN -Infinity"}"#;
        assert_eq!(
            &*nonfinite_to_null(py),
            &br#"{"backend":"vllm","request_rate":null,"mean_e2e_latency_ms":null,"tag":"NaN -Infinity"}"#[..]
        );
        assert!(identify_bytes(py).is_some_and(|f| f.tool.starts_with("SGLang")));
        assert_eq!(identify_bytes(br#"{"a":1}"#), None);
    }
}
