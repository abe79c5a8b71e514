//! sloscope-testkit: helpers for tests and benchmarks only.
//!
//! [`synth`] builds deterministic synthetic runs and lineage records. Everything it makes is
//! labelled `cpu_profile_simulation` unless a test asks otherwise to exercise verdict logic.

pub mod synth;
