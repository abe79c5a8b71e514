//! sloscope-core: the pure part of sloscope, shared by the collector, the CLI and the page.
//!
//! It owns the file schema, the one read path ([`read::read_document`]), the statistics, the
//! lineage check, the profile contract, the summaries recomputed from raw requests, the SLO
//! verdicts and the report view-model. It does no I/O, reads no clock and builds for
//! `wasm32-unknown-unknown`, so the page and the CLI compute the same numbers from the same
//! code.
//!
//! The folders are the stages data flows through, each depending only on the ones before it
//! (a test holds this): `base` (metric names, statistics, traffic shapes, formatting) →
//! `schema` (the file format) → `check` (physical checks, lineage, profile contract) → `read`
//! (bytes → validated documents: sniff, sloscope JSON, journals, other tools' files, replay
//! files) → `analyse` (summaries recomputed from raw requests, comparison, verdicts, capacity,
//! float baseline; the result types in `analyse::report`) → `show` (the view-model and its
//! text and Markdown printers).

pub mod analyse;
pub mod base;
pub mod check;
pub mod gate;
pub mod read;
pub mod schema;
#[cfg(feature = "schema")]
pub mod schema_export;
pub mod show;

pub use analyse::report::Analysis;
pub use analyse::{analyze, analyze_all, analyze_with, AnalyzeOptions};
pub use read::error::{LoadError, LoadErrorKind};
pub use read::{read_document, Document, LoadedFile};
