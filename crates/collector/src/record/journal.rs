//! Appending finished requests to the journal as they complete, so nothing collected is lost
//! when the collector, the server or the disk fails. The format lives in the core
//! (`sloscope_core::schema::journal`) so `analyze` and the page can read it back.

use std::io::Write;
use std::path::{Path, PathBuf};

use sloscope_core::schema::{
    JournalLine, MemorySample, MetricSample, RequestRow, Run, JOURNAL_KIND, SCHEMA_VERSION,
};

/// Where a line is in the journal: its first byte and its length without the newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAt {
    /// Offset of its first byte.
    pub offset: u64,
    /// Length without the newline.
    pub len: u32,
}

/// An open journal file.
///
/// After the first failed write the journal is closed for writing: the torn bytes of that
/// line are cut off when the file system allows it (else recovery drops that one last line),
/// and every later write fails at once, so the journal holds exactly the first
/// [`Journal::requests`] finished requests and nothing torn in the middle.
pub struct Journal {
    file: std::fs::File,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes known to be on the file (whole lines).
    len: u64,
    /// Request lines written whole.
    requests: u64,
    /// The first write error.
    failed: Option<String>,
}

impl Journal {
    /// Creates `path` and writes the header (the run's metadata).
    pub fn create(path: &Path, run: &Run) -> std::io::Result<Journal> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::File::create(path)?;
        let mut j = Journal {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(4096),
            len: 0,
            requests: 0,
            failed: None,
        };
        let mut header = run.clone();
        header.repeats.clear();
        j.line(&JournalLine::Header {
            kind: JOURNAL_KIND.into(),
            schema_version: SCHEMA_VERSION.into(),
            run: Box::new(header),
        })?;
        Ok(j)
    }

    /// Path of the journal.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Request lines written whole.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    fn line(&mut self, line: &JournalLine) -> std::io::Result<LineAt> {
        if let Some(e) = &self.failed {
            return Err(std::io::Error::other(format!(
                "the journal stopped at an earlier write error: {e}"
            )));
        }
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, line).map_err(std::io::Error::other)?;
        self.buf.push(b'\n');
        // One write per line: a crash leaves at most one torn last line, which recovery drops.
        match self.file.write_all(&self.buf) {
            Ok(()) => {
                let at = LineAt {
                    offset: self.len,
                    len: (self.buf.len() - 1) as u32,
                };
                self.len += self.buf.len() as u64;
                if matches!(line, JournalLine::Request { .. }) {
                    self.requests += 1;
                }
                Ok(at)
            }
            Err(e) => {
                // Cut the torn line off (shrinking needs no space); if even that fails,
                // recovery drops the torn last line.
                let _ = self.file.set_len(self.len);
                self.failed = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// A repeat starts.
    pub fn repeat(&mut self, repeat: u32, warmup_requests: u32) -> std::io::Result<()> {
        self.line(&JournalLine::Repeat {
            repeat,
            warmup_requests,
        })
        .map(|_| ())
    }

    /// A request finished: where its line is.
    pub fn request(&mut self, repeat: u32, row: &RequestRow) -> std::io::Result<LineAt> {
        self.line(&JournalLine::Request {
            repeat,
            row: row.clone(),
        })
    }

    /// A memory sample.
    pub fn memory(&mut self, repeat: u32, sample: &MemorySample) -> std::io::Result<()> {
        self.line(&JournalLine::Memory {
            repeat,
            sample: sample.clone(),
        })
        .map(|_| ())
    }

    /// A metrics scrape.
    pub fn metrics(&mut self, repeat: u32, sample: &MetricSample) -> std::io::Result<()> {
        self.line(&JournalLine::Metrics {
            repeat,
            sample: sample.clone(),
        })
        .map(|_| ())
    }

    /// The run file was written: the journal is no longer needed.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_failed_write_nothing_more_is_written_and_the_count_is_exact() {
        let dir = std::env::temp_dir().join(format!("sloscope-journal-{}", std::process::id()));
        let path = dir.join("j.journal.jsonl");
        let mut run: Run = serde_json::from_str(include_str!(
            "../../../../static/examples/runs/latency--np1.json"
        ))
        .unwrap();
        run.repeats.clear();
        let mut j = Journal::create(&path, &run).unwrap();
        let row = RequestRow::default();
        j.request(0, &row).unwrap();
        j.request(0, &row).unwrap();
        // The disk fills up: every write from now on fails with ENOSPC.
        j.file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        assert!(j.request(0, &row).is_err());
        j.file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let later = j.request(0, &row).unwrap_err().to_string();
        assert!(
            later.contains("stopped at an earlier write error"),
            "{later}"
        );
        assert_eq!(j.requests(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "header and two whole requests");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
