//! sloscope-collector: drives serving profiles against an OpenAI-compatible streaming endpoint
//! and writes run files.
//!
//! Time is measured here, once, at the edge: every event is stamped with a monotonic clock as
//! its bytes arrive. Everything computed from those stamps lives in `sloscope-core`.

pub mod cancel;
pub mod client;
pub mod collect;
pub mod config;
pub mod external;
pub mod journal;
pub mod load;
pub mod progress;
pub mod prometheus;
pub mod prompt;
pub mod runner;
pub mod secret;
pub mod server;
pub mod sse;
pub mod stream;
pub mod telemetry;
pub mod write;
