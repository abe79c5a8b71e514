//! The crash-safe journal: one JSON line per finished request (and per telemetry sample),
//! appended while a run is collected. When the final run file was never written (a killed
//! collector, a full disk), the journal is read back as a run marked `partial`.

use serde::{Deserialize, Serialize};

use super::{Gaps, MemorySample, MetricSample, RequestColumns, Run, TokenSource};

/// `kind` of journal files (first line).
pub const JOURNAL_KIND: &str = "run_journal";

/// One finished request, as the collector produces it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    /// Send time, µs since the repeat started.
    pub send_offset_us: u64,
    /// Open loop: the intended send time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_offset_us: Option<u64>,
    /// Time to first content, µs.
    pub ttft_us: Option<u64>,
    /// Send to end of stream, µs.
    pub e2e_us: Option<u64>,
    /// Prompt tokens.
    pub prompt_tokens: Option<u32>,
    /// Where the prompt count came from.
    pub prompt_tokens_source: Option<TokenSource>,
    /// Output tokens.
    pub output_tokens: Option<u32>,
    /// Where the output count came from.
    pub output_tokens_source: Option<TokenSource>,
    /// Server-side queue wait, µs, where the server tells it.
    pub server_queue_us: Option<u64>,
    /// `None` on success.
    pub error: Option<String>,
    /// Gaps between consecutive content events, µs.
    pub itl_us: Vec<u32>,
    /// The output cap (`max_tokens`) the request was sent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Content events streamed (each carries at least one token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_events: Option<u32>,
    /// Sent a second time, on a fresh connection, after the server closed a reused one as the
    /// request went out: the server may have received it twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resent: bool,
    /// What the server reports of its prefix cache and speculative decoding.
    #[serde(default, flatten)]
    pub server: ServerCounts,
    /// Multi-turn sessions: which session of the repeat, and which turn of it (from 1).
    #[serde(default, flatten)]
    pub turn: SessionTurn,
}

/// Where a request sits in a multi-turn session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTurn {
    /// The session, numbered within its repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    /// The turn within the session, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
}

/// What a server reports of one request's prefix-cache hits and speculative decoding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCounts {
    /// Prompt tokens served from the prefix cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u32>,
    /// Draft tokens proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_tokens: Option<u32>,
    /// Draft tokens accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_accepted_tokens: Option<u32>,
}

/// An optional column: kept when any row has a value.
struct OptColumn<T> {
    any: bool,
    values: Vec<Option<T>>,
}

impl<T: Copy> OptColumn<T> {
    fn of(rows: &[RequestRow], get: fn(&RequestRow) -> Option<T>) -> Self {
        OptColumn {
            any: rows.iter().any(|r| get(r).is_some()),
            values: rows.iter().map(get).collect(),
        }
    }

    fn done(self) -> Option<Vec<Option<T>>> {
        self.any.then_some(self.values)
    }
}

impl RequestColumns {
    /// Column-wise form of rows, sorted by send time. `intended_offset_us` is kept only when
    /// every row has one (open loop); `max_output_tokens` and `output_events` when any row has
    /// one.
    pub fn from_rows(mut rows: Vec<RequestRow>) -> RequestColumns {
        // One row per request: the standard sort in place (not `base::order`'s, for lists).
        rows.sort_by_key(|r| r.send_offset_us);
        let cached = OptColumn::of(&rows, |r| r.server.cached_prompt_tokens);
        let drafted = OptColumn::of(&rows, |r| r.server.draft_tokens);
        let accepted = OptColumn::of(&rows, |r| r.server.draft_accepted_tokens);
        let session = OptColumn::of(&rows, |r| r.turn.session);
        let turn = OptColumn::of(&rows, |r| r.turn.turn);
        let open_loop = !rows.is_empty() && rows.iter().all(|r| r.intended_offset_us.is_some());
        let mut c = RequestColumns::default();
        let mut gaps = Gaps::new();
        let mut intended = Vec::new();
        let caps = rows.iter().any(|r| r.max_output_tokens.is_some());
        let events = rows.iter().any(|r| r.output_events.is_some());
        let resent = rows.iter().any(|r| r.resent);
        let mut resent_col = Vec::new();
        let mut cap_col = Vec::new();
        let mut event_col = Vec::new();
        for r in rows {
            if caps {
                cap_col.push(r.max_output_tokens);
            }
            if events {
                event_col.push(r.output_events);
            }
            if resent {
                resent_col.push(r.resent);
            }
            c.send_offset_us.push(r.send_offset_us);
            if let Some(i) = r.intended_offset_us {
                intended.push(i);
            }
            c.ttft_us.push(r.ttft_us);
            c.e2e_us.push(r.e2e_us);
            c.prompt_tokens.push(r.prompt_tokens);
            c.prompt_tokens_source.push(r.prompt_tokens_source);
            c.output_tokens.push(r.output_tokens);
            c.output_tokens_source.push(r.output_tokens_source);
            c.server_queue_us.push(r.server_queue_us);
            c.error.push(r.error);
            gaps.push(&r.itl_us);
        }
        c.itl_us = gaps;
        c.intended_offset_us = open_loop.then_some(intended);
        c.max_output_tokens = caps.then_some(cap_col);
        c.output_events = events.then_some(event_col);
        c.resent = resent.then_some(resent_col);
        c.cached_prompt_tokens = cached.done();
        c.draft_tokens = drafted.done();
        c.draft_accepted_tokens = accepted.done();
        c.session = session.done();
        c.turn = turn.done();
        c
    }

    /// Request `i` as a row (what [`RequestColumns::from_rows`] takes back).
    pub fn row(&self, i: usize) -> RequestRow {
        let at =
            |c: &Option<Vec<Option<u32>>>| c.as_ref().and_then(|c| c.get(i).copied().flatten());
        RequestRow {
            send_offset_us: self.send_offset_us[i],
            intended_offset_us: self.intended_offset_us.as_ref().map(|c| c[i]),
            ttft_us: self.ttft_us[i],
            e2e_us: self.e2e_us[i],
            prompt_tokens: self.prompt_tokens[i],
            prompt_tokens_source: self.prompt_tokens_source[i],
            output_tokens: self.output_tokens[i],
            output_tokens_source: self.output_tokens_source[i],
            server_queue_us: self.server_queue_us[i],
            error: self.error[i].clone(),
            itl_us: self.itl_us.get(i).to_vec(),
            max_output_tokens: at(&self.max_output_tokens),
            output_events: at(&self.output_events),
            resent: self.resent.as_ref().is_some_and(|c| c[i]),
            server: ServerCounts {
                cached_prompt_tokens: at(&self.cached_prompt_tokens),
                draft_tokens: at(&self.draft_tokens),
                draft_accepted_tokens: at(&self.draft_accepted_tokens),
            },
            turn: SessionTurn {
                session: at(&self.session),
                turn: at(&self.turn),
            },
        }
    }
}

/// A journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum JournalLine {
    /// First line: the run's metadata (its `repeats` empty).
    Header {
        /// Always `run_journal`.
        kind: String,
        /// `MAJOR.MINOR`.
        schema_version: String,
        /// The run being collected.
        run: Box<Run>,
    },
    /// A repeat started.
    Repeat {
        /// Its index.
        repeat: u32,
        /// Warm-up requests sent before it.
        warmup_requests: u32,
    },
    /// A finished request.
    Request {
        /// Repeat index.
        repeat: u32,
        /// The request.
        #[serde(flatten)]
        row: RequestRow,
    },
    /// A memory sample.
    Memory {
        /// Repeat index.
        repeat: u32,
        /// The sample.
        #[serde(flatten)]
        sample: MemorySample,
    },
    /// A metrics scrape.
    Metrics {
        /// Repeat index.
        repeat: u32,
        /// The sample.
        #[serde(flatten)]
        sample: MetricSample,
    },
}
