//! The checks serde cannot do on a run: equal column lengths, ordered and consistent times,
//! non-negative sizes, known reported metric names.

use crate::load::{LoadError, LoadErrorKind};
use crate::schema::{Run, RunStatus};

/// Checks what the types cannot: equal column lengths, ordered and consistent times.
pub fn validate_run(file: &str, run: &Run) -> Result<(), LoadError> {
    let invalid =
        |path: String, msg: String| LoadError::new(file, path, msg, LoadErrorKind::Invalid);
    if run.repeats.is_empty() && run.reported.is_none() && run.status != RunStatus::Failed {
        return Err(invalid(
            "$.repeats".into(),
            format!(
                "empty: a run with status {} needs at least one repeat with requests \
                 (or `reported` summaries for an imported run)",
                run.status.as_str()
            ),
        ));
    }
    for (ri, rep) in run.repeats.iter().enumerate() {
        let base = format!("$.repeats[{ri}].requests");
        let r = &rep.requests;
        let n = r.len();
        if n == 0 && run.status == RunStatus::Ok {
            return Err(invalid(
                base,
                "empty request list: expected at least one request in a repeat of an ok run".into(),
            ));
        }
        let lens = [
            ("ttft_us", r.ttft_us.len()),
            ("e2e_us", r.e2e_us.len()),
            ("prompt_tokens", r.prompt_tokens.len()),
            ("prompt_tokens_source", r.prompt_tokens_source.len()),
            ("output_tokens", r.output_tokens.len()),
            ("output_tokens_source", r.output_tokens_source.len()),
            ("server_queue_us", r.server_queue_us.len()),
            ("error", r.error.len()),
            ("itl_us", r.itl_us.len()),
        ];
        for (name, len) in lens {
            if len != n {
                return Err(invalid(
                    format!("{base}.{name}"),
                    format!(
                        "has {len} entries: expected {n}, one per request as in send_offset_us"
                    ),
                ));
            }
        }
        if let Some(intended) = &r.intended_offset_us {
            if intended.len() != n {
                return Err(invalid(
                    format!("{base}.intended_offset_us"),
                    format!("has {} entries: expected {n}", intended.len()),
                ));
            }
            for (i, (&want, &sent)) in intended.iter().zip(&r.send_offset_us).enumerate() {
                if sent < want {
                    return Err(invalid(
                        format!("{base}.send_offset_us[{i}]"),
                        format!("sent at {sent} µs, before its intended time {want} µs"),
                    ));
                }
            }
        }
        for i in 1..n {
            if r.send_offset_us[i] < r.send_offset_us[i - 1] {
                return Err(invalid(
                    format!("{base}.send_offset_us[{i}]"),
                    format!(
                        "{} µs is before the previous request's {} µs: expected requests in send order",
                        r.send_offset_us[i],
                        r.send_offset_us[i - 1]
                    ),
                ));
            }
        }
        for i in 0..n {
            let ok = r.error[i].is_none();
            let (ttft, e2e) = (r.ttft_us[i], r.e2e_us[i]);
            if ok {
                if ttft.is_none() {
                    return Err(invalid(
                        format!("{base}.ttft_us[{i}]"),
                        "null for a successful request: expected the time to first token".into(),
                    ));
                }
                if e2e.is_none() {
                    return Err(invalid(
                        format!("{base}.e2e_us[{i}]"),
                        "null for a successful request: expected the end-to-end time".into(),
                    ));
                }
                if r.output_tokens[i].is_none() {
                    return Err(invalid(
                        format!("{base}.output_tokens[{i}]"),
                        "null for a successful request: expected the output token count".into(),
                    ));
                }
            }
            if let (Some(t), Some(e)) = (ttft, e2e) {
                if e < t {
                    return Err(invalid(
                        format!("{base}.e2e_us[{i}]"),
                        format!("end-to-end {e} µs is before the first token at {t} µs"),
                    ));
                }
                let gaps = r.itl_us.get(i);
                let sum: u64 = gaps.iter().map(|&g| g as u64).sum();
                // Each gap is a difference of µs-truncated stamps, so they telescope exactly;
                // allow 1 µs per gap for writers that round each gap independently.
                if t + sum > e + gaps.len() as u64 {
                    return Err(invalid(
                        format!("{base}.itl_us[{i}]"),
                        format!(
                            "gaps add up to {sum} µs after a first token at {t} µs, past the \
                             end at {e} µs"
                        ),
                    ));
                }
            }
        }
        for (j, s) in rep.memory.iter().enumerate() {
            for (field, v) in [
                ("gpu_used_mb", s.gpu_used_mb),
                ("server_rss_mb", s.server_rss_mb),
            ] {
                if let Some(v) = v {
                    if v < 0.0 {
                        return Err(invalid(
                            format!("$.repeats[{ri}].memory[{j}].{field}"),
                            format!("{v}: expected a non-negative size"),
                        ));
                    }
                }
            }
        }
    }
    if let Some(rep) = &run.reported {
        for (k, v) in rep {
            if crate::metric::Metric::parse(k).is_none() && !crate::summary::is_reported_extra(k) {
                return Err(invalid(
                    format!("$.reported.{k}"),
                    "unknown metric name; see the metric list in the README".into(),
                ));
            }
            if let Some(v) = v {
                if *v < 0.0 {
                    return Err(invalid(
                        format!("$.reported.{k}"),
                        format!("{v}: expected a non-negative value"),
                    ));
                }
            }
        }
    }
    Ok(())
}
