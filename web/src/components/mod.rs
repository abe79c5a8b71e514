//! One component per file.

pub mod canvas;
pub mod charts;
pub mod compare;
pub mod file_list;
pub mod lineage;
pub mod placing;
pub mod profile;
pub mod shards;
pub mod stating;
pub mod toolbar;
