//! vLLM `bench serve --save-result`.

use serde_json::Value;

use crate::schema::RequestColumns;

use super::columns::{self, Row};
use super::{arr, count, num, put, Benchmark, Fail};
use crate::schema::ForeignWorkload;

/// Reads a `vllm bench serve --save-result` JSON (with or without `--save-detailed`).
///
/// vLLM writes summaries in ms and per-request arrays in seconds; `itls` are per-chunk gaps
/// (sloscope's `itl_us`); `latencies` run from send to the last chunk (sloscope's e2e). vLLM's
/// `duration` includes the wait before the first request is sent, so its throughput can be a
/// little lower than the recomputed one. `output_lens` is the server's usage or vLLM's
/// re-tokenization of the text, and `itls` may time a final chunk that carries no token, so a
/// request can have as many gaps as tokens: both are kept as vLLM defines them (TPOT uses
/// `output_lens`, ITL the gaps). Keys are matched by presence, not by version.
pub fn read(v: &Value) -> Result<Benchmark, Fail> {
    if !v.is_object() || (v.get("mean_ttft_ms").is_none() && v.get("ttfts").is_none()) {
        return super::fail(
            "$",
            "not a vLLM --save-result file (expected mean_ttft_ms or ttfts)",
        );
    }
    let mut out = Benchmark {
        model: v
            .get("model_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        backend: v.get("backend").and_then(Value::as_str).map(str::to_string),
        workload: workload(v),
        ..Default::default()
    };
    let quantities = [
        ("ttft", "ttft"),
        ("tpot", "tpot"),
        ("itl", "itl"),
        ("e2el", "e2e"),
    ];
    super::put_serving_summaries(&mut out, v, &quantities);
    put(&mut out, "goodput_rps", num(v, "request_goodput"));
    put(&mut out, "duration_s", num(v, "duration"));
    let completed = num(v, "completed");
    let failed = num(v, "failed");
    if let (Some(c), Some(f)) = (completed, failed) {
        put(&mut out, "requests_sent", Some(c + f));
        put(&mut out, "requests_failed", Some(f));
        if c + f > 0.0 {
            put(&mut out, "failure_rate", Some(f / (c + f)));
        }
    } else {
        out.notes
            .push("no completed/failed counts: failure rate not reported".into());
    }
    if arr(v, "ttfts").is_some() && arr(v, "start_times").is_none() {
        // Without send times the requests cannot be placed in time: a window built from
        // zeros would collapse to the longest request and inflate throughput.
        out.notes.push("per-request arrays without start_times: requests cannot be placed in time, so nothing is recomputed; summaries used as reported".into());
        return Ok(out);
    }
    out.requests = requests(v)?;
    if out.requests.is_none() {
        out.notes.push("no per-request arrays (run vllm bench serve with --save-detailed to keep them): summaries used as reported".into());
    }
    Ok(out)
}

fn workload(v: &Value) -> ForeignWorkload {
    let rate = num(v, "request_rate").filter(|r| *r > 0.0);
    let mut words = Vec::new();
    for k in [
        "dataset_name",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "num_prompts",
    ] {
        if let Some(x) = v.get(k).filter(|x| !x.is_null()) {
            words.push(format!("{k} {}", columns::short(x)));
        }
    }
    ForeignWorkload {
        concurrency: count(v, "max_concurrency"),
        request_rate_rps: rate,
        prompt_tokens: count(v, "random_input_len").or_else(|| count(v, "input_len")),
        max_output_tokens: count(v, "random_output_len").or_else(|| count(v, "output_len")),
        requests: count(v, "num_prompts").map(u64::from),
        description: Some(format!("vllm bench serve: {}", words.join(", "))),
    }
}

fn requests(v: &Value) -> Result<Option<RequestColumns>, Fail> {
    let (Some(ttfts), Some(itls), Some(outs)) =
        (arr(v, "ttfts"), arr(v, "itls"), arr(v, "output_lens"))
    else {
        return Ok(None);
    };
    let n = ttfts.len();
    for key in [
        "itls",
        "output_lens",
        "input_lens",
        "latencies",
        "errors",
        "start_times",
    ] {
        if let Some(a) = arr(v, key) {
            if a.len() != n {
                return super::fail(
                    format!("$.{key}"),
                    format!("{} entries for {n} ttfts: the per-request arrays must be as long as each other", a.len()),
                );
            }
        }
    }
    // `e2els` in some older versions.
    let lat = arr(v, "latencies").or_else(|| arr(v, "e2els"));
    let ins = arr(v, "input_lens");
    let errs = arr(v, "errors");
    let starts = arr(v, "start_times");
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let error = errs
            .and_then(|e| e.get(i))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let send = starts.and_then(|s| s.get(i)).and_then(Value::as_f64);
        if send.is_none_or(|s| !s.is_finite()) {
            return super::fail(format!("$.start_times[{i}]"), "expected a number (seconds)");
        }
        let mut row = Row {
            send_us: send.map(|s| s * 1e6),
            error,
            ..Default::default()
        };
        if row.error.is_none() {
            row.ttft_us = columns::micros(ttfts.get(i), 1e6, &format!("$.ttfts[{i}]"))?;
            row.gaps = columns::gaps(itls.get(i), 1e6, &format!("$.itls[{i}]"))?;
            row.e2e_us = columns::micros(
                lat.and_then(|l| l.get(i)),
                1e6,
                &format!("$.latencies[{i}]"),
            )?;
            row.output = columns::tokens(outs.get(i), &format!("$.output_lens[{i}]"))?;
        }
        row.prompt = columns::tokens(ins.and_then(|x| x.get(i)), &format!("$.input_lens[{i}]"))?;
        rows.push(row);
    }
    Ok(Some(columns::columns(rows)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_bytes(b: &[u8]) -> Result<Benchmark, Fail> {
        read(&serde_json::from_slice(b).unwrap())
    }

    #[test]
    fn reads_summaries_and_detailed_arrays() {
        let text = br#"{"backend":"vllm","completed":2,"failed":1,"duration":1.5,
            "mean_ttft_ms":20.0,"median_ttft_ms":19.0,"p99_ttft_ms":30.0,"mean_tpot_ms":5.0,"p99_itl_ms":9.0,
            "output_throughput":100.0,"request_throughput":1.3,"max_concurrency":4,"request_rate":"inf",
            "ttfts":[0.02,0.018,0.0],"itls":[[0.005,0.005],[0.006],[]],"output_lens":[3,2,0],
            "input_lens":[10,10,10],"latencies":[0.031,0.025,0.0],"errors":["","","HTTP 500"],
            "start_times":[100.0,100.5,101.0]}"#;
        let im = read_bytes(text).unwrap();
        assert_eq!(im.reported["ttft_p50_ms"], Some(19.0));
        assert_eq!(im.reported["itl_p99_ms"], Some(9.0));
        assert!((im.reported["failure_rate"].unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(im.workload.concurrency, Some(4));
        assert_eq!(im.workload.request_rate_rps, None, "inf is not a rate");
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
        let im = read_bytes(text).unwrap();
        assert!(
            im.requests.is_none(),
            "no start_times: no rows to recompute from"
        );
        assert_eq!(im.reported["throughput_tps"], Some(100.0));
        assert!(im.notes.iter().any(|n| n.contains("start_times")));
    }

    #[test]
    fn a_run_where_nothing_completed_has_no_latency_not_zero() {
        let text = br#"{"backend":"vllm","completed":0,"failed":3,"mean_ttft_ms":0.0,
            "median_ttft_ms":0.0,"p99_ttft_ms":0.0,"output_throughput":0.0,"request_throughput":0.0}"#;
        let b = read_bytes(text).unwrap();
        assert!(!b.reported.contains_key("ttft_p50_ms"), "{:?}", b.reported);
        assert_eq!(b.reported["failure_rate"], Some(1.0));
        assert!(b.notes.iter().any(|n| n.contains("no request completed")));
    }

    #[test]
    fn bad_values_are_named_by_path() {
        let text = br#"{"backend":"vllm","completed":1,"failed":0,"mean_ttft_ms":20.0,
            "ttfts":[-0.02],"itls":[[0.005]],"output_lens":[2],"start_times":[1.0]}"#;
        let (path, msg) = read_bytes(text).unwrap_err();
        assert_eq!(path, "$.ttfts[0]");
        assert!(msg.contains("non-negative"), "{msg}");
        let short = br#"{"backend":"vllm","mean_ttft_ms":20.0,
            "ttfts":[0.02,0.03],"itls":[[0.005]],"output_lens":[2,2],"start_times":[1.0,2.0]}"#;
        let (path, _) = read_bytes(short).unwrap_err();
        assert_eq!(path, "$.itls");
    }
}
