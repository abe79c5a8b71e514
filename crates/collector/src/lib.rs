//! sloscope-collector: drives serving profiles against an OpenAI-compatible streaming endpoint
//! and writes run files.
//!
//! Time is measured here, once, at the edge: every event is stamped with a monotonic clock as
//! its bytes arrive. Everything computed from those stamps lives in `sloscope-core`.
//!
//! Five wings, each touching one thing, in order (a file names no later wing; the test command
//! checks it with `scripts/structure.py`): [`record`] (the output directory, journal, spill,
//! atomic writes) → [`wire`] (one timed request and its stream) → [`plan`] (the plan, targets,
//! templates, replayed datasets) → [`server`] (launch, identity, telemetry) → [`load`] (the
//! collection: runner → collect → drive). Beside them, shared by all: [`failure`], [`error`],
//! [`cancel`], [`clock`] and [`progress`]. Above them, the flows: [`gate`] (the quality
//! gate's measurement), [`shard`] (a share of a plan run as one of many), [`k8s`] (a plan as a
//! Kubernetes Indexed Job of shards) and [`external`]
//! (another tool's benchmark run and imported).

pub mod cancel;
pub mod clock;
pub mod error;
pub mod external;
pub mod failure;
pub mod gate;
pub mod k8s;
pub mod load;
pub mod plan;
pub mod progress;
pub mod record;
pub mod server;
pub mod shard;
pub mod wire;
