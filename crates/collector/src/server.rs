//! The server under test: `process`: launch and stop it per candidate, ask its `identity`, and sample its
//! `telemetry` (`/metrics` read by `prometheus`, memory by the `sampler`) alongside the load.

pub mod identity;
pub mod process;
pub mod prometheus;
pub mod sampler;
pub mod telemetry;
