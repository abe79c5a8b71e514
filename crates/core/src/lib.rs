//! sloscope-core: the pure part of sloscope, shared by the collector, the CLI and the page.
//! It does no I/O, reads no clock and builds for `wasm32-unknown-unknown`, so the page and the
//! CLI compute the same numbers from the same code.
//!
//! **The flows, and their doors** (the only paths other crates take into the core;
//! `scripts/structure.py` checks it):
//! - *read* a file: [`input`] (bytes → a validated [`Document`]: sloscope's files, journals,
//!   other tools' results imported, replay datasets and traces), over the format, [`schema`];
//! - *analyze* runs: [`analysis`] ([`analyze_all`] → one [`Analysis`]: summaries recomputed
//!   from raw requests, intervals, verdicts, capacity, float baseline, shard assignment), laid
//!   out by [`view`] (the one view-model, and its text and Markdown);
//! - *compare* two sets: [`comparison`] (one `Comparison`, and its words);
//! - *gate* a quantized model: [`gate`] (figures, decision, the default thresholds);
//! - *search* the serving configurations of a plan's `[space]`: [`search`] (the space checked,
//!   the search of one profile as a state machine the collector drives);
//! - where data is *made* (the collector, the test kit): [`measure`] (metrics, traffic, seeded
//!   random numbers, percentiles, protocol headers) and [`checks`] (the physical checks of a
//!   request row, a profile's contract, a plan's refusals).
//!
//! **Behind the doors, the stages** data flows through, each depending only on the ones before
//! it (`scripts/structure.py` holds this too): `base` (metric names, statistics, traffic shapes,
//! formatting) → `schema` (the file format) → `check` (physical checks, lineage, profile
//! contract) → `read` (bytes → validated documents) → `analyse` (summaries, comparison,
//! verdicts, capacity, float baseline) → `show` (the view-model and its printers). They are
//! crate-private; the core's own integration tests see them through the `internals` feature.

// Without `internals`, what only the core's own tests reach through a stage is unused here; the
// native lint build (with the tests, so with `internals`) still finds dead private code.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

// The stages: crate-private, so every other crate goes through the doors below (the core's own
// integration tests, and only they, see the stages through the `internals` feature, which
// its dev-dependency on itself turns on; `scripts/structure.py` checks the other crates'
// paths too).
#[cfg(feature = "internals")]
pub mod analyse;
#[cfg(not(feature = "internals"))]
mod analyse;
#[cfg(feature = "internals")]
pub mod base;
#[cfg(not(feature = "internals"))]
mod base;
#[cfg(feature = "internals")]
pub mod check;
#[cfg(not(feature = "internals"))]
mod check;
#[cfg(feature = "internals")]
pub mod read;
#[cfg(not(feature = "internals"))]
mod read;
#[cfg(feature = "internals")]
pub mod show;
#[cfg(not(feature = "internals"))]
mod show;

// The doors.
pub mod analysis;
pub mod checks;
pub mod comparison;
pub mod gate;
pub mod input;
pub mod measure;
pub mod schema;
#[cfg(feature = "schema")]
pub mod schema_export;
pub mod search;
pub mod view;

pub use analyse::report::Analysis;
pub use analyse::{analyze, analyze_all, analyze_with, AnalyzeOptions};
pub use read::error::{LoadError, LoadErrorKind};
pub use read::{read_document, Document, LoadedFile};
