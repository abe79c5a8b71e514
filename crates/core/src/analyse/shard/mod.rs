//! A plan split over several processes (a Kubernetes Indexed Job) and merged back: which cells
//! each shard runs ([`assign`]), and which files of a results tree count ([`merge`]). Merging is
//! analysing: the counted attempts' raw requests go through the same analysis as one host's.

pub mod assign;
pub mod merge;
mod trust;
pub mod types;
