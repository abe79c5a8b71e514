//! The crash-safe journal: one JSON line per finished request (and per telemetry sample),
//! appended while a run is collected. When the final run file was never written (a killed
//! collector, a full disk), the journal is read back as a run marked `partial`.

use serde::{Deserialize, Serialize};

use crate::error::{LoadError, LoadErrorKind};

use super::{
    Gaps, MemorySample, MetricSample, Repeat, RequestColumns, Run, RunStatus, TokenSource,
};

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
}

impl RequestColumns {
    /// Column-wise form of rows, sorted by send time. `intended_offset_us` is kept only when
    /// every row has one (open loop).
    pub fn from_rows(mut rows: Vec<RequestRow>) -> RequestColumns {
        rows.sort_by_key(|r| r.send_offset_us);
        let open_loop = !rows.is_empty() && rows.iter().all(|r| r.intended_offset_us.is_some());
        let mut c = RequestColumns::default();
        let mut gaps = Gaps::new();
        let mut intended = Vec::new();
        for r in rows {
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
        c
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

/// One repeat as read back from a journal.
#[derive(Default)]
struct Pending {
    index: u32,
    warmup: u32,
    rows: Vec<RequestRow>,
    memory: Vec<MemorySample>,
    metrics: Vec<MetricSample>,
}

/// Files a non-header line under its repeat.
fn add_line(repeats: &mut Vec<Pending>, line: JournalLine) {
    let r = match &line {
        JournalLine::Header { .. } => return,
        JournalLine::Repeat { repeat, .. }
        | JournalLine::Request { repeat, .. }
        | JournalLine::Memory { repeat, .. }
        | JournalLine::Metrics { repeat, .. } => *repeat,
    };
    let p = match repeats.iter().position(|x| x.index == r) {
        Some(p) => p,
        None => {
            repeats.push(Pending {
                index: r,
                ..Default::default()
            });
            repeats.len() - 1
        }
    };
    let slot = &mut repeats[p];
    match line {
        JournalLine::Header { .. } => {}
        JournalLine::Repeat {
            warmup_requests, ..
        } => slot.warmup = warmup_requests,
        JournalLine::Request { row, .. } => slot.rows.push(row),
        JournalLine::Memory { sample, .. } => slot.memory.push(sample),
        JournalLine::Metrics { sample, .. } => slot.metrics.push(sample),
    }
}

/// Rebuilds a partial run from a journal. A torn last line (the writer died mid-line) is
/// dropped; any other bad line is an error naming its line number. The run is not validated
/// here: [`crate::read::read_document`] validates it like any other run.
pub fn recover(file: &str, bytes: &[u8]) -> Result<Run, LoadError> {
    let bad = |line: usize, message: String, kind: LoadErrorKind| {
        LoadError::new(file, format!("line {line}"), message, kind)
    };
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let mut run: Option<Run> = None;
    let mut repeats: Vec<Pending> = Vec::new();
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: JournalLine = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(_) if i + 1 == n && !text.ends_with('\n') => break,
            Err(e) => {
                return Err(bad(
                    i + 1,
                    format!("not a journal line: {e}"),
                    LoadErrorKind::Syntax,
                ))
            }
        };
        if let JournalLine::Header { kind, run: r, .. } = parsed {
            if kind != JOURNAL_KIND {
                return Err(bad(
                    i + 1,
                    format!("kind {kind:?}, expected {JOURNAL_KIND:?}"),
                    LoadErrorKind::Kind,
                ));
            }
            run = Some(*r);
        } else {
            add_line(&mut repeats, parsed);
        }
    }
    let mut run = run.ok_or_else(|| {
        bad(
            1,
            format!("no header line: expected a {JOURNAL_KIND} header first"),
            LoadErrorKind::Kind,
        )
    })?;
    run.repeats = repeats
        .into_iter()
        .filter(|r| !r.rows.is_empty())
        .map(|p| Repeat {
            index: p.index,
            started_at: None,
            warmup_requests: p.warmup,
            requests: RequestColumns::from_rows(p.rows),
            server_metrics: p.metrics,
            server_queue_histogram: None,
            memory: p.memory,
            ..Default::default()
        })
        .collect();
    run.status = RunStatus::Partial;
    run.failure = Some(format!(
        "recovered from the journal {file}: the collector stopped before writing the run file"
    ));
    Ok(run)
}
