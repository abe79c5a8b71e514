//! Integration tests of sloscope-core: one binary, one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod analysis;
mod bad_input;
mod capacity;
mod chunked;
mod complete;
mod coverage;
mod drawn;
mod first_screen;
mod gate;
mod invariant_cases;
mod invariants;
mod lineage_records;
mod metamorphic;
mod peer_artifacts;
mod peers;
mod peers_hostile;
mod records;
mod regression;
mod schema_files;
mod seed;
mod semantic;
mod shards;
mod signals;
mod snapshots;
mod trust;
