//! The server under test: `process`: launch and stop it per candidate (`target`: a plan
//! target's launch, built once for `run` and `gate`), ask its `identity`, and sample its
//! `telemetry` (`/metrics` read by `prometheus`, memory by the `sampler`) alongside the load.

pub mod identity;
pub mod process;
pub mod prometheus;
pub mod sampler;
pub mod target;
pub mod telemetry;
