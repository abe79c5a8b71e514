//! sloscope-core: the pure part of sloscope, shared by the collector, the CLI and the page.
//!
//! It owns the file schema, the statistics, the lineage check, the profile contract, the
//! summaries recomputed from raw requests, the SLO verdicts and the report view-model. It does
//! no I/O, reads no clock and builds for `wasm32-unknown-unknown`, so the page and the CLI
//! compute the same numbers from the same code.

pub mod analysis;
pub mod baseline;
pub mod compare;
pub mod contract;
pub mod import;
pub mod lineage;
pub mod load;
pub mod metric;
pub mod render;
pub mod schema;
#[cfg(feature = "schema")]
pub mod schema_export;
pub mod stats;
pub mod summary;
pub mod telemetry;
pub mod validate;
pub mod verdict;

pub use analysis::{analyze, Analysis};
pub use load::{parse_document, parse_document_owned, Document, LoadError, LoadedFile};
