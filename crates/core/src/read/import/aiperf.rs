//! AIPerf (`aiperf profile`): `profile_export.jsonl` (one record per request: `metadata` with
//! `request_start_ns`, `benchmark_phase`, `was_cancelled`; `metrics` as `{value, unit}` in
//! display units; `error`) and `profile_export_aiperf.json` (summaries `{unit, avg, p50, …}`,
//! `input_config`, `aiperf_version`).
//!
//! Definitions mapped: `time_to_first_token` and `request_latency` are sloscope's TTFT and e2e;
//! `inter_chunk_latency` is the chunk-gap list (sloscope's `itl_us`); AIPerf's
//! `inter_token_latency` = (e2e − TTFT)/(OSL − 1) is sloscope's TPOT. Token counts: the
//! server's usage (`usage_completion_tokens`) when present, else AIPerf's tokenizer count
//! (`output_sequence_length`); AIPerf's own TPOT divides by its tokenizer count, so it differs
//! where that re-tokenization disagrees with the server. Warm-up records (`benchmark_phase` other than `profiling`) are
//! left out; cancelled requests count as failed. Units are read from each `unit`.

use serde_json::Value;

use super::columns::{self, Row};
use super::{count, num, put, Benchmark, Fail};
use crate::schema::{ForeignWorkload, TokenSource};

/// Factor from an AIPerf time unit to milliseconds.
fn to_ms(unit: &str) -> Option<f64> {
    match unit {
        "ms" => Some(1.0),
        "us" | "µs" => Some(1e-3),
        "ns" => Some(1e-6),
        "s" | "sec" => Some(1e3),
        _ => None,
    }
}

/// What a file of an AIPerf artifact directory that holds no measurement of its own is:
/// the results-ready marker, the phase manifest, `inputs.json` (the bodies sent), or the
/// summary of a phase other than profiling (`phases/warmup/profile_export_aiperf.json`).
pub(crate) fn aside(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    if let Some(said) = marker(o) {
        return Some(format!(
            "AIPerf's results-ready marker (.aiperf_results_ready.json), no measurement{said}"
        ));
    }
    let first = |k: &str| o.get(k).and_then(Value::as_array).and_then(|a| a.first());
    if first("phases").is_some_and(|p| p.get("phase_kind").is_some()) {
        return Some(
            "AIPerf's phase manifest (phase_manifest.json): which phase wrote which summary, no measurement"
                .into(),
        );
    }
    if first("data").is_some_and(|d| d.get("payloads").is_some()) {
        return Some("AIPerf's inputs.json: the request bodies it sent, no measurement".into());
    }
    match summary_phase(v) {
        Some(phase) if phase != "profiling" => Some(format!(
            "AIPerf's {phase} phase summary: not the measured (profiling) phase, whose summary and records are the run"
        )),
        _ => None,
    }
}

/// What AIPerf's results-ready marker says beyond "ready" (`None` when the object is not
/// one: a `ready` key, a few flat values, no results). Every flag that is not a plain "all
/// well" is said, a value that is not true or false included.
fn marker(o: &serde_json::Map<String, Value>) -> Option<String> {
    let flat = o.values().all(|v| !v.is_object() && !v.is_array());
    if !o.contains_key("ready") || o.len() > 8 || !flat {
        return None;
    }
    let mut said = Vec::new();
    match o.get("ready") {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => said.push("it says the results are not ready".to_string()),
        Some(v) => said.push(format!("its `ready` is {v}, not true or false")),
        None => {}
    }
    for (k, what) in [
        ("was_cancelled", "the run was cancelled"),
        ("partial", "the results are partial"),
    ] {
        match o.get(k) {
            Some(Value::Bool(true)) => said.push(format!("it says {what}")),
            Some(Value::Bool(false)) | None => {}
            Some(v) => said.push(format!("its `{k}` is {v}, not true or false")),
        }
    }
    Some(said.iter().map(|s| format!("; {s}")).collect())
}

/// The phase an AIPerf summary describes, by its request count against the phases of its
/// `input_config` (the top-level summary, which carries `warmup_metrics`, is profiling);
/// `None` when it cannot be told (phases by duration, equal counts, a cancelled run).
fn summary_phase(v: &Value) -> Option<&str> {
    v.pointer("/time_to_first_token/unit")?;
    if v.get("warmup_metrics").is_some() {
        return Some("profiling");
    }
    let ok = v.get("request_count").and_then(|m| num(m, "avg"))?;
    let failed = v
        .get("error_request_count")
        .and_then(|m| num(m, "avg"))
        .unwrap_or(0.0);
    let phases = v.pointer("/input_config/phases")?.as_array()?;
    let mut matching = phases
        .iter()
        .filter(|p| num(p, "requests") == Some(ok + failed))
        .filter_map(|p| p.get("kind").and_then(Value::as_str));
    let phase = matching.next()?;
    matching.next().is_none().then_some(phase)
}

/// Reads `profile_export_aiperf.json`.
pub(crate) fn summary(v: &Value) -> Result<(Option<String>, Benchmark), Fail> {
    if !v.is_object() {
        return super::fail("$", "expected an object (AIPerf summary)");
    }
    let mut b = Benchmark {
        model: v
            .pointer("/input_config/models/items/0/name")
            .and_then(Value::as_str)
            .map(str::to_string),
        workload: workload(v.get("input_config")),
        ..Default::default()
    };
    for (theirs, ours) in [
        ("time_to_first_token", "ttft"),
        ("inter_token_latency", "tpot"),
        ("inter_chunk_latency", "itl"),
        ("request_latency", "e2e"),
    ] {
        let Some(m) = v.get(theirs) else { continue };
        let unit = m.get("unit").and_then(Value::as_str).unwrap_or("");
        let Some(f) = to_ms(unit) else {
            return super::fail(
                format!("$.{theirs}.unit"),
                format!("expected a time unit (ms, us, ns, s), found {unit:?}"),
            );
        };
        put(
            &mut b,
            &format!("{ours}_mean_ms"),
            num(m, "avg").map(|x| x * f),
        );
        for p in ["50", "90", "95", "99"] {
            put(
                &mut b,
                &format!("{ours}_p{p}_ms"),
                num(m, &format!("p{p}")).map(|x| x * f),
            );
        }
    }
    let avg = |k: &str| v.get(k).and_then(|m| num(m, "avg"));
    put(&mut b, "throughput_tps", avg("output_token_throughput"));
    put(&mut b, "request_throughput_rps", avg("request_throughput"));
    if let Some(ok) = avg("request_count") {
        let failed = avg("error_request_count").unwrap_or(0.0);
        put(&mut b, "requests_sent", Some(ok + failed));
        put(&mut b, "requests_failed", Some(failed));
        if ok + failed > 0.0 {
            put(&mut b, "failure_rate", Some(failed / (ok + failed)));
        }
    }
    if v.get("was_cancelled").and_then(Value::as_bool) == Some(true) {
        b.notes
            .push("AIPerf says the benchmark was cancelled before it finished".into());
    }
    b.notes.push("AIPerf summary without per-request records: summaries used as reported (give its profile_export.jsonl for recomputed figures)".into());
    let version = v
        .get("aiperf_version")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((version, b))
}

fn workload(cfg: Option<&Value>) -> ForeignWorkload {
    let Some(cfg) = cfg else {
        return ForeignWorkload::default();
    };
    let phase = cfg.get("phases").and_then(Value::as_array).and_then(|p| {
        p.iter()
            .find(|x| x.get("kind").and_then(Value::as_str) == Some("profiling"))
    });
    let prompts = cfg.pointer("/datasets/0/prompts");
    let fixed = |k: &str| {
        let d = prompts?.get(k)?;
        let spread = d
            .get("stddev")
            .and_then(Value::as_f64)
            .is_some_and(|s| s > 0.0);
        let m = num(d, "mean")?;
        (!spread && m.fract() == 0.0 && m >= 0.0).then_some(m as u32)
    };
    ForeignWorkload {
        concurrency: phase.and_then(|p| count(p, "concurrency")),
        request_rate_rps: phase
            .and_then(|p| num(p, "request_rate").or_else(|| num(p, "rate")))
            .filter(|r| *r > 0.0),
        prompt_tokens: fixed("isl"),
        max_output_tokens: fixed("osl"),
        requests: phase.and_then(|p| count(p, "requests")).map(u64::from),
        description: Some(format!(
            "aiperf: phase {}, dataset {}",
            phase.map_or("?".into(), columns::whole),
            cfg.pointer("/datasets/0")
                .map_or("?".into(), columns::whole)
        )),
    }
}

/// Reads `profile_export.jsonl`.
pub(crate) fn records(bytes: &[u8]) -> Result<Benchmark, Fail> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ("$".to_string(), format!("not UTF-8 text: {e}")))?;
    let mut rows = Vec::new();
    let mut warmup = 0usize;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |p: &str| format!("line {}: {p}", n + 1);
        let v: Value = crate::read::strict::value(line.as_bytes()).map_err(|e| match e.line {
            Some(_) => (
                at("$"),
                format!("not JSON (a truncated file?): {}", e.message),
            ),
            None => (at(&e.path), e.message),
        })?;
        let phase = v
            .pointer("/metadata/benchmark_phase")
            .and_then(Value::as_str);
        if phase.is_some_and(|p| p != "profiling") {
            warmup += 1;
            continue;
        }
        rows.push(record(&v).map_err(|(p, m)| (at(&p), m))?);
    }
    let n = rows.len() as u64;
    let mut b = Benchmark {
        requests: Some(columns::columns(rows)?),
        workload: ForeignWorkload {
            requests: Some(n),
            description: Some(
                "aiperf profile_export.jsonl (the workload is in profile_export_aiperf.json)"
                    .into(),
            ),
            ..Default::default()
        },
        ..Default::default()
    };
    if warmup > 0 {
        b.notes.push(format!("{warmup} warm-up records left out"));
    }
    Ok(b)
}

/// A metric's value in ms (times) or as given (counts), with its unit checked.
fn metric<'a>(m: &'a Value, name: &str, time: bool) -> Result<Option<&'a Value>, Fail> {
    let Some(x) = m.get(name) else {
        return Ok(None);
    };
    if time {
        let unit = x.get("unit").and_then(Value::as_str).unwrap_or("");
        if to_ms(unit) != Some(1.0) {
            return super::fail(
                format!("$.metrics.{name}.unit"),
                format!("expected \"ms\", found {unit:?}"),
            );
        }
    }
    Ok(x.get("value"))
}

fn record(v: &Value) -> Result<Row, Fail> {
    let meta = v.get("metadata");
    let start = meta.and_then(|m| num(m, "request_start_ns"));
    let Some(start) = start else {
        return super::fail("$.metadata.request_start_ns", "expected the send time (ns)");
    };
    let empty = Value::Null;
    let m = v.get("metrics").unwrap_or(&empty);
    let cancelled = meta
        .and_then(|m| m.get("was_cancelled"))
        .and_then(Value::as_bool)
        == Some(true);
    let error = match v.get("error").filter(|e| !e.is_null()) {
        Some(e) => Some(format!(
            "AIPerf: {}",
            e.get("message")
                .and_then(Value::as_str)
                .or_else(|| e.get("type").and_then(Value::as_str))
                .unwrap_or("error")
        )),
        None if cancelled => Some("AIPerf: cancelled".into()),
        None => None,
    };
    let (prompt, prompt_src) = match metric(m, "usage_prompt_tokens", false)? {
        Some(x) => (
            columns::tokens(Some(x), "$.metrics.usage_prompt_tokens.value")?,
            TokenSource::Usage,
        ),
        None => (
            columns::tokens(
                metric(m, "input_sequence_length", false)?,
                "$.metrics.input_sequence_length.value",
            )?,
            TokenSource::Tokenizer,
        ),
    };
    let mut row = Row {
        send_us: Some(start / 1e3),
        id: v
            .pointer("/metadata/x_request_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        prompt,
        prompt_src: Some(prompt_src),
        error,
        ..Default::default()
    };
    if row.error.is_some() {
        return Ok(row);
    }
    row.ttft_us = columns::micros(
        metric(m, "time_to_first_token", true)?,
        1e3,
        "$.metrics.time_to_first_token.value",
    )?;
    row.e2e_us = columns::micros(
        metric(m, "request_latency", true)?,
        1e3,
        "$.metrics.request_latency.value",
    )?;
    row.gaps = columns::gaps(
        metric(m, "inter_chunk_latency", true)?,
        1e3,
        "$.metrics.inter_chunk_latency.value",
    )?;
    let (out, src) = match metric(m, "usage_completion_tokens", false)? {
        Some(x) => (
            columns::tokens(Some(x), "$.metrics.usage_completion_tokens.value")?,
            TokenSource::Usage,
        ),
        None => (
            columns::tokens(
                metric(m, "output_sequence_length", false)?,
                "$.metrics.output_sequence_length.value",
            )?,
            TokenSource::Tokenizer,
        ),
    };
    row.output = out;
    row.output_src = Some(src);
    if row.ttft_us.is_none() || row.e2e_us.is_none() || row.output.is_none() {
        return super::fail(
            "$.metrics",
            "a successful record needs time_to_first_token, request_latency and an output token count",
        );
    }
    Ok(row)
}

/// Reads `profile_export_aiperf.csv`: a table `Metric,avg,…,p50,…,p99,std` of distributions
/// (names carry their unit: `Time to First Token (ms)`), then `Metric,Value` scalars. Values
/// are rounded to two decimals by AIPerf. Summaries only.
pub(crate) fn csv(bytes: &[u8]) -> Result<Benchmark, Fail> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ("$".to_string(), format!("not UTF-8 text: {e}")))?;
    let mut b = Benchmark::default();
    let mut header: Vec<&str> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.first() == Some(&"Metric") || cells.contains(&"Metric") {
            if let Some(dup) = cells
                .iter()
                .enumerate()
                .find(|(i, c)| !c.is_empty() && cells[..*i].contains(c))
            {
                return super::fail(
                    format!("line {}", n + 1),
                    format!(
                        "the column {:?} appears twice: expected each once [unique_keys]",
                        dup.1
                    ),
                );
            }
            header = cells;
            seen.clear();
            continue;
        }
        let Some(name) = cells.first().filter(|c| !c.is_empty()) else {
            continue;
        };
        if seen.contains(name) {
            return super::fail(
                format!("line {}", n + 1),
                format!("the metric {name:?} appears twice: expected each once, never the first or last [unique_keys]"),
            );
        }
        seen.push(name);
        let col = |h: &str| {
            header
                .iter()
                .position(|x| *x == h)
                .and_then(|i| cells.get(i))
        };
        let val = |h: &str| -> Result<Option<f64>, Fail> {
            match col(h).filter(|c| !c.is_empty()) {
                None => Ok(None),
                Some(c) => c.parse::<f64>().map(Some).map_err(|_| {
                    (
                        format!("line {}: {h}", n + 1),
                        format!("expected a number, found {c:?}"),
                    )
                }),
            }
        };
        let ours = match *name {
            "Time to First Token (ms)" => "ttft",
            "Inter Token Latency (ms)" => "tpot",
            "Inter Chunk Latency (ms)" => "itl",
            "Request Latency (ms)" => "e2e",
            "Output Token Throughput (tokens/sec)" => {
                put(&mut b, "throughput_tps", val("Value")?);
                continue;
            }
            "Request Throughput (requests/sec)" => {
                put(&mut b, "request_throughput_rps", val("Value")?);
                continue;
            }
            "Completed Requests (Success + Error)" => {
                put(&mut b, "requests_sent", val("Value")?);
                continue;
            }
            "Request Error Rate (%)" => {
                put(&mut b, "failure_rate", val("Value")?.map(|p| p / 100.0));
                continue;
            }
            _ => continue,
        };
        if header.first() != Some(&"Metric") {
            continue; // a per-GPU telemetry table
        }
        put(&mut b, &format!("{ours}_mean_ms"), val("avg")?);
        for p in ["50", "90", "95", "99"] {
            put(&mut b, &format!("{ours}_p{p}_ms"), val(&format!("p{p}"))?);
        }
    }
    if b.reported.is_empty() {
        return super::fail("$", "no metric AIPerf's summary CSV holds (Time to First Token (ms), Request Latency (ms), …)");
    }
    b.notes.push("AIPerf summary CSV (values rounded to 2 decimals) without per-request records: summaries used as reported".into());
    Ok(b)
}
