//! The refusal-level invariants of a run, however it arrived (a run file, a recovered journal,
//! an import): equal column lengths, ordered and bounded times, distinct repeats, and
//! physically possible requests — durations consistent with each other and with the token
//! counts, gaps that fit inside their request. A run that breaks one is refused when it is read.

use crate::check::invariant::{Invariant, Violation};
use crate::schema::{RequestColumns, Run, RunSource, RunStatus};

/// The longest time any offset or duration in a run may state: 7 days in µs. Longer is not a
/// benchmark but a corrupted number, and the bound keeps every sum of times far from overflow.
pub const MAX_TIME_US: u64 = 7 * 24 * 3600 * 1_000_000;
/// The largest memory sample believed, in MB: 1 EiB, far past any machine (a sample beyond it,
/// like 1e308, is no measurement).
const MAX_MEMORY_MB: f64 = (1u64 << 40) as f64;

type Checked = Result<(), Violation>;

fn broken(invariant: Invariant, path: String, message: String) -> Violation {
    Violation::new(invariant, path, message)
}

/// The first refusal-level invariant the run breaks.
pub fn refusals(run: &Run) -> Checked {
    // Another tool's chunk lists may hold a gap for a chunk without a token (vLLM times the
    // finish chunk too) and its token counts may be re-tokenized: more gaps than tokens is then
    // the tool's definition, not corruption.
    let imported = run.source == RunSource::Imported;
    has_requests(run)?;
    repeat_indices(run)?;
    for (ri, rep) in run.repeats.iter().enumerate() {
        let base = format!("$.repeats[{ri}].requests");
        let r = &rep.requests;
        if r.is_empty() && run.status == RunStatus::Ok {
            return Err(broken(
                Invariant::OkRunHasRequests,
                base,
                "empty request list: expected at least one request in a repeat of an ok run".into(),
            ));
        }
        columns(&base, r)?;
        send_order(&base, r)?;
        super::sessions::turns(&base, r)?;
        for i in 0..r.len() {
            request(&base, r, i, imported)?;
        }
        for (j, s) in rep.memory.iter().enumerate() {
            for (field, v) in [
                ("gpu_used_mb", s.gpu_used_mb),
                ("server_rss_mb", s.server_rss_mb),
            ] {
                if v.is_some_and(|v| !(0.0..=MAX_MEMORY_MB).contains(&v)) {
                    return Err(broken(
                        Invariant::ValuesNonNegative,
                        format!("$.repeats[{ri}].memory[{j}].{field}"),
                        format!("{v:?}: expected a size in MB from 0 to 2^40 (1 EiB)"),
                    ));
                }
            }
        }
        if let Some(e) = rep.gpu_energy_j.filter(|e| !(e.is_finite() && *e >= 0.0)) {
            return Err(broken(
                Invariant::ValuesNonNegative,
                format!("$.repeats[{ri}].gpu_energy_j"),
                format!("{e:?}: expected a non-negative number of joules"),
            ));
        }
    }
    super::reported::check(run)
}

fn has_requests(run: &Run) -> Checked {
    if run.repeats.is_empty() && run.reported.is_none() && run.status == RunStatus::Ok {
        return Err(broken(
            Invariant::OkRunHasRequests,
            "$.repeats".into(),
            "empty: an ok run needs at least one repeat with requests (or `reported` \
             summaries for an imported run)"
                .into(),
        ));
    }
    Ok(())
}

fn repeat_indices(run: &Run) -> Checked {
    let mut seen: Vec<u32> = run.repeats.iter().map(|r| r.index).collect();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        let at = run
            .repeats
            .iter()
            .enumerate()
            .filter(|(_, r)| r.index == w[0])
            .nth(1)
            .map_or(0, |(i, _)| i);
        return Err(broken(
            Invariant::RepeatIndicesUnique,
            format!("$.repeats[{at}].index"),
            format!(
                "repeat index {} appears twice: expected each repeat once (a repeat counted twice \
                 doubles its weight in every statistic)",
                w[0]
            ),
        ));
    }
    Ok(())
}

fn columns(base: &str, r: &RequestColumns) -> Checked {
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
    let optional = [
        (
            "intended_offset_us",
            r.intended_offset_us.as_ref().map(Vec::len),
        ),
        (
            "max_output_tokens",
            r.max_output_tokens.as_ref().map(Vec::len),
        ),
        ("output_events", r.output_events.as_ref().map(Vec::len)),
        ("resent", r.resent.as_ref().map(Vec::len)),
        (
            "cached_prompt_tokens",
            r.cached_prompt_tokens.as_ref().map(Vec::len),
        ),
        ("draft_tokens", r.draft_tokens.as_ref().map(Vec::len)),
        (
            "draft_accepted_tokens",
            r.draft_accepted_tokens.as_ref().map(Vec::len),
        ),
        ("session", r.session.as_ref().map(Vec::len)),
        ("turn", r.turn.as_ref().map(Vec::len)),
    ];
    let present = optional
        .into_iter()
        .filter_map(|(name, len)| len.map(|l| (name, l)));
    for (name, len) in lens.into_iter().chain(present) {
        if len != n {
            return Err(broken(
                Invariant::ColumnsAligned,
                format!("{base}.{name}"),
                format!("has {len} entries: expected {n}, one per request as in send_offset_us"),
            ));
        }
    }
    if let Some(intended) = &r.intended_offset_us {
        for (i, (&want, &sent)) in intended.iter().zip(&r.send_offset_us).enumerate() {
            if sent < want {
                return Err(broken(
                    Invariant::SentAfterIntended,
                    format!("{base}.send_offset_us[{i}]"),
                    format!("sent at {sent} µs, before its intended time {want} µs"),
                ));
            }
        }
    }
    Ok(())
}

fn send_order(base: &str, r: &RequestColumns) -> Checked {
    for (i, &s) in r.send_offset_us.iter().enumerate() {
        if s > MAX_TIME_US {
            return Err(broken(
                Invariant::TimesBounded,
                format!("{base}.send_offset_us[{i}]"),
                format!(
                    "{s} µs: expected an offset inside the run (at most {MAX_TIME_US} µs, 7 days)"
                ),
            ));
        }
        if i > 0 && s < r.send_offset_us[i - 1] {
            return Err(broken(
                Invariant::SendOrder,
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

/// One request as the physical checks see it, whatever holds it (a run's columns, the
/// collector's row as it finishes).
#[derive(Debug, Clone, Copy)]
pub struct RowView<'a> {
    /// Time to first token, µs.
    pub ttft_us: Option<u64>,
    /// End to end, µs.
    pub e2e_us: Option<u64>,
    /// Server-side queue wait, µs.
    pub server_queue_us: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u32>,
    /// Content events the tokens came in, where recorded.
    pub output_events: Option<u32>,
    /// Where the output count came from.
    pub output_source: Option<crate::schema::TokenSource>,
    /// Whether the request succeeded.
    pub ok: bool,
    /// Its inter-token gaps, µs.
    pub gaps: &'a [u32],
    /// Prompt tokens.
    pub prompt_tokens: Option<u32>,
    /// What the server reports of its prefix cache and speculative decoding.
    pub server: crate::schema::ServerCounts,
}

impl<'a> RowView<'a> {
    /// Request `i` of a run's columns.
    pub fn of_columns(r: &'a RequestColumns, i: usize) -> RowView<'a> {
        RowView {
            ttft_us: r.ttft_us[i],
            e2e_us: r.e2e_us[i],
            server_queue_us: r.server_queue_us[i],
            output_tokens: r.output_tokens[i],
            output_events: at(&r.output_events, i),
            output_source: r.output_tokens_source.get(i).copied().flatten(),
            ok: r.error[i].is_none(),
            gaps: r.itl_us.get(i),
            prompt_tokens: r.prompt_tokens[i],
            server: crate::schema::ServerCounts {
                cached_prompt_tokens: at(&r.cached_prompt_tokens, i),
                draft_tokens: at(&r.draft_tokens, i),
                draft_accepted_tokens: at(&r.draft_accepted_tokens, i),
            },
        }
    }

    /// The collector's row.
    pub fn of_row(r: &'a crate::schema::RequestRow) -> RowView<'a> {
        RowView {
            ttft_us: r.ttft_us,
            e2e_us: r.e2e_us,
            server_queue_us: r.server_queue_us,
            output_tokens: r.output_tokens,
            output_events: r.output_events,
            output_source: r.output_tokens_source,
            ok: r.error.is_none(),
            gaps: &r.itl_us,
            prompt_tokens: r.prompt_tokens,
            server: r.server,
        }
    }
}

/// Entry `i` of an optional column (`None` when the column is absent).
fn at(c: &Option<Vec<Option<u32>>>, i: usize) -> Option<u32> {
    c.as_ref().and_then(|c| c.get(i).copied().flatten())
}

/// What the server reports of its cache and draft model fits the request: cached prompt
/// tokens at most its prompt tokens, accepted draft tokens at most the drafted ones.
fn server_counts(r: &RowView<'_>) -> Checked {
    let s = r.server;
    if let (Some(c), Some(p)) = (s.cached_prompt_tokens, r.prompt_tokens) {
        if c > p {
            return Err(broken(
                Invariant::ServerCountsFit,
                "cached_prompt_tokens".into(),
                format!("{c} prompt tokens served from cache, more than the request's {p} prompt tokens"),
            ));
        }
    }
    match (s.draft_accepted_tokens, s.draft_tokens) {
        (Some(a), Some(d)) if a > d => Err(broken(
            Invariant::ServerCountsFit,
            "draft_accepted_tokens".into(),
            format!("{a} draft tokens accepted, more than the {d} drafted"),
        )),
        (Some(a), None) => Err(broken(
            Invariant::ServerCountsFit,
            "draft_tokens".into(),
            format!("null while {a} draft tokens were accepted: expected the drafted count"),
        )),
        _ => Ok(()),
    }
}

/// One request: present where a success needs it, bounded, and physically possible. The
/// violation's path is relative to the request (`ttft_us`, `itl_us` …): the caller adds where
/// the request is.
pub fn row(r: &RowView<'_>, imported: bool) -> Result<(), Violation> {
    for (name, v) in [
        ("ttft_us", r.ttft_us),
        ("e2e_us", r.e2e_us),
        ("server_queue_us", r.server_queue_us),
    ] {
        if let Some(v) = v.filter(|&v| v > MAX_TIME_US) {
            return Err(broken(
                Invariant::TimesBounded,
                name.into(),
                format!("{v} µs: expected at most {MAX_TIME_US} µs (7 days)"),
            ));
        }
    }
    if let (Some(t), Some(e)) = (r.ttft_us, r.e2e_us) {
        if e < t {
            return Err(broken(
                Invariant::EndAfterFirstToken,
                "e2e_us".into(),
                format!("end-to-end {e} µs is before the first token at {t} µs"),
            ));
        }
    }
    if r.ok {
        success_fields(r)?;
    }
    server_counts(r)?;
    gaps(r, imported)
}

/// Request `i` of the columns at `base`, its violation's path made whole.
// Out of line: a call per request is what the page's engine optimizes and swaps in early
// (see `base::blocks`).
#[inline(never)]
fn request(base: &str, c: &RequestColumns, i: usize, imported: bool) -> Checked {
    row(&RowView::of_columns(c, i), imported).map_err(|mut v| {
        v.path = format!("{base}.{}[{i}]", v.path);
        v
    })
}

/// What the recorded content events allow: a count taken from them is theirs, and a measured
/// stream has one gap fewer than its events (another tool may time chunks without content).
fn events_fit(r: &RowView<'_>, imported: bool) -> Checked {
    let Some(n) = r.output_events.filter(|_| r.ok) else {
        return Ok(());
    };
    if r.output_source == Some(crate::schema::TokenSource::Events) && r.output_tokens != Some(n) {
        return Err(broken(
            Invariant::GapsFitTokens,
            "output_tokens".into(),
            format!(
                "{} output tokens counted from the stream's events, but {n} content events \
                 recorded: expected {n}",
                r.output_tokens
                    .map_or_else(|| "no".into(), |t| t.to_string())
            ),
        ));
    }
    if !imported && r.gaps.len() as u64 >= u64::from(n.max(1)) {
        return Err(broken(
            Invariant::GapsFitTokens,
            "itl_us".into(),
            format!(
                "{} inter-token gaps between {n} content events: expected at most {}",
                r.gaps.len(),
                n.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

fn gaps(r: &RowView<'_>, imported: bool) -> Checked {
    events_fit(r, imported)?;
    let gaps = r.gaps;
    if let Some(t) = r.output_tokens {
        // n content events carry at least n tokens and have n − 1 gaps between them. Another
        // tool times every chunk (some carry no token: vLLM's 27 tokens in 32 gaps) and may
        // count tokens by re-tokenizing the text: its gaps are held to twice its count.
        let slack = if imported { t.saturating_add(2) } else { 0 };
        if let Some(n) = r
            .output_events
            .filter(|&n| r.ok && n > t.saturating_add(slack))
        {
            return Err(broken(
                Invariant::GapsFitTokens,
                "output_events".into(),
                format!("{n} content events for {t} output tokens: expected at most {t}"),
            ));
        }
        if gaps.len() as u64 >= u64::from(t.max(1)) + u64::from(slack) && !gaps.is_empty() {
            return Err(broken(
                Invariant::GapsFitTokens,
                "itl_us".into(),
                format!(
                    "{} inter-token gaps for {t} output tokens: expected at most {}",
                    gaps.len(),
                    t.saturating_sub(1) + slack
                ),
            ));
        }
    }
    if let (Some(t), Some(e)) = (r.ttft_us, r.e2e_us) {
        let sum: u64 = gaps.iter().map(|&g| u64::from(g)).sum();
        // Each gap is a difference of µs-truncated stamps, so they telescope exactly; allow
        // 1 µs per gap for writers that round each gap independently.
        if t + sum > e + gaps.len() as u64 {
            return Err(broken(
                Invariant::GapsFitRequest,
                "itl_us".into(),
                format!(
                    "gaps add up to {sum} µs after a first token at {t} µs, past the end at {e} µs"
                ),
            ));
        }
    }
    Ok(())
}

fn success_fields(r: &RowView<'_>) -> Checked {
    let missing = |name: &str, what: &str| {
        broken(
            Invariant::SuccessComplete,
            name.into(),
            format!("null for a successful request: expected {what}"),
        )
    };
    let t = r
        .ttft_us
        .ok_or_else(|| missing("ttft_us", "the time to first token"))?;
    r.e2e_us
        .ok_or_else(|| missing("e2e_us", "the end-to-end time"))?;
    r.output_tokens
        .ok_or_else(|| missing("output_tokens", "the output token count"))?;
    if t == 0 {
        return Err(broken(
            Invariant::FirstTokenAfterSend,
            "ttft_us".into(),
            "0 µs for a successful request: expected a positive time to first token (a token \
             cannot arrive in the same microsecond the request is sent)"
                .into(),
        ));
    }
    // The end may share the first token's stamp (decode time 0): a server can send every token
    // and `[DONE]` in one write, and the collector stamps bytes when they arrive. An end before
    // the first token is refused above, for every row; a run in which every multi-token request
    // does so is excluded (`not_streamed`).
    Ok(())
}
