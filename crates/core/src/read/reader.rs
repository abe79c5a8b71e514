//! The one reader of a file's bytes, for every caller (the CLI reads a file, the page a
//! browser `Blob`): it decides how a file is read — a large sloscope run in chunks, its
//! inter-token gaps parsed as they stream past so the file is never held whole; anything else
//! whole — and ends in [`crate::read::read_document`]'s document or error. Callers only move
//! bytes: they feed chunks in order and start again from the first byte when told to.

use crate::read::error::{LoadError, LoadErrorKind};
use crate::read::json::{assemble_run, is_run_prefix, Document};
use crate::read::Importer;
use crate::schema::GapStream;

/// Files smaller than this are read whole: as fast, and simpler.
pub const STREAM_MIN_BYTES: u64 = 1 << 20;
/// The bytes that decide whether a file is a sloscope run.
const HEAD_BYTES: usize = 4096;

enum Mode {
    /// Collecting the first bytes, which decide.
    Head(Vec<u8>),
    /// A sloscope run, gaps parsed as they pass.
    Stream(GapStream),
    /// Everything else, held whole.
    Whole(Vec<u8>),
}

/// What the caller does after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Feed the next chunk (or finish at the end of the file).
    More,
    /// The chunks could not be split as a run streams: feed the file again from its first
    /// byte, whole, for the error with its JSON path.
    Restart,
}

/// Reads one file of a known size.
pub struct Reader {
    name: String,
    size: u64,
    max_whole: Option<u64>,
    importer: Option<Importer>,
    mode: Mode,
}

impl Reader {
    /// A reader of `name`, `size` bytes long. `max_whole` bounds a file read whole (the page's
    /// memory); a run file streams whatever its size.
    pub fn new(name: &str, size: u64, max_whole: Option<u64>) -> Reader {
        Self::with_importer(name, size, max_whole, Some(crate::read::importer()))
    }

    /// [`Reader::new`] with the importer of other tools' files given (none: such a file is
    /// refused with [`LoadErrorKind::NoImporter`]).
    pub fn with_importer(
        name: &str,
        size: u64,
        max_whole: Option<u64>,
        importer: Option<Importer>,
    ) -> Reader {
        let mode = if size >= STREAM_MIN_BYTES {
            Mode::Head(Vec::with_capacity(HEAD_BYTES))
        } else {
            Mode::Whole(Vec::with_capacity(size as usize))
        };
        Reader {
            name: name.to_string(),
            size,
            max_whole,
            importer,
            mode,
        }
    }

    /// Requests parsed so far (a streamed run), for progress.
    pub fn requests(&self) -> usize {
        match &self.mode {
            Mode::Stream(s) => s.requests(),
            _ => 0,
        }
    }

    /// Takes the next chunk.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Next, LoadError> {
        match &mut self.mode {
            Mode::Whole(all) => {
                all.extend_from_slice(chunk);
                Ok(Next::More)
            }
            Mode::Stream(s) => Ok(match s.feed(chunk) {
                Ok(()) => Next::More,
                Err(_) => self.restart_whole()?,
            }),
            Mode::Head(head) => {
                head.extend_from_slice(chunk);
                if head.len() < HEAD_BYTES && (head.len() as u64) < self.size {
                    return Ok(Next::More);
                }
                let head = std::mem::take(head);
                if is_run_prefix(&head) {
                    let mut s = GapStream::with_size(self.size);
                    if s.feed(&head).is_err() {
                        return self.restart_whole();
                    }
                    self.mode = Mode::Stream(s);
                } else {
                    self.whole_allowed()?;
                    self.mode = Mode::Whole(head);
                }
                Ok(Next::More)
            }
        }
    }

    fn whole_allowed(&self) -> Result<(), LoadError> {
        match self.max_whole.filter(|&m| self.size > m) {
            Some(m) => Err(LoadError::new(
                &self.name,
                "$",
                format!(
                    "{:.0} MB is over the limit of {:.0} MB for a file read whole in the browser \
                     (only sloscope run files are streamed; the limit is wasm32's 4 GiB of \
                     memory, which must hold the file and its parsed copy): analyse it with \
                     `sloscope analyze {}`",
                    self.size as f64 / 1e6,
                    m as f64 / (1024.0 * 1024.0),
                    self.name
                ),
                LoadErrorKind::Syntax,
            )),
            None => Ok(()),
        }
    }

    fn restart_whole(&mut self) -> Result<Next, LoadError> {
        self.whole_allowed()?;
        self.mode = Mode::Whole(Vec::new());
        Ok(Next::Restart)
    }

    /// At the end of the file: the document, or `None` when the file must be fed again from
    /// its first byte (a streamed run cut short or malformed: the whole parse then says where,
    /// with the JSON path).
    pub fn end(&mut self) -> Result<Option<Document>, LoadError> {
        match std::mem::replace(&mut self.mode, Mode::Whole(Vec::new())) {
            Mode::Head(bytes) | Mode::Whole(bytes) => {
                crate::read::read_document_with(&self.name, bytes, self.importer).map(Some)
            }
            Mode::Stream(s) => match s.finish() {
                Ok((rest, found)) => assemble_run(&self.name, rest, found).map(Some),
                Err(_) => {
                    self.whole_allowed()?;
                    Ok(None)
                }
            },
        }
    }
}

/// Reads a whole source through a [`Reader`]: `read(at, buf)` fills `buf` from byte `at` and
/// says how many bytes it read (0 at the end). The CLI's files use it; the page, whose reads
/// are asynchronous, drives a [`Reader`] the same way.
pub fn read_with<E>(
    name: &str,
    size: u64,
    max_whole: Option<u64>,
    chunk: usize,
    mut read: impl FnMut(u64, &mut [u8]) -> Result<usize, E>,
) -> Result<Result<Document, LoadError>, E> {
    let mut r = Reader::new(name, size, max_whole);
    let mut buf = vec![0u8; chunk.max(HEAD_BYTES)];
    let mut at = 0u64;
    loop {
        let n = read(at, &mut buf)?;
        if n == 0 {
            match r.end() {
                Ok(Some(doc)) => return Ok(Ok(doc)),
                Ok(None) => {
                    at = 0;
                    continue;
                }
                Err(e) => return Ok(Err(e)),
            }
        }
        at += n as u64;
        match r.feed(&buf[..n]) {
            Ok(Next::More) => {}
            Ok(Next::Restart) => at = 0,
            Err(e) => return Ok(Err(e)),
        }
    }
}
