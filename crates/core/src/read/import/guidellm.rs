//! GuideLLM `benchmarks.json` (`guidellm run --output kind=json`): one file holds several
//! benchmarks (one per strategy: `concurrent@1`, `concurrent@4`, a sweep's rates), each its
//! own run.
//!
//! Per request (`requests.successful|errored[]`), times are epoch seconds: `request_start_time`
//! is the send, `info.timings.first_token_iteration − request_start` the TTFT,
//! `request_end_time − request_start_time` (GuideLLM's `request_latency`) the e2e;
//! `output_tokens` / `prompt_tokens` come from the server's usage when it sent one
//! (`prefer_response_metrics`). GuideLLM keeps no chunk gaps, so ITL stays unknown; TPOT is
//! recomputed as (e2e − TTFT)/(out − 1). Not taken over as reported: GuideLLM's
//! `time_per_output_token_ms` (it includes TTFT) and `inter_token_latency_ms` (to the last
//! token, and its distribution is weighted by tokens, not requests); its percentiles are
//! not linearly interpolated, so with few requests they differ from sloscope's.
//! `incomplete` requests (cut off when the benchmark ended) are not counted as failures.

use serde_json::Value;

use super::columns::{self, Row};
use super::{count, num, put, Benchmark, Fail};
use crate::schema::{ForeignWorkload, TokenSource};

/// Reads every benchmark of the file.
pub(crate) fn read(v: &Value) -> Result<(Option<String>, Vec<Benchmark>), Fail> {
    let version = v
        .pointer("/metadata/guidellm_version")
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some(list) = v.get("benchmarks").and_then(Value::as_array) else {
        return super::fail("$.benchmarks", "expected a list of benchmarks");
    };
    let data = v.pointer("/config/spec/data/0");
    let model = v
        .pointer("/config/spec/backend/model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut out = Vec::with_capacity(list.len());
    for (i, b) in list.iter().enumerate() {
        let mut bench = benchmark(b, data).map_err(|(p, m)| {
            (
                format!("$.benchmarks[{i}]{}", p.strip_prefix('$').unwrap_or(&p)),
                m,
            )
        })?;
        bench.model.clone_from(&model);
        out.push(bench);
    }
    Ok((version, out))
}

fn benchmark(b: &Value, data: Option<&Value>) -> Result<Benchmark, Fail> {
    match b.get("type_") {
        Some(Value::String(t)) if t == "generative_benchmark" => {}
        None => {
            return super::fail(
                ".type_",
                "missing: expected \"generative_benchmark\" (a truncated file?)",
            )
        }
        Some(other) => {
            return super::fail(
                ".type_",
                format!(
                    "expected \"generative_benchmark\", found {}",
                    columns::short(other)
                ),
            )
        }
    }
    let mut out = Benchmark {
        workload: workload(b, data),
        ..Default::default()
    };
    let m = b.get("metrics");
    let stat = |name: &str| m.and_then(|m| m.pointer(&format!("/{name}/successful")));
    for (theirs, ours, scale) in [
        ("time_to_first_token_ms", "ttft", 1.0),
        ("request_latency", "e2e", 1000.0),
    ] {
        if let Some(s) = stat(theirs) {
            let ms = |x: Option<f64>| x.map(|x| x * scale);
            put(&mut out, &format!("{ours}_mean_ms"), ms(num(s, "mean")));
            put(&mut out, &format!("{ours}_p50_ms"), ms(num(s, "median")));
            for p in ["90", "95", "99"] {
                put(
                    &mut out,
                    &format!("{ours}_p{p}_ms"),
                    ms(s.pointer(&format!("/percentiles/p{p}"))
                        .and_then(Value::as_f64)),
                );
            }
        }
    }
    put(&mut out, "duration_s", num(b, "duration"));
    let totals = m.and_then(|m| m.get("request_totals"));
    let total = |k: &str| totals.and_then(|t| num(t, k));
    let (ok, errored, incomplete) = (total("successful"), total("errored"), total("incomplete"));
    if let (Some(ok), Some(err)) = (ok, errored) {
        put(&mut out, "requests_sent", Some(ok + err));
        put(&mut out, "requests_failed", Some(err));
        if ok + err > 0.0 {
            put(&mut out, "failure_rate", Some(err / (ok + err)));
        }
    }
    let reqs = b.get("requests");
    let list = |k: &str| {
        reqs.and_then(|r| r.get(k))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let (succ, errs) = (list("successful"), list("errored"));
    let sampled = ok.is_some_and(|n| n != succ.len() as f64)
        || errored.is_some_and(|n| n != errs.len() as f64);
    if sampled || (succ.is_empty() && errs.is_empty()) {
        out.notes.push(format!(
            "GuideLLM kept {} of {} requests (--sample-requests): summaries used as reported",
            succ.len() + errs.len(),
            ok.unwrap_or(0.0) + errored.unwrap_or(0.0)
        ));
    } else {
        let mut rows = Vec::with_capacity(succ.len() + errs.len());
        for (kind, list) in [("successful", succ), ("errored", errs)] {
            for (j, r) in list.iter().enumerate() {
                rows.push(request(r, kind == "errored").map_err(|(p, m)| {
                    (
                        format!(".requests.{kind}[{j}]{}", p.strip_prefix('$').unwrap_or(&p)),
                        m,
                    )
                })?);
            }
        }
        out.requests = Some(columns::columns(rows)?);
    }
    if let Some(n) = incomplete.filter(|n| *n > 0.0) {
        out.notes.push(format!(
            "{n} requests were still running when GuideLLM ended the benchmark (incomplete): left out, not counted as failures"
        ));
    }
    out.notes.push("GuideLLM's time_per_output_token_ms (includes TTFT) and inter_token_latency_ms (token-weighted) are not taken over; TPOT is recomputed as (e2e − TTFT)/(out − 1), chunk gaps are not recorded".into());
    Ok(out)
}

fn request(r: &Value, errored: bool) -> Result<Row, Fail> {
    // 0.4+ keeps `request_start_time` and `info.timings`; older versions `start_time`,
    // `first_token_time`, `end_time` at the top level.
    let start = num(r, "request_start_time")
        .or_else(|| {
            r.pointer("/info/timings/request_start")
                .and_then(Value::as_f64)
        })
        .or_else(|| num(r, "start_time"));
    let Some(start) = start else {
        return super::fail(
            ".request_start_time",
            "expected the send time (epoch seconds)",
        );
    };
    let after = |t: Option<f64>, path: &str| -> Result<Option<u64>, Fail> {
        match t {
            None => Ok(None),
            Some(t) if t >= start && t.is_finite() => Ok(Some(((t - start) * 1e6).round() as u64)),
            Some(t) => super::fail(path, format!("{t} is before the request's start {start}")),
        }
    };
    let timings = r.pointer("/info/timings");
    let first = timings
        .and_then(|t| num(t, "first_token_iteration"))
        .or_else(|| num(r, "first_token_time"));
    let end = num(r, "request_end_time")
        .or_else(|| timings.and_then(|t| num(t, "request_end")))
        .or_else(|| num(r, "end_time"));
    let mut row = Row {
        send_us: Some(start * 1e6),
        id: r
            .get("request_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        prompt: columns::tokens(r.get("prompt_tokens"), ".prompt_tokens")?,
        prompt_src: Some(TokenSource::Usage),
        ..Default::default()
    };
    if errored {
        let why = r
            .pointer("/info/error")
            .or_else(|| r.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("errored");
        row.error = Some(format!("GuideLLM: {why}"));
        return Ok(row);
    }
    row.ttft_us = after(first, ".info.timings.first_token_iteration")?;
    row.e2e_us = after(end, ".request_end_time")?;
    row.output = columns::tokens(r.get("output_tokens"), ".output_tokens")?;
    row.output_src = Some(TokenSource::Usage);
    if row.ttft_us.is_none() || row.e2e_us.is_none() || row.output.is_none() {
        return super::fail(
            "",
            "a successful request needs info.timings.first_token_iteration, request_end_time and output_tokens",
        );
    }
    Ok(row)
}

/// The prompt length a request is sent: GuideLLM's `prompt_tokens` come after a shared prefix
/// when it draws one (`prefix_buckets`), which the server counts too. One bucket adds its
/// `prefix_tokens`; several of different lengths leave the length unstated.
fn with_prefix(data: Option<&Value>, prompt: Option<u32>) -> Option<u32> {
    let buckets = data
        .and_then(|d| d.get("prefix_buckets"))
        .and_then(Value::as_array)
        .filter(|b| !b.is_empty());
    let Some(buckets) = buckets else {
        return prompt;
    };
    let mut lengths: Vec<Option<u32>> = buckets.iter().map(|b| count(b, "prefix_tokens")).collect();
    lengths.dedup();
    match lengths.as_slice() {
        [Some(prefix)] => prompt.map(|p| p.saturating_add(*prefix)),
        _ => None,
    }
}

fn workload(b: &Value, data: Option<&Value>) -> ForeignWorkload {
    let s = b.pointer("/config/strategy");
    let kind = s
        .and_then(|s| s.get("type_"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let get = |k: &str| s.and_then(|s| count(s, k));
    let (concurrency, rate) = match kind {
        "synchronous" => (Some(1), None),
        "concurrent" => (get("streams"), None),
        "throughput" => (get("max_concurrency"), None),
        _ => (
            get("max_concurrency"),
            s.and_then(|s| num(s, "rate")).filter(|r| *r > 0.0),
        ),
    };
    let fixed = |k: &str| {
        let d = data?;
        let spread = ["_stdev", "_min", "_max"]
            .iter()
            .any(|x| d.get(format!("{k}{x}")).is_some_and(|v| !v.is_null()));
        if spread {
            None
        } else {
            count(d, k)
        }
    };
    ForeignWorkload {
        concurrency,
        request_rate_rps: rate,
        prompt_tokens: with_prefix(data, fixed("prompt_tokens")),
        max_output_tokens: fixed("output_tokens"),
        requests: None,
        description: Some(format!(
            "guidellm: strategy {}, data {}",
            s.map_or("?".into(), columns::whole),
            data.and_then(|d| d.get("kind"))
                .map_or("?".into(), columns::whole)
        )),
    }
}

/// RFC 4180 records: fields separated by commas, quoted fields may hold commas, newlines and
/// `""` for a quote.
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => rec.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                rec.push(std::mem::take(&mut field));
                out.push(std::mem::take(&mut rec));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !rec.is_empty() {
        rec.push(field);
        out.push(rec);
    }
    out
}

/// Reads GuideLLM's `benchmarks.csv`: three header rows (group, name, statistic), then one row
/// per benchmark. Summaries only (the CSV keeps no requests); its percentile lists are
/// p0.1, p1, p5, p10, p25, p50, p75, p90, p95, p99, p99.9.
pub(crate) fn csv(bytes: &[u8]) -> Result<Vec<Benchmark>, Fail> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ("$".to_string(), format!("not UTF-8 text: {e}")))?;
    let rows = csv_records(text);
    if rows.len() < 4 {
        return super::fail(
            "$",
            "expected three header rows and a row per benchmark (a truncated file?)",
        );
    }
    let header = Header {
        group: &rows[0],
        name: &rows[1],
        stat: &rows[2],
    };
    header.unique()?;
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate().skip(3) {
        if row.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        if row.len() != header.group.len() {
            return super::fail(
                format!("row {}", r + 1),
                format!(
                    "{} fields for {} header columns (a truncated file?)",
                    row.len(),
                    header.group.len()
                ),
            );
        }
        out.push(csv_benchmark(&header, r, row)?);
    }
    Ok(out)
}

/// The CSV's three header rows: a column is named by its group, name and statistic.
struct Header<'a> {
    group: &'a [String],
    name: &'a [String],
    stat: &'a [String],
}

impl Header<'_> {
    fn col(&self, group: &str, name: &str, stat: &str) -> Option<usize> {
        (0..self.group.len()).find(|&i| {
            self.group[i] == group
                && self.name.get(i).map(String::as_str) == Some(name)
                && self.stat.get(i).map(String::as_str).unwrap_or("") == stat
        })
    }

    /// A column named twice is refused: which one to read is not for column order to decide.
    fn unique(&self) -> Result<(), Fail> {
        let key = |i: usize| {
            (
                self.group[i].as_str(),
                self.name.get(i).map_or("", String::as_str),
                self.stat.get(i).map_or("", String::as_str),
            )
        };
        for i in 0..self.group.len() {
            if key(i).0.is_empty() && key(i).1.is_empty() {
                continue;
            }
            if let Some(j) = (0..i).find(|&j| key(j) == key(i)) {
                return super::fail(
                    format!("header column {}", i + 1),
                    format!(
                        "the column {:?} appears twice (columns {} and {}): expected each once \
                         [unique_keys]",
                        key(i),
                        j + 1,
                        i + 1
                    ),
                );
            }
        }
        Ok(())
    }
}

fn csv_benchmark(header: &Header<'_>, r: usize, row: &[String]) -> Result<Benchmark, Fail> {
    let cell = |i: Option<usize>| i.and_then(|i| row.get(i)).map(|s| s.trim());
    let number = |i: Option<usize>, what: &str| -> Result<Option<f64>, Fail> {
        match cell(i).filter(|c| !c.is_empty()) {
            None => Ok(None),
            Some(c) => c.parse::<f64>().map(Some).map_err(|_| {
                (
                    format!("row {}: {what}", r + 1),
                    format!("expected a number, found {c:?}"),
                )
            }),
        }
    };
    let mut b = Benchmark::default();
    for (group, unit, ours, scale) in [
        ("Time to First Token", "Successful ms", "ttft", 1.0),
        ("Request Latency", "Successful Sec", "e2e", 1000.0),
    ] {
        let ms = |x: Option<f64>| x.map(|x| x * scale);
        let mean = number(header.col(group, unit, "Mean"), group)?;
        put(&mut b, &format!("{ours}_mean_ms"), ms(mean));
        let median = number(header.col(group, unit, "Median"), group)?;
        put(&mut b, &format!("{ours}_p50_ms"), ms(median));
        let list = cell(header.col(group, unit, "Percentiles")).filter(|c| !c.is_empty());
        if let Some(list) = list {
            let ps: Vec<f64> = serde_json::from_str(list).map_err(|_| {
                (
                    format!("row {}: {group} Percentiles", r + 1),
                    format!("expected a list of 11 numbers, found {list:?}"),
                )
            })?;
            if ps.len() == 11 {
                for (p, idx) in [("90", 7), ("95", 8), ("99", 9)] {
                    put(&mut b, &format!("{ours}_p{p}_ms"), ms(Some(ps[idx])));
                }
            }
        }
    }
    let ok = number(header.col("Request Counts", "Successful", ""), "Successful")?;
    let err = number(header.col("Request Counts", "Errored", ""), "Errored")?;
    if let (Some(ok), Some(err)) = (ok, err) {
        put(&mut b, "requests_sent", Some(ok + err));
        put(&mut b, "requests_failed", Some(err));
        if ok + err > 0.0 {
            put(&mut b, "failure_rate", Some(err / (ok + err)));
        }
    }
    let strategy = cell(header.col("Benchmark", "Strategy", "")).unwrap_or("?");
    b.workload = csv_workload(strategy);
    b.notes.push("GuideLLM CSV without per-request data: summaries used as reported (its benchmarks.json holds every request)".into());
    Ok(b)
}

fn csv_workload(strategy: &str) -> ForeignWorkload {
    let (kind, arg) = strategy.split_once('@').unwrap_or((strategy, ""));
    let arg_num = arg.parse::<f64>().ok();
    ForeignWorkload {
        concurrency: match kind {
            "synchronous" => Some(1),
            "concurrent" => arg_num
                .filter(|x| x.fract() == 0.0 && *x >= 1.0)
                .map(|x| x as u32),
            _ => None,
        },
        request_rate_rps: match kind {
            "constant" | "poisson" | "async" => arg_num.filter(|x| *x > 0.0),
            _ => None,
        },
        description: Some(format!("guidellm csv: strategy {strategy}")),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn csv_records_handle_quotes_commas_and_newlines() {
        let r = super::csv_records("a,\"b,c\",\"d \"\"e\"\"\nf\"\n1,2,3\n");
        assert_eq!(r, vec![vec!["a", "b,c", "d \"e\"\nf"], vec!["1", "2", "3"]]);
    }
}
