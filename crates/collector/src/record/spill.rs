//! The rows of a run live on disk, not in memory: each finished request is a line of the
//! journal, and the collector keeps only where it is and when it was sent. The run file is
//! written from the journal in one stream — the rows in send order, column by column — so the
//! collector's memory stays flat however long the run (a 24-hour soak holds no more than a
//! minute's run), and what the run file says is exactly what the journal holds.
//!
//! A row that could not be journaled (a full disk) is kept in memory instead, so it still
//! reaches the run file if that can be written.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sloscope_core::schema::{Repeat, RequestColumns, RequestRow, Run};

use crate::record::journal::LineAt;

/// Where one row is.
#[derive(Debug, Clone, Copy)]
enum Place {
    Journal(LineAt),
    Memory(usize),
}

/// One row as the collector keeps it: 16 bytes, whatever the row holds (a 200,000-request run
/// keeps 3.2 MB). `at` is the journal line's offset (39 bits) and length (24 bits), or, with
/// the top bit set, the index of a row kept in memory.
#[derive(Debug, Clone, Copy)]
struct Kept {
    send: u64,
    at: u64,
}

const IN_MEMORY: u64 = 1 << 63;
const LEN_BITS: u32 = 24;

impl Kept {
    /// `None` when the line is too far or too long to pack (kept in memory instead).
    fn journal(send: u64, at: LineAt) -> Option<Kept> {
        let fits = at.offset < 1 << (63 - LEN_BITS) && u64::from(at.len) < 1 << LEN_BITS;
        fits.then(|| Kept {
            send,
            at: at.offset << LEN_BITS | u64::from(at.len),
        })
    }

    fn memory(send: u64, index: usize) -> Kept {
        Kept {
            send,
            at: IN_MEMORY | index as u64,
        }
    }

    fn place(self) -> Place {
        if self.at & IN_MEMORY != 0 {
            Place::Memory((self.at & !IN_MEMORY) as usize)
        } else {
            Place::Journal(LineAt {
                offset: self.at >> LEN_BITS,
                len: (self.at & ((1 << LEN_BITS) - 1)) as u32,
            })
        }
    }
}

/// The rows of one repeat: where each is, in the order they finished, and what the columns
/// need to know before they are written.
#[derive(Debug, Default)]
pub struct RepeatRows {
    /// The repeat's index.
    pub index: u32,
    /// In send order (ties in the order they finished), as `RequestColumns::from_rows` orders
    /// them: a row finishing is inserted where it belongs, near the end.
    rows: Vec<Kept>,
    kept: Vec<RequestRow>,
    /// Requests that succeeded.
    pub ok: usize,
    /// The first failure's reason, and whether it was the client's (an HTTP 4xx).
    pub first_error: Option<(String, bool)>,
    all_intended: bool,
    any_cap: bool,
    any_events: bool,
    any_resent: bool,
    any_cached: bool,
    any_drafted: bool,
    any_accepted: bool,
    any_session: bool,
}

impl RepeatRows {
    /// No rows yet.
    pub fn new(index: u32) -> RepeatRows {
        RepeatRows {
            index,
            all_intended: true,
            ..RepeatRows::default()
        }
    }

    /// Requests recorded.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No request recorded.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Records `row`, at `at` in the journal, or in memory when it could not be journaled;
    /// `client_error`: it failed with an HTTP 4xx.
    pub fn add(&mut self, row: RequestRow, at: Option<LineAt>, client_error: bool) {
        self.all_intended &= row.intended_offset_us.is_some();
        self.any_cap |= row.max_output_tokens.is_some();
        self.any_events |= row.output_events.is_some();
        self.any_resent |= row.resent;
        self.any_cached |= row.server.cached_prompt_tokens.is_some();
        self.any_drafted |= row.server.draft_tokens.is_some();
        self.any_accepted |= row.server.draft_accepted_tokens.is_some();
        self.any_session |= row.turn.session.is_some();
        match &row.error {
            None => self.ok += 1,
            Some(e) => {
                self.first_error
                    .get_or_insert_with(|| (e.clone(), client_error));
            }
        }
        let send = row.send_offset_us;
        let kept = match at.and_then(|at| Kept::journal(send, at)) {
            Some(k) => k,
            None => {
                self.kept.push(row);
                Kept::memory(send, self.kept.len() - 1)
            }
        };
        let i = self.rows.partition_point(|r| r.send <= send);
        self.rows.insert(i, kept);
    }

    /// The rows in send order (ties in the order they finished).
    fn in_send_order(&self) -> impl Iterator<Item = Place> + '_ {
        self.rows.iter().map(|r| r.place())
    }
}

/// Reads rows back from the journal.
struct Reader {
    file: BufReader<File>,
    buf: Vec<u8>,
}

impl Reader {
    fn open(journal: &Path) -> std::io::Result<Reader> {
        Ok(Reader {
            file: BufReader::with_capacity(64 * 1024, File::open(journal)?),
            buf: Vec::new(),
        })
    }

    fn row(&mut self, rows: &RepeatRows, place: Place) -> std::io::Result<RequestRow> {
        match place {
            Place::Memory(i) => Ok(rows.kept[i].clone()),
            Place::Journal(at) => {
                self.file.seek(SeekFrom::Start(at.offset))?;
                self.buf.resize(at.len as usize, 0);
                self.file.read_exact(&mut self.buf)?;
                // The line is the row's fields plus `line` and `repeat`, which a row ignores.
                serde_json::from_slice(&self.buf).map_err(std::io::Error::other)
            }
        }
    }
}

/// The repeats with their requests read back into memory: for a run small enough to be
/// judged as it is collected (a capacity trial).
pub fn materialize(run: &Run, rows: &[RepeatRows], journal: &Path) -> std::io::Result<Run> {
    let mut reader = Reader::open(journal)?;
    let mut full = run.clone();
    for (rep, rr) in full.repeats.iter_mut().zip(rows) {
        let mut all = Vec::with_capacity(rr.len());
        for place in rr.in_send_order() {
            all.push(reader.row(rr, place)?);
        }
        rep.requests = RequestColumns::from_rows(all);
    }
    Ok(full)
}

/// The columns of one repeat, each streamed into its own scratch file, then joined.
struct Columns {
    dir: PathBuf,
    files: Vec<(&'static str, BufWriter<File>)>,
    first: bool,
}

const ALWAYS: [&str; 10] = [
    "send_offset_us",
    "ttft_us",
    "e2e_us",
    "prompt_tokens",
    "prompt_tokens_source",
    "output_tokens",
    "output_tokens_source",
    "server_queue_us",
    "error",
    "itl_us",
];

impl Columns {
    fn new(dir: &Path, rows: &RepeatRows) -> std::io::Result<Columns> {
        let mut names: Vec<&'static str> = ALWAYS.to_vec();
        if rows.all_intended && !rows.is_empty() {
            names.insert(1, "intended_offset_us");
        }
        for (on, name) in [
            (rows.any_cap, "max_output_tokens"),
            (rows.any_events, "output_events"),
            (rows.any_resent, "resent"),
            (rows.any_cached, "cached_prompt_tokens"),
            (rows.any_drafted, "draft_tokens"),
            (rows.any_accepted, "draft_accepted_tokens"),
            (rows.any_session, "session"),
            (rows.any_session, "turn"),
        ] {
            if on {
                names.push(name);
            }
        }
        std::fs::create_dir_all(dir)?;
        let mut files = Vec::new();
        for name in names {
            let f = File::create(dir.join(name))?;
            files.push((name, BufWriter::with_capacity(32 * 1024, f)));
        }
        Ok(Columns {
            dir: dir.to_path_buf(),
            files,
            first: true,
        })
    }

    fn push(&mut self, r: &RequestRow) -> std::io::Result<()> {
        let sep: &[u8] = if self.first { b"" } else { b"," };
        self.first = false;
        for (name, w) in &mut self.files {
            w.write_all(sep)?;
            match *name {
                "send_offset_us" => serde_json::to_writer(&mut *w, &r.send_offset_us),
                "intended_offset_us" => serde_json::to_writer(&mut *w, &r.intended_offset_us),
                "ttft_us" => serde_json::to_writer(&mut *w, &r.ttft_us),
                "e2e_us" => serde_json::to_writer(&mut *w, &r.e2e_us),
                "prompt_tokens" => serde_json::to_writer(&mut *w, &r.prompt_tokens),
                "prompt_tokens_source" => serde_json::to_writer(&mut *w, &r.prompt_tokens_source),
                "output_tokens" => serde_json::to_writer(&mut *w, &r.output_tokens),
                "output_tokens_source" => serde_json::to_writer(&mut *w, &r.output_tokens_source),
                "server_queue_us" => serde_json::to_writer(&mut *w, &r.server_queue_us),
                "error" => serde_json::to_writer(&mut *w, &r.error),
                "itl_us" => serde_json::to_writer(&mut *w, &r.itl_us),
                "max_output_tokens" => serde_json::to_writer(&mut *w, &r.max_output_tokens),
                "output_events" => serde_json::to_writer(&mut *w, &r.output_events),
                "cached_prompt_tokens" => {
                    serde_json::to_writer(&mut *w, &r.server.cached_prompt_tokens)
                }
                "draft_tokens" => serde_json::to_writer(&mut *w, &r.server.draft_tokens),
                "draft_accepted_tokens" => {
                    serde_json::to_writer(&mut *w, &r.server.draft_accepted_tokens)
                }
                "session" => serde_json::to_writer(&mut *w, &r.turn.session),
                "turn" => serde_json::to_writer(&mut *w, &r.turn.turn),
                _ => serde_json::to_writer(&mut *w, &r.resent),
            }
            .map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    /// `{"send_offset_us":[…],…}` into `out`; the scratch files are removed.
    fn finish(self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"{")?;
        for (i, (name, w)) in self.files.into_iter().enumerate() {
            w.into_inner().map_err(|e| e.into_error())?.sync_data()?;
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "\"{name}\":[")?;
            let path = self.dir.join(name);
            std::io::copy(&mut File::open(&path)?, out)?;
            out.write_all(b"]")?;
            let _ = std::fs::remove_file(path);
        }
        let _ = std::fs::remove_dir(&self.dir);
        out.write_all(b"}")
    }
}

/// The header of a run as written: `(before, after)` the `"repeats":[]` it is spliced at.
fn split_header(run: &Run) -> std::io::Result<(String, String)> {
    let mut head = run.clone();
    head.repeats.clear();
    let text = serde_json::to_string(&head).map_err(std::io::Error::other)?;
    const AT: &str = "\"repeats\":[]";
    let i = text
        .find(AT)
        .ok_or_else(|| std::io::Error::other("a run header without its repeats"))?;
    Ok((text[..i].to_string(), text[i + AT.len()..].to_string()))
}

fn write_repeat(
    out: &mut impl Write,
    meta: &Repeat,
    rows: &RepeatRows,
    reader: &mut Reader,
    scratch: &Path,
) -> std::io::Result<()> {
    let mut m = meta.clone();
    m.requests = RequestColumns::default();
    let text = serde_json::to_string(&m).map_err(std::io::Error::other)?;
    let key = "\"requests\":";
    let i = text
        .find(key)
        .ok_or_else(|| std::io::Error::other("a repeat without its requests"))?;
    let after = &text[i + key.len()..];
    // The empty columns object the repeat serialized with: skip it, balanced.
    let end = after.find('}').map_or(after.len(), |j| j + 1);
    out.write_all(&text.as_bytes()[..i + key.len()])?;
    let mut cols = Columns::new(scratch, rows)?;
    for place in rows.in_send_order() {
        cols.push(&reader.row(rows, place)?)?;
    }
    cols.finish(out)?;
    out.write_all(&after.as_bytes()[end..])
}

/// Writes the run file at `path` from the run's header and its rows in the journal,
/// atomically (a temporary name, fsync, rename), in a stream.
pub fn write_run(
    path: &Path,
    run: &Run,
    rows: &[RepeatRows],
    journal: &Path,
) -> std::io::Result<()> {
    let (before, after) = split_header(run)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let scratch = journal.with_extension(format!("columns-{}", std::process::id()));
    let result = (|| {
        let mut out = BufWriter::with_capacity(256 * 1024, File::create(&tmp)?);
        let mut reader = Reader::open(journal)?;
        out.write_all(before.as_bytes())?;
        out.write_all(b"\"repeats\":[")?;
        for (i, (meta, rr)) in run.repeats.iter().zip(rows).enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_repeat(&mut out, meta, rr, &mut reader, &scratch)?;
        }
        out.write_all(b"]")?;
        out.write_all(after.as_bytes())?;
        out.write_all(b"\n")?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_dir_all(&scratch);
    }
    result
}

/// Rewrites the header of a run file written from `old` to say what `new` says (the server's
/// exit status and log, known once it stopped), streaming the repeats across unchanged.
pub fn rewrite_header(path: &Path, old: &Run, new: &Run) -> std::io::Result<()> {
    let (old_before, old_after) = split_header(old)?;
    let (new_before, new_after) = split_header(new)?;
    let len = std::fs::metadata(path)?.len();
    let (b, a) = (old_before.len() as u64, old_after.len() as u64 + 1);
    let mut f = File::open(path)?;
    let mut head = vec![0u8; old_before.len()];
    f.read_exact(&mut head)?;
    if head != old_before.as_bytes() || len < b + a {
        return Err(std::io::Error::other(
            "the run file is not the one written: its header differs",
        ));
    }
    let mut body = f.take(len - b - a);
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        out.write_all(new_before.as_bytes())?;
        std::io::copy(&mut body, &mut out)?;
        out.write_all(new_after.as_bytes())?;
        out.write_all(b"\n")?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use sloscope_core::schema::ServerCounts;

    /// The streamed writer writes every column `RequestColumns::from_rows` makes, the
    /// server's cache and draft counts and the session columns included.
    #[test]
    fn the_streamed_columns_are_the_in_memory_ones() {
        let mut run: Run = serde_json::from_str(include_str!(
            "../../../../static/examples/runs/latency--np1.json"
        ))
        .unwrap();
        run.repeats.truncate(1);
        let rows: Vec<RequestRow> = (0..3u32)
            .map(|i| RequestRow {
                send_offset_us: u64::from(i) * 10,
                ttft_us: Some(5),
                e2e_us: Some(9),
                prompt_tokens: Some(40),
                output_tokens: Some(2),
                itl_us: vec![4],
                server: ServerCounts {
                    cached_prompt_tokens: (i > 0).then_some(32),
                    draft_tokens: (i == 2).then_some(6),
                    draft_accepted_tokens: (i == 2).then_some(4),
                },
                turn: sloscope_core::schema::SessionTurn {
                    session: Some(0),
                    turn: Some(i + 1),
                },
                ..RequestRow::default()
            })
            .collect();
        let mut rr = RepeatRows::new(0);
        for r in rows.clone() {
            rr.add(r, None, false);
        }
        let dir = std::env::temp_dir().join(format!("sloscope-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let journal = dir.join("j.jsonl");
        std::fs::write(&journal, b"").unwrap();
        let path = dir.join("run.json");
        write_run(&path, &run, &[rr], &journal).unwrap();
        let back: Run = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let want = RequestColumns::from_rows(rows);
        assert_eq!(
            want.cached_prompt_tokens,
            Some(vec![None, Some(32), Some(32)])
        );
        assert_eq!(want.turn, Some(vec![Some(1), Some(2), Some(3)]));
        assert_eq!(back.repeats[0].requests, want);
    }
}
