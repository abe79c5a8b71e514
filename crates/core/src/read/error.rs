//! The one error type of reading a file: which file, where in it (a JSON path, or a line of a
//! journal) and what was expected.

/// What went wrong, for callers that react to the category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// Not JSON, or truncated.
    Syntax,
    /// No `kind` field, or not one of ours.
    Kind,
    /// `schema_version` missing, malformed, or of a newer major.
    Version,
    /// A field has the wrong type or is missing.
    Field,
    /// Well-typed but impossible (negative durations, mismatched columns …).
    Invalid,
    /// Another tool's result file, given to a reader built without the importer.
    NoImporter,
}

/// A file that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {path}: {message}")]
pub struct LoadError {
    /// The file.
    pub file: String,
    /// JSON path (`$` for the document itself).
    pub path: String,
    /// What was found and what was expected.
    pub message: String,
    /// Category.
    pub kind: LoadErrorKind,
}

impl LoadError {
    pub fn new(
        file: &str,
        path: impl Into<String>,
        message: impl Into<String>,
        kind: LoadErrorKind,
    ) -> Self {
        LoadError {
            file: file.to_string(),
            path: path.into(),
            message: message.into(),
            kind,
        }
    }
}
