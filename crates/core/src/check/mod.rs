//! Checking: is what the files say true and consistent with itself and with the others? The
//! invariant catalogue (`invariant`) and its checks — on a run, whatever its origin (`run`), on
//! a plan (`plan`), on names that look alike (`names`) — the artifact lineage across records
//! and runs (`lineage`) and the profile contract (`contract`). Depends on `base` and `schema`
//! only.

pub mod contract;
pub mod gate;
pub mod invariant;
pub mod lineage;
pub mod lineage_gate;
pub mod names;
pub mod plan;
pub mod run;
pub mod space;
pub mod text;
