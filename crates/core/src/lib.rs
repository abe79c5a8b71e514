//! sloscope-core: the pure part of sloscope, shared by the collector, the CLI and the page.
//!
//! It owns the file schema, the one read path ([`read::read_document`]), the statistics, the
//! lineage check, the profile contract, the summaries recomputed from raw requests, the SLO
//! verdicts and the report view-model. It does no I/O, reads no clock and builds for
//! `wasm32-unknown-unknown`, so the page and the CLI compute the same numbers from the same
//! code.
//!
//! Modules, in the direction data flows: `read` (→ `load`, `schema`, `validate`, `error`) →
//! `analysis` (→ `lineage`, `contract`, `compare`, `summary`, `verdict`, `baseline`) →
//! `report` (result types) → `view` (rows and cells) → `render` (text, Markdown).

pub mod analysis;
pub mod baseline;
pub mod bootstrap;
pub mod capacity;
pub mod compare;
pub mod contract;
pub mod error;
pub mod flags;
pub mod fmt;
pub mod foreign;
pub mod import;
pub mod lineage;
pub mod load;
pub mod metric;
pub mod problem;
pub mod protocol;
pub mod read;
pub mod render;
pub mod replay;
pub mod report;
pub mod rng;
pub mod schema;
#[cfg(feature = "schema")]
pub mod schema_export;
pub mod stats;
pub mod summary;
pub mod telemetry;
pub mod traffic;
pub mod validate;
pub mod verdict;
pub mod view;

pub use analysis::{analyze, analyze_with, AnalyzeOptions};
pub use error::{LoadError, LoadErrorKind};
pub use read::{read_document, Document, LoadedFile};
pub use report::Analysis;
