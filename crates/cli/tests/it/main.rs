//! The real `sloscope` binary, end to end: one test binary, one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod analyze;
mod capacity;
mod collect;
mod common;
mod compare;
mod containerfile;
mod docs;
mod docs_examples;
mod endpoint;
mod faults;
mod gate;
mod gate_reference;
mod hostile;
mod import;
mod llama;
mod search;
mod sessions;
mod shard;
mod signals;
mod traffic;
