//! The collector library's errors. The binary turns them into messages and exit codes; the
//! library never decides how to print.

use std::path::PathBuf;

/// What stopped a collection before or between runs (what happens to one request is a
/// [`crate::failure::FailureKind`] in its row instead).
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A file or directory could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A run file could not be written; the journal holds exactly `journaled` of its requests.
    #[error("{path}: cannot write the run file: {source}; {journaled} of its {total} finished requests are in {journal} (`sloscope analyze` reads it)")]
    RunFile {
        /// The run file.
        path: PathBuf,
        /// Its journal.
        journal: PathBuf,
        /// Requests the journal holds, whole.
        journaled: u64,
        /// Requests the run had.
        total: u64,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A result file of an external benchmark could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The plan and the arguments do not fit together.
    #[error("{0}")]
    Plan(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
}

impl CollectError {
    /// A write error at `path`.
    pub fn write(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> CollectError {
        let path = path.into();
        move |source| CollectError::Write { path, source }
    }
}
