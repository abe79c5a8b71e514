//! sloscope-web: the report page, a Yew app built by Trunk.
//!
//! Files are read in the browser and never leave it. Every number on the page comes from
//! `sloscope-core` — the same functions `sloscope analyze` calls — so the page and the CLI
//! cannot disagree.

pub mod address;
pub mod app;
/// The charts (their own crate, so they are tested natively against SVG snapshots).
pub use sloscope_charts as charts;
pub mod components;
pub mod engine;
pub mod examples;
pub mod keep;
pub mod load;
pub mod placing;
pub mod protocol;
pub mod report;
pub mod state;
pub mod worker;

pub use app::App;
