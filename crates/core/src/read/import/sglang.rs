//! SGLang `bench_serving --output-file` (JSON Lines: one object per run, appended; the Python
//! client and the Rust client `sglang.benchmark.rust_client` write the same keys). With
//! `--output-details` each line also holds per-request `input_lens`, `output_lens`, `ttfts`
//! (s), `itls` (lists of chunk gaps, s) and `errors` (top level, or under `details` in some
//! versions).
//!
//! Definitions mapped: TTFT and the chunk gaps are sloscope's; SGLang keeps no per-request e2e
//! or send time, so e2e is recomputed as TTFT + Σ gaps (to the last token; SGLang's own e2e
//! runs to the end of the stream, a little later), and the requests cannot be placed in time:
//! throughput is computed over SGLang's reported `duration`. SGLang writes no failed count:
//! failures are the requests with an error in the details, and without details `completed` is
//! all that is known. Its Python client counts the *requested* output length when the server
//! sends no `usage` (llama-server sends none unless asked): such counts are labelled
//! `requested`.

use serde_json::Value;

use super::columns::{self, Row};
use super::{arr, count, num, put, Benchmark, Fail};
use crate::schema::{ForeignWorkload, TokenSource};

/// Reads every line (run) of the file.
pub(crate) fn read(bytes: &[u8]) -> Result<Vec<Benchmark>, Fail> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ("$".to_string(), format!("not UTF-8 text: {e}")))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = crate::read::strict::value(line.as_bytes()).map_err(|e| match e.line {
            Some(_) => (
                format!("line {}", n + 1),
                format!("not JSON (a truncated file?): {}", e.message),
            ),
            None => (format!("line {}: {}", n + 1, e.path), e.message),
        })?;
        out.push(run(&v).map_err(|(p, m)| (format!("line {}: {p}", n + 1), m))?);
    }
    Ok(out)
}

fn run(v: &Value) -> Result<Benchmark, Fail> {
    if !v.is_object() {
        return super::fail("$", "expected an object (one SGLang run)");
    }
    let mut b = Benchmark {
        backend: v.get("backend").and_then(Value::as_str).map(str::to_string),
        model: v
            .pointer("/server_info/model_path")
            .or_else(|| v.get("model_id"))
            .or_else(|| v.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string),
        workload: workload(v),
        ..Default::default()
    };
    let quantities = [
        ("ttft", "ttft"),
        ("tpot", "tpot"),
        ("itl", "itl"),
        ("e2e_latency", "e2e"),
    ];
    super::put_serving_summaries(&mut b, v, &quantities);
    let duration = num(v, "duration").filter(|d| *d > 0.0);
    b.reported_window_us = duration.map(|d| (d * 1e6).round() as u64);
    put(&mut b, "duration_s", duration);
    let details = if v.get("ttfts").is_some() {
        Some(v)
    } else {
        v.get("details").filter(|d| d.is_object())
    };
    match details {
        Some(d) => {
            let (mut cols, all_requested) = requests(d, b.workload.max_output_tokens)?;
            let retok = num(v, "total_output_tokens_retokenized");
            let requested =
                all_requested && retok.is_some() && retok != num(v, "total_output_tokens");
            if requested {
                for (src, out) in cols
                    .output_tokens_source
                    .iter_mut()
                    .zip(&cols.output_tokens)
                {
                    *src = out.map(|_| TokenSource::Requested);
                }
            }
            b.workload.requests = Some(cols.len() as u64);
            let failed = cols.error.iter().filter(|e| e.is_some()).count();
            // SGLang's `completed` with the failures its details hold is what it states it
            // sent: held against the records (`stated_counts_match`).
            let stated = num(v, "completed").map_or(cols.len() as f64, |c| c + failed as f64);
            put(&mut b, "requests_sent", Some(stated));
            put(&mut b, "requests_failed", Some(failed as f64));
            b.requests = Some(cols);
            b.send_times_unknown = true;
            b.notes.push("SGLang records no send times: TTFT, TPOT and the chunk gaps are recomputed per request, e2e as TTFT + Σ gaps, and throughput over SGLang's reported duration".into());
            if requested {
                b.notes.push("every output length equals the requested one and SGLang's retokenized count differs: the server sent no usage, so SGLang counted the requested length (labelled `requested`)".into());
            }
        }
        None => {
            b.notes.push("no per-request details (run bench_serving with --output-details to keep them): summaries used as reported; SGLang writes no failed count, so the failure rate is unknown".into());
        }
    }
    Ok(b)
}

fn workload(v: &Value) -> ForeignWorkload {
    let rate = num(v, "request_rate").filter(|r| *r > 0.0);
    let dataset = v.get("dataset_name").and_then(Value::as_str).unwrap_or("?");
    let fixed = num(v, "random_range_ratio").is_some_and(|r| r == 1.0);
    let random = dataset.starts_with("random");
    let mut words = vec![format!("dataset {dataset}")];
    for k in [
        "request_rate",
        "max_concurrency",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
    ] {
        if let Some(x) = v.get(k).filter(|x| !x.is_null()) {
            words.push(format!("{k} {}", columns::short(x)));
        }
    }
    ForeignWorkload {
        concurrency: count(v, "max_concurrency"),
        request_rate_rps: rate,
        // Only a fixed-length random dataset has one prompt and one output length.
        prompt_tokens: count(v, "random_input_len").filter(|_| random && fixed),
        max_output_tokens: count(v, "random_output_len").filter(|_| random && fixed),
        requests: None,
        description: Some(format!("sglang bench_serving: {}", words.join(", "))),
    }
}

/// The per-request rows, and whether every output count equals the requested length.
fn requests(
    d: &Value,
    requested_len: Option<u32>,
) -> Result<(crate::schema::RequestColumns, bool), Fail> {
    let Some(ttfts) = arr(d, "ttfts") else {
        return super::fail("$.ttfts", "expected a list of per-request TTFTs (seconds)");
    };
    let n = ttfts.len();
    for key in ["itls", "output_lens", "input_lens", "errors"] {
        match arr(d, key) {
            Some(a) if a.len() != n => {
                return super::fail(
                    format!("$.{key}"),
                    format!(
                    "{} entries for {n} ttfts: the per-request lists must be as long as each other",
                    a.len()
                ),
                )
            }
            None if key != "input_lens" && key != "errors" => {
                return super::fail(format!("$.{key}"), "expected a per-request list");
            }
            _ => {}
        }
    }
    let itls = arr(d, "itls").map(Vec::as_slice).unwrap_or_default();
    let outs = arr(d, "output_lens").map(Vec::as_slice).unwrap_or_default();
    let ins = arr(d, "input_lens");
    let errs = arr(d, "errors");
    let mut rows = Vec::with_capacity(n);
    let mut all_requested = requested_len.is_some();
    for i in 0..n {
        let error = errs
            .and_then(|e| e.get(i))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let mut row = Row {
            send_us: Some(0.0),
            prompt: columns::tokens(ins.and_then(|x| x.get(i)), &format!("$.input_lens[{i}]"))?,
            error,
            ..Default::default()
        };
        if row.error.is_none() {
            row.ttft_us = columns::micros(ttfts.get(i), 1e6, &format!("$.ttfts[{i}]"))?;
            row.gaps = columns::gaps(itls.get(i), 1e6, &format!("$.itls[{i}]"))?;
            row.output = columns::tokens(outs.get(i), &format!("$.output_lens[{i}]"))?;
            row.e2e_us = row
                .ttft_us
                .map(|t| t + row.gaps.iter().map(|&g| u64::from(g)).sum::<u64>());
            all_requested &= row.output == requested_len;
        }
        rows.push(row);
    }
    for r in &mut rows {
        r.prompt_src = Some(TokenSource::Tokenizer);
    }
    Ok((columns::columns(rows)?, all_requested))
}
