//! sloscope-testkit: helpers for tests and benchmarks only.
//!
//! - [`server`]: a scripted OpenAI-compatible streaming server on 127.0.0.1 with injected,
//!   known TTFT, gaps, errors, stalls and disconnects. It labels itself as a simulation
//!   (`x-sloscope-simulation` header), so runs against it can never be `accept`ed.
//! - [`hostile`]: a server that errs, lies or redirects in the backends' own shapes, one
//!   misbehavior at a time, with a second address that counts every connection sent to it.
//! - [`synth`]: deterministic synthetic runs and lineage records.
//! - [`landscape`]: seeded serving landscapes (latency, SLO metric and memory by launch flags)
//!   for the configuration search, and the search, the grid and random search run on them.
//! - [`docs`]: the user guide's generated parts, held to the code.

pub mod docs;
pub mod draws;
pub mod hostile;
pub mod landscape;
pub mod server;
pub mod synth;
