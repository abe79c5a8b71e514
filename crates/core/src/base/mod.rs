//! What every stage shares: metric names and directions, the statistics, the one generator,
//! traffic shapes, server metric names, number formatting, problem codes and the header names
//! of the test protocol. Depends on nothing else in the crate.

pub mod blocks;
pub mod confidence;
pub mod divergence;
pub mod fmt;
pub mod metric;
pub mod order;
pub mod problem;
pub mod protocol;
pub mod rng;
pub mod sort;
pub mod special;
pub mod stats;
pub mod telemetry;
pub mod time;
pub mod traffic;
