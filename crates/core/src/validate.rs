//! The checks serde cannot do on a run, however it arrived (a run file, a recovered journal, an
//! import): equal column lengths, ordered times, and physically possible requests — durations
//! consistent with each other and with the token counts, gaps that fit inside their request,
//! every time inside a bounded window so no sum or difference can overflow.
//!
//! Every failure names the file, the JSON path and what was expected.

use crate::error::{LoadError, LoadErrorKind};
use crate::schema::{RequestColumns, Run, RunStatus};

/// The longest time any offset or duration in a run may state: 7 days in µs. Longer is not a
/// benchmark but a corrupted number, and the bound keeps every sum of times far from overflow.
pub const MAX_TIME_US: u64 = 7 * 24 * 3600 * 1_000_000;

struct Check<'a> {
    file: &'a str,
    /// Another tool's chunk lists may hold a gap for a chunk without a token (vLLM times the
    /// finish chunk too) and its token counts may be re-tokenized: more gaps than tokens is
    /// then the tool's definition, not corruption.
    imported: bool,
}

impl Check<'_> {
    fn invalid(&self, path: String, msg: String) -> LoadError {
        LoadError::new(self.file, path, msg, LoadErrorKind::Invalid)
    }
}

/// Checks what the types cannot: equal column lengths, ordered, bounded and consistent times.
pub fn validate_run(file: &str, run: &Run) -> Result<(), LoadError> {
    let c = Check {
        file,
        imported: run.source == crate::schema::RunSource::Imported,
    };
    if run.repeats.is_empty() && run.reported.is_none() && run.status == RunStatus::Ok {
        return Err(c.invalid(
            "$.repeats".into(),
            "empty: an ok run needs at least one repeat with requests (or `reported` \
             summaries for an imported run)"
                .into(),
        ));
    }
    for (ri, rep) in run.repeats.iter().enumerate() {
        let base = format!("$.repeats[{ri}].requests");
        let r = &rep.requests;
        if r.is_empty() && run.status == RunStatus::Ok {
            return Err(c.invalid(
                base,
                "empty request list: expected at least one request in a repeat of an ok run".into(),
            ));
        }
        c.columns(&base, r)?;
        c.send_order(&base, r)?;
        for i in 0..r.len() {
            c.request(&base, r, i)?;
        }
        for (j, s) in rep.memory.iter().enumerate() {
            for (field, v) in [
                ("gpu_used_mb", s.gpu_used_mb),
                ("server_rss_mb", s.server_rss_mb),
            ] {
                if v.is_some_and(|v| v < 0.0 || v.is_nan()) {
                    return Err(c.invalid(
                        format!("$.repeats[{ri}].memory[{j}].{field}"),
                        format!("{v:?}: expected a non-negative size"),
                    ));
                }
            }
        }
    }
    c.reported(run)
}

impl Check<'_> {
    fn columns(&self, base: &str, r: &RequestColumns) -> Result<(), LoadError> {
        let n = r.len();
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
                return Err(self.invalid(
                    format!("{base}.{name}"),
                    format!(
                        "has {len} entries: expected {n}, one per request as in send_offset_us"
                    ),
                ));
            }
        }
        if let Some(intended) = &r.intended_offset_us {
            if intended.len() != n {
                return Err(self.invalid(
                    format!("{base}.intended_offset_us"),
                    format!("has {} entries: expected {n}", intended.len()),
                ));
            }
            for (i, (&want, &sent)) in intended.iter().zip(&r.send_offset_us).enumerate() {
                if sent < want {
                    return Err(self.invalid(
                        format!("{base}.send_offset_us[{i}]"),
                        format!("sent at {sent} µs, before its intended time {want} µs"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn send_order(&self, base: &str, r: &RequestColumns) -> Result<(), LoadError> {
        for (i, &s) in r.send_offset_us.iter().enumerate() {
            if s > MAX_TIME_US {
                return Err(self.invalid(
                    format!("{base}.send_offset_us[{i}]"),
                    format!("{s} µs: expected an offset inside the run (at most {MAX_TIME_US} µs, 7 days)"),
                ));
            }
            if i > 0 && s < r.send_offset_us[i - 1] {
                return Err(self.invalid(
                    format!("{base}.send_offset_us[{i}]"),
                    format!(
                        "{s} µs is before the previous request's {} µs: expected requests in send order",
                        r.send_offset_us[i - 1]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// One request: present where a success needs it, bounded, and physically possible.
    fn request(&self, base: &str, r: &RequestColumns, i: usize) -> Result<(), LoadError> {
        let ok = r.error[i].is_none();
        let (ttft, e2e, tokens) = (r.ttft_us[i], r.e2e_us[i], r.output_tokens[i]);
        for (name, v) in [
            ("ttft_us", ttft),
            ("e2e_us", e2e),
            ("server_queue_us", r.server_queue_us[i]),
        ] {
            if v.is_some_and(|v| v > MAX_TIME_US) {
                return Err(self.invalid(
                    format!("{base}.{name}[{i}]"),
                    format!(
                        "{} µs: expected at most {MAX_TIME_US} µs (7 days)",
                        v.unwrap_or(0)
                    ),
                ));
            }
        }
        if let (Some(t), Some(e)) = (ttft, e2e) {
            if e < t {
                return Err(self.invalid(
                    format!("{base}.e2e_us[{i}]"),
                    format!("end-to-end {e} µs is before the first token at {t} µs"),
                ));
            }
        }
        if ok {
            self.success_fields(base, i, ttft, e2e, tokens)?;
        }
        let gaps = r.itl_us.get(i);
        if let Some(t) = tokens {
            // n content events carry at least n tokens and have n − 1 gaps between them.
            if !self.imported && gaps.len() as u64 >= u64::from(t.max(1)) && !gaps.is_empty() {
                return Err(self.invalid(
                    format!("{base}.itl_us[{i}]"),
                    format!(
                        "{} inter-token gaps for {t} output tokens: expected at most {}",
                        gaps.len(),
                        t.saturating_sub(1)
                    ),
                ));
            }
        }
        if let (Some(t), Some(e)) = (ttft, e2e) {
            let sum: u64 = gaps.iter().map(|&g| u64::from(g)).sum();
            // Each gap is a difference of µs-truncated stamps, so they telescope exactly;
            // allow 1 µs per gap for writers that round each gap independently.
            if t + sum > e + gaps.len() as u64 {
                return Err(self.invalid(
                    format!("{base}.itl_us[{i}]"),
                    format!(
                        "gaps add up to {sum} µs after a first token at {t} µs, past the \
                         end at {e} µs"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn success_fields(
        &self,
        base: &str,
        i: usize,
        ttft: Option<u64>,
        e2e: Option<u64>,
        tokens: Option<u32>,
    ) -> Result<(), LoadError> {
        let missing = |name: &str, what: &str| {
            self.invalid(
                format!("{base}.{name}[{i}]"),
                format!("null for a successful request: expected {what}"),
            )
        };
        let t = ttft.ok_or_else(|| missing("ttft_us", "the time to first token"))?;
        e2e.ok_or_else(|| missing("e2e_us", "the end-to-end time"))?;
        tokens.ok_or_else(|| missing("output_tokens", "the output token count"))?;
        if t == 0 {
            return Err(self.invalid(
                format!("{base}.ttft_us[{i}]"),
                "0 µs for a successful request: expected a positive time to first token (a \
                 token cannot arrive in the same microsecond the request is sent)"
                    .into(),
            ));
        }
        // The end may share the first token's stamp (decode time 0): a server can send every
        // token and `[DONE]` in one write, and the collector stamps bytes when they arrive. An
        // end before the first token is refused above, for every row.
        Ok(())
    }

    fn reported(&self, run: &Run) -> Result<(), LoadError> {
        let Some(rep) = &run.reported else {
            return Ok(());
        };
        for (k, v) in rep {
            if crate::metric::Metric::parse(k).is_none() && !crate::summary::is_reported_extra(k) {
                return Err(self.invalid(
                    format!("$.reported.{k}"),
                    "unknown metric name; see the metric list in the README".into(),
                ));
            }
            if v.is_some_and(|v| v < 0.0 || v.is_nan()) {
                return Err(self.invalid(
                    format!("$.reported.{k}"),
                    format!("{v:?}: expected a non-negative value"),
                ));
            }
        }
        Ok(())
    }
}
