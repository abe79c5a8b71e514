//! Importers of other tools' result files. Raw per-request data is kept where the file has it
//! (so the summaries are recomputed like any run); the tool's own summaries are kept as
//! `reported` and compared.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::schema::{Gaps, RequestColumns};

/// What an importer recovered from a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// Per-request data, when the file carries it.
    pub requests: Option<RequestColumns>,
    /// The tool's summaries under sloscope's metric names.
    pub reported: BTreeMap<String, Option<f64>>,
    /// The tool's name for the format, e.g. `vllm bench serve --save-result`.
    pub format: &'static str,
    /// Notes on what could not be taken over.
    pub notes: Vec<String>,
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// Reads a `vllm bench serve --save-result` JSON (with or without `--save-detailed`).
///
/// vLLM writes summaries in ms and per-request arrays in seconds; `itls` are per-chunk gaps.
/// Keys are matched by presence, not by version.
pub fn vllm(file: &str, bytes: &[u8]) -> Result<Imported, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("{file}: $: not JSON: {e}"))?;
    if !v.is_object() || (v.get("mean_ttft_ms").is_none() && v.get("ttfts").is_none()) {
        return Err(format!(
            "{file}: $: not a vLLM --save-result file (expected mean_ttft_ms or ttfts)"
        ));
    }
    // Other tools share some of vLLM's keys (SGLang's bench_serving writes mean_ttft_ms too):
    // a file recognised as another tool's is not read as vLLM's.
    if let Some(f) = crate::foreign::identify(&v).filter(|f| !f.tool.starts_with("vLLM")) {
        return Err(format!(
            "{file}: $: this is {}'s result file, not a vLLM --save-result file",
            f.tool
        ));
    }
    let mut out = Imported {
        format: "vllm bench serve --save-result",
        ..Default::default()
    };
    let quantities = [
        ("ttft", "ttft"),
        ("tpot", "tpot"),
        ("itl", "itl"),
        ("e2el", "e2e"),
    ];
    for (theirs, ours) in quantities {
        if let Some(x) = num(&v, &format!("mean_{theirs}_ms")) {
            out.reported.insert(format!("{ours}_mean_ms"), Some(x));
        }
        if let Some(x) = num(&v, &format!("median_{theirs}_ms")) {
            out.reported.insert(format!("{ours}_p50_ms"), Some(x));
        }
        for p in ["90", "95", "99"] {
            if let Some(x) = num(&v, &format!("p{p}_{theirs}_ms")) {
                out.reported.insert(format!("{ours}_p{p}_ms"), Some(x));
            }
        }
    }
    if let Some(x) = num(&v, "output_throughput") {
        out.reported.insert("throughput_tps".into(), Some(x));
    }
    if let Some(x) = num(&v, "request_throughput") {
        out.reported
            .insert("request_throughput_rps".into(), Some(x));
    }
    if let Some(x) = num(&v, "request_goodput") {
        out.reported.insert("goodput_rps".into(), Some(x));
    }
    let completed = num(&v, "completed");
    let failed = num(&v, "failed");
    if let (Some(c), Some(f)) = (completed, failed) {
        out.reported.insert("requests_sent".into(), Some(c + f));
        out.reported.insert("requests_failed".into(), Some(f));
        if c + f > 0.0 {
            out.reported
                .insert("failure_rate".into(), Some(f / (c + f)));
        }
    } else {
        out.notes
            .push("no completed/failed counts: failure rate not reported".into());
    }
    if arr(&v, "ttfts").is_some() && arr(&v, "start_times").is_none() {
        // Without send times the requests cannot be placed in time: a window built from
        // zeros would collapse to the longest request and inflate throughput.
        out.notes.push("per-request arrays without start_times: requests cannot be placed in time, so nothing is recomputed; summaries used as reported".into());
        return Ok(out);
    }
    out.requests = vllm_requests(&v)?;
    if out.requests.is_none() {
        out.notes.push("no per-request arrays (run vllm bench serve with --save-detailed to keep them): summaries used as reported".into());
    }
    Ok(out)
}

fn arr<'a>(v: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    v.get(key).and_then(Value::as_array)
}

fn vllm_requests(v: &Value) -> Result<Option<RequestColumns>, String> {
    let (Some(ttfts), Some(itls), Some(outs)) =
        (arr(v, "ttfts"), arr(v, "itls"), arr(v, "output_lens"))
    else {
        return Ok(None);
    };
    let n = ttfts.len();
    if itls.len() != n || outs.len() != n {
        return Err(format!(
            "$.itls/$.output_lens: {} and {} entries for {n} ttfts",
            itls.len(),
            outs.len()
        ));
    }
    let us = |s: f64| (s * 1e6).round().max(0.0) as u64;
    let lat = arr(v, "latencies").or_else(|| arr(v, "e2els"));
    let ins = arr(v, "input_lens");
    let errs = arr(v, "errors");
    let starts = arr(v, "start_times");
    let mut c = RequestColumns::default();
    let mut gaps = Gaps::new();
    let t0 = starts
        .and_then(|s| s.iter().filter_map(Value::as_f64).reduce(f64::min))
        .unwrap_or(0.0);
    let mut order: Vec<usize> = (0..n).collect();
    if let Some(s) = starts {
        order.sort_by(|&a, &b| {
            s.get(a)
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .total_cmp(&s.get(b).and_then(Value::as_f64).unwrap_or(0.0))
        });
    }
    for i in order {
        let err = errs
            .and_then(|e| e.get(i))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let ttft = ttfts[i].as_f64().filter(|x| *x > 0.0 || err.is_none());
        let g: Vec<u32> = itls[i]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_f64)
                    .map(|s| us(s).min(u32::MAX as u64) as u32)
                    .collect()
            })
            .unwrap_or_default();
        let e2e = lat
            .and_then(|l| l.get(i))
            .and_then(Value::as_f64)
            .map(us)
            .or_else(|| ttft.map(|t| us(t) + g.iter().map(|&x| x as u64).sum::<u64>()));
        let start = starts
            .and_then(|s| s.get(i))
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("$.start_times[{i}]: expected a number (seconds)"))?;
        c.send_offset_us.push(us(start - t0));
        c.ttft_us
            .push(if err.is_some() { None } else { ttft.map(us) });
        c.e2e_us.push(if err.is_some() { None } else { e2e });
        c.prompt_tokens.push(
            ins.and_then(|x| x.get(i))
                .and_then(Value::as_u64)
                .map(|x| x as u32),
        );
        c.prompt_tokens_source.push(None);
        c.output_tokens.push(if err.is_some() {
            None
        } else {
            outs[i].as_u64().map(|x| x as u32)
        });
        c.output_tokens_source.push(None);
        c.server_queue_us.push(None);
        c.error.push(err.clone());
        gaps.push(if err.is_some() { &[] } else { &g });
    }
    c.itl_us = gaps;
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_summaries_and_detailed_arrays() {
        let text = br#"{"backend":"vllm","completed":2,"failed":1,"duration":1.5,
            "mean_ttft_ms":20.0,"median_ttft_ms":19.0,"p99_ttft_ms":30.0,"mean_tpot_ms":5.0,"p99_itl_ms":9.0,
            "output_throughput":100.0,"request_throughput":1.3,
            "ttfts":[0.02,0.018,0.0],"itls":[[0.005,0.005],[0.006],[]],"output_lens":[3,2,0],
            "input_lens":[10,10,10],"latencies":[0.031,0.025,0.0],"errors":["","","HTTP 500"],
            "start_times":[100.0,100.5,101.0]}"#;
        let im = vllm("r.json", text).unwrap();
        assert_eq!(im.reported["ttft_p50_ms"], Some(19.0));
        assert_eq!(im.reported["itl_p99_ms"], Some(9.0));
        assert!((im.reported["failure_rate"].unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let r = im.requests.unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r.send_offset_us, vec![0, 500_000, 1_000_000]);
        assert_eq!(r.ttft_us, vec![Some(20_000), Some(18_000), None]);
        assert_eq!(r.itl_us.get(0), &[5000, 5000]);
        assert_eq!(r.error[2].as_deref(), Some("HTTP 500"));
    }

    #[test]
    fn never_recomputes_from_requests_it_cannot_place_in_time() {
        let text = br#"{"backend":"vllm","completed":2,"failed":0,"mean_ttft_ms":20.0,
            "output_throughput":100.0,"request_throughput":1.3,
            "ttfts":[0.02,0.018],"itls":[[0.005],[0.006]],"output_lens":[2,2]}"#;
        let im = vllm("r.json", text).unwrap();
        assert!(
            im.requests.is_none(),
            "no start_times: no rows to recompute from"
        );
        assert_eq!(im.reported["throughput_tps"], Some(100.0));
        assert!(im.notes.iter().any(|n| n.contains("start_times")));
        let sglang = br#"{"backend":"sglang","mean_ttft_ms":1.0,"request_throughput":2.0,"mean_e2e_latency_ms":3.0}"#;
        let e = vllm("s.jsonl", sglang).unwrap_err();
        assert!(e.contains("SGLang"), "{e}");
    }

    #[test]
    fn refuses_other_files_by_name() {
        let e = vllm("x.json", br#"{"kind":"run"}"#).unwrap_err();
        assert!(
            e.contains("x.json: $: not a vLLM --save-result file"),
            "{e}"
        );
    }
}
