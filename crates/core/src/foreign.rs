//! Other tools' result files, recognised by their keys (never by file name) so that a file
//! given to sloscope by mistake is named as what it is, with what to do instead. The keys are
//! the ones each tool writes (vLLM `bench serve`, SGLang `bench_serving`, AIPerf, GenAI-Perf,
//! GuideLLM, llmperf).

use serde_json::Value;

/// A recognised foreign result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Foreign {
    /// The tool and file, as its users call it.
    pub tool: &'static str,
    /// What to do with it in sloscope today.
    pub how: &'static str,
}

const VLLM_HOW: &str = "import it into a plan's profile with `sloscope run --plan P --out DIR \
     --profiles NAME --command-template true --result-template FILE` (the vLLM importer \
     recomputes from --save-detailed arrays)";
const NOT_YET: &str = "sloscope has no importer for it yet; run the profile with `sloscope run` \
     against the same server instead";

fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some()
}

/// The tool whose result this JSON value (a whole file, or the first line of JSON Lines) is.
pub fn identify(v: &Value) -> Option<Foreign> {
    let f = |tool, how| Some(Foreign { tool, how });
    if let Some(first) = v.as_array().and_then(|a| a.first()) {
        if has(first, "ttft_s") && has(first, "end_to_end_latency_s") {
            return f("llmperf *_individual_responses.json", NOT_YET);
        }
        return identify(first).filter(|x| x.tool.starts_with("vLLM"));
    }
    if !v.is_object() || has(v, "kind") {
        return None;
    }
    if has(v, "mean_e2e_latency_ms")
        || has(v, "total_output_tokens_retokenized")
        || has(v, "server_info")
    {
        return f("SGLang bench_serving --output-file", NOT_YET);
    }
    if (has(v, "endpoint_type") || has(v, "backend"))
        && has(v, "mean_ttft_ms")
        && has(v, "request_throughput")
    {
        return f("vLLM bench serve --save-result", VLLM_HOW);
    }
    if v.pointer("/time_to_first_token/unit").is_some() {
        if has(v, "input_config") {
            return f("GenAI-Perf profile_export_genai_perf.json", NOT_YET);
        }
        return f("AIPerf profile_export_aiperf.json", NOT_YET);
    }
    if v.pointer("/metadata/x_request_id").is_some() && has(v, "metrics") {
        return f("AIPerf profile_export.jsonl", NOT_YET);
    }
    if v.pointer("/metadata/guidellm_version").is_some()
        || v.get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|b| {
                b.iter()
                    .any(|x| x.get("type_").and_then(Value::as_str) == Some("generative_benchmark"))
            })
    {
        return f("GuideLLM benchmarks.json", NOT_YET);
    }
    if has(v, "results_ttft_s_mean") || has(v, "num_concurrent_requests") {
        return f("llmperf *_summary.json", NOT_YET);
    }
    None
}

/// The foreign tool of a file's bytes: the whole JSON value, or the first line of JSON Lines.
pub fn identify_bytes(bytes: &[u8]) -> Option<Foreign> {
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
        assert_eq!(identify_bytes(br#"{"a":1}"#), None);
    }
}
