//! Appending finished requests to the journal as they complete, so nothing collected is lost
//! when the collector, the server or the disk fails. The format lives in the core
//! (`sloscope_core::schema::journal`) so `analyze` and the page can read it back.

use std::io::Write;
use std::path::{Path, PathBuf};

use sloscope_core::schema::{
    JournalLine, MemorySample, MetricSample, RequestRow, Run, JOURNAL_KIND, SCHEMA_VERSION,
};

/// An open journal file.
pub struct Journal {
    file: std::fs::File,
    path: PathBuf,
    buf: Vec<u8>,
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

    fn line(&mut self, line: &JournalLine) -> std::io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, line).map_err(std::io::Error::other)?;
        self.buf.push(b'\n');
        // One write per line: a crash leaves at most one torn last line, which recovery drops.
        self.file.write_all(&self.buf)
    }

    /// A repeat starts.
    pub fn repeat(&mut self, repeat: u32, warmup_requests: u32) -> std::io::Result<()> {
        self.line(&JournalLine::Repeat {
            repeat,
            warmup_requests,
        })
    }

    /// A request finished.
    pub fn request(&mut self, repeat: u32, row: &RequestRow) -> std::io::Result<()> {
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
    }

    /// A metrics scrape.
    pub fn metrics(&mut self, repeat: u32, sample: &MetricSample) -> std::io::Result<()> {
        self.line(&JournalLine::Metrics {
            repeat,
            sample: sample.clone(),
        })
    }

    /// The run file was written: the journal is no longer needed.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
