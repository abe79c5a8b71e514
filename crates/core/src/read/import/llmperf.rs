//! llmperf (`token_benchmark_ray.py`): `*_individual_responses.json` (a list of per-request
//! dicts, seconds) and `*_summary.json` (flattened with `_`: `results_ttft_s_quantiles_p50`).
//!
//! Definitions mapped: `ttft_s` and `end_to_end_latency_s` are sloscope's TTFT and e2e;
//! `number_output_tokens` is llmperf's tokenizer count of the generated text (source
//! `tokenizer`); `inter_token_latency_s` is the sum of all gaps *including TTFT* divided by the
//! output tokens, so it is neither TPOT nor a chunk gap: it is not taken over (TPOT is
//! recomputed as (e2e − TTFT)/(out − 1)). The individual file records no send times and no
//! chunk gaps: throughput comes only from the summary (its `num_completed_requests_per_min`
//! gives the window), chunk gaps stay unknown.

use serde_json::Value;

use super::columns::{self, Row};
use super::{count, num, put, Benchmark, Fail};
use crate::schema::{ForeignWorkload, TokenSource};

/// Reads `*_individual_responses.json`.
pub(crate) fn individual(v: &Value) -> Result<Benchmark, Fail> {
    let Some(list) = v.as_array() else {
        return super::fail("$", "expected a list of per-request objects");
    };
    let mut rows = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let p = |k: &str| format!("$[{i}].{k}");
        if !r.is_object() {
            return super::fail(format!("$[{i}]"), "expected an object (one request)");
        }
        let code = r.get("error_code").filter(|c| !c.is_null());
        let msg = r
            .get("error_msg")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty());
        let error = match (code, msg) {
            (None, None) => None,
            (c, m) => Some(format!(
                "llmperf error{}{}",
                c.map(|c| format!(" {c}")).unwrap_or_default(),
                m.map(|m| format!(": {m}")).unwrap_or_default()
            )),
        };
        let mut row = Row {
            prompt: columns::tokens(r.get("number_input_tokens"), &p("number_input_tokens"))?,
            prompt_src: Some(TokenSource::Tokenizer),
            error,
            ..Default::default()
        };
        if row.error.is_none() {
            row.ttft_us = columns::micros(r.get("ttft_s"), 1e6, &p("ttft_s"))?;
            row.e2e_us = columns::micros(
                r.get("end_to_end_latency_s"),
                1e6,
                &p("end_to_end_latency_s"),
            )?;
            row.output =
                columns::tokens(r.get("number_output_tokens"), &p("number_output_tokens"))?;
            row.output_src = Some(TokenSource::Tokenizer);
            if row.ttft_us.is_none() || row.e2e_us.is_none() || row.output.is_none() {
                return super::fail(
                    format!("$[{i}]"),
                    "a request without error_code needs ttft_s, end_to_end_latency_s and number_output_tokens",
                );
            }
        }
        rows.push(row);
    }
    let n = rows.len() as u64;
    Ok(Benchmark {
        requests: Some(columns::columns(rows)?),
        workload: ForeignWorkload {
            requests: Some(n),
            description: Some("llmperf individual responses (the workload is in its _summary.json)".into()),
            ..Default::default()
        },
        send_times_unknown: true,
        notes: vec![
            "llmperf's individual responses record no send times and no chunk gaps: TTFT, TPOT and e2e are recomputed, throughput needs its _summary.json, ITL stays unknown".into(),
            "llmperf's inter_token_latency_s includes TTFT (sum of gaps / output tokens): not taken over; TPOT recomputed as (e2e − TTFT)/(out − 1)".into(),
        ],
        ..Default::default()
    })
}

/// Reads `*_summary.json`: summaries only.
pub(crate) fn summary(v: &Value) -> Result<(Option<String>, Vec<Benchmark>), Fail> {
    if !v.is_object() {
        return super::fail("$", "expected an object (llmperf summary)");
    }
    let mut b = Benchmark {
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        ..Default::default()
    };
    for (theirs, ours) in [("ttft_s", "ttft"), ("end_to_end_latency_s", "e2e")] {
        let ms = |k: String| num(v, &k).map(|s| s * 1000.0);
        put(
            &mut b,
            &format!("{ours}_mean_ms"),
            ms(format!("results_{theirs}_mean")),
        );
        for q in ["50", "90", "95", "99"] {
            put(
                &mut b,
                &format!("{ours}_p{q}_ms"),
                ms(format!("results_{theirs}_quantiles_p{q}")),
            );
        }
    }
    put(
        &mut b,
        "throughput_tps",
        num(v, "results_mean_output_throughput_token_per_s"),
    );
    let completed = num(v, "results_num_completed_requests");
    let per_min = num(v, "results_num_completed_requests_per_min");
    if let (Some(c), Some(m)) = (completed, per_min) {
        put(&mut b, "request_throughput_rps", Some(m / 60.0));
        if m > 0.0 {
            b.reported_window_us = Some((c / m * 60.0 * 1e6).round() as u64);
        }
    }
    let started = num(v, "results_num_requests_started");
    let errors = num(v, "results_number_errors");
    put(&mut b, "requests_sent", started);
    put(&mut b, "requests_failed", errors);
    put(&mut b, "failure_rate", num(v, "results_error_rate"));
    let mean_in = num(v, "mean_input_tokens");
    let sd_in = num(v, "stddev_input_tokens");
    let mean_out = num(v, "mean_output_tokens");
    let sd_out = num(v, "stddev_output_tokens");
    let fixed = |m: Option<f64>, sd: Option<f64>| {
        m.filter(|_| sd == Some(0.0))
            .filter(|m| m.fract() == 0.0 && *m >= 0.0)
            .map(|m| m as u32)
    };
    b.workload = ForeignWorkload {
        concurrency: count(v, "num_concurrent_requests"),
        request_rate_rps: None,
        prompt_tokens: fixed(mean_in, sd_in),
        max_output_tokens: fixed(mean_out, sd_out),
        requests: started.map(|s| s as u64),
        description: Some(format!(
            "llmperf: closed loop, {} streams, input tokens mean {} sd {}, output tokens mean {} sd {}",
            count(v, "num_concurrent_requests").map_or("?".into(), |c| c.to_string()),
            mean_in.map_or("?".into(), |x| x.to_string()),
            sd_in.map_or("?".into(), |x| x.to_string()),
            mean_out.map_or("?".into(), |x| x.to_string()),
            sd_out.map_or("?".into(), |x| x.to_string()),
        )),
    };
    b.notes.push("llmperf summary without per-request data: summaries used as reported (give the _individual_responses.json too for recomputed latencies)".into());
    let version = v
        .get("version")
        .and_then(Value::as_str)
        .map(|s| format!("results {s}"));
    Ok((version, vec![b]))
}
