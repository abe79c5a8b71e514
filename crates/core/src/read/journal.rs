//! Reading a collector journal back as a partial run: one JSON line per finished request (and
//! per telemetry sample) after a header with the run's metadata (the format is
//! `crate::schema::journal`).

use crate::read::error::{LoadError, LoadErrorKind};
use crate::schema::journal::{JournalLine, RequestRow, JOURNAL_KIND};
use crate::schema::{MemorySample, MetricSample, Repeat, RequestColumns, Run, RunStatus};

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

/// One line, read strictly (a repeated key is refused, not last-wins) and typed.
fn journal_line(line: &str) -> Result<JournalLine, (String, LoadErrorKind)> {
    let v = crate::read::strict::value(line.as_bytes()).map_err(|e| match e.line {
        Some(_) => (
            format!("not a journal line: {}", e.message),
            LoadErrorKind::Syntax,
        ),
        None => (format!("{}: {}", e.path, e.message), LoadErrorKind::Invalid),
    })?;
    serde_json::from_value(v)
        .map_err(|e| (format!("not a journal line: {e}"), LoadErrorKind::Field))
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
        let parsed = match journal_line(line) {
            Ok(l) => l,
            Err(_) if i + 1 == n && !text.ends_with('\n') => break,
            Err((message, kind)) => return Err(bad(i + 1, message, kind)),
        };
        if let JournalLine::Header { kind, run: r, .. } = parsed {
            if run.is_some() {
                return Err(bad(
                    i + 1,
                    "a second header line: one journal holds one run, and which header to \
                     believe is not for file order to decide [unique_keys]"
                        .into(),
                    LoadErrorKind::Invalid,
                ));
            }
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
