//! One request as an importer recovers it, and the columns they become (send order, offsets
//! from the first send, integer microseconds).

use serde_json::Value;

use super::Fail;
use crate::schema::{Gaps, RequestColumns, TokenSource};

/// One request in absolute microseconds of the tool's clock.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    /// Send time, µs on the tool's clock (any origin).
    pub send_us: Option<f64>,
    pub ttft_us: Option<u64>,
    pub e2e_us: Option<u64>,
    pub prompt: Option<u32>,
    pub prompt_src: Option<TokenSource>,
    pub output: Option<u32>,
    pub output_src: Option<TokenSource>,
    pub error: Option<String>,
    /// Inter-chunk gaps, µs.
    pub gaps: Vec<u32>,
    /// The tool's id of the request, where it writes one.
    pub id: Option<String>,
}

/// Seconds (or another unit, by `scale` to µs) at `path` as whole microseconds: `None` when
/// absent or null; an error when it is not a finite, non-negative number.
pub(crate) fn micros(v: Option<&Value>, scale: f64, path: &str) -> Result<Option<u64>, Fail> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => Ok(Some((f * scale).round() as u64)),
            _ => super::fail(
                path,
                format!("expected a non-negative number, found {}", short(x)),
            ),
        },
    }
}

/// A list of gaps (in units `scale` converts to µs) at `path`.
pub(crate) fn gaps(v: Option<&Value>, scale: f64, path: &str) -> Result<Vec<u32>, Fail> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(a) = v.as_array() else {
        return super::fail(
            path,
            format!("expected a list of numbers, found {}", short(v)),
        );
    };
    a.iter()
        .enumerate()
        .map(|(i, x)| {
            micros(Some(x), scale, &format!("{path}[{i}]"))
                .map(|g| g.unwrap_or(0).min(u64::from(u32::MAX)) as u32)
        })
        .collect()
}

/// A token count at `path`: `None` when absent or null; an error when not a whole number.
pub(crate) fn tokens(v: Option<&Value>, path: &str) -> Result<Option<u32>, Fail> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_f64() {
            Some(f)
                if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= f64::from(u32::MAX) =>
            {
                Ok(Some(f as u32))
            }
            _ => super::fail(
                path,
                format!("expected a whole number of tokens, found {}", short(x)),
            ),
        },
    }
}

/// A value for an error message, cut short.
/// A tool's statement of its workload as it wrote it: whole (a reviewer checks the run against
/// the profile on it), cut only past [`WORKLOAD_CHARS`], a length no real configuration reaches.
pub(crate) fn whole(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(WORKLOAD_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s,
    }
}

/// Most characters of one stated workload part kept in a description.
const WORKLOAD_CHARS: usize = 600;

pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        let mut end = 40;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s
    }
}

/// The rows as request columns, in send order, offsets from the earliest send. Every row needs
/// a send time: without one the requests cannot be placed in time (throughput would be made
/// up), so the caller keeps summaries only. A request id the tool wrote twice is refused
/// (invariant `request_ids_unique`): one request counted twice, or two records of one.
pub(crate) fn columns(mut rows: Vec<Row>) -> Result<RequestColumns, Fail> {
    unique_ids(&rows)?;
    // One row per request: the standard sort in place (not `base::order`'s, for lists).
    rows.sort_by(|a, b| {
        a.send_us
            .unwrap_or(0.0)
            .total_cmp(&b.send_us.unwrap_or(0.0))
    });
    let t0 = rows
        .iter()
        .filter_map(|r| r.send_us)
        .reduce(f64::min)
        .unwrap_or(0.0);
    let mut c = RequestColumns::default();
    let mut g = Gaps::new();
    for r in rows {
        let failed = r.error.is_some();
        c.send_offset_us
            .push((r.send_us.unwrap_or(t0) - t0).round().max(0.0) as u64);
        c.ttft_us.push(if failed { None } else { r.ttft_us });
        c.e2e_us.push(if failed { None } else { r.e2e_us });
        c.prompt_tokens.push(r.prompt);
        c.prompt_tokens_source.push(r.prompt.and(r.prompt_src));
        c.output_tokens.push(if failed { None } else { r.output });
        c.output_tokens_source.push(if failed {
            None
        } else {
            r.output.and(r.output_src)
        });
        c.server_queue_us.push(None);
        c.error.push(r.error);
        g.push(if failed { &[] } else { &r.gaps });
    }
    c.itl_us = g;
    Ok(c)
}

fn unique_ids(rows: &[Row]) -> Result<(), Fail> {
    let mut ids: Vec<(&str, usize)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.id.as_deref().map(|id| (id, i)))
        .collect();
    ids.sort_unstable();
    match ids.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => super::fail(
            "",
            format!(
                "request id {:?} appears twice (records {} and {}): one request counted twice, or \
                 two records of one [{}]",
                crate::read::import::columns::shorten(w[0].0),
                w[0].1.min(w[1].1),
                w[0].1.max(w[1].1),
                crate::check::invariant::Invariant::RequestIdsUnique.code()
            ),
        ),
        None => Ok(()),
    }
}

/// A string from a file for a message, cut short.
pub(crate) fn shorten(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}
