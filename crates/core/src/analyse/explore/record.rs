//! A configuration search as the analysis records it: whether it ran to its end, each trial as
//! replayed, and the answer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Estimate, Purpose, SearchResult, Settings};
use crate::base::metric::Metric;
use crate::schema::KnobValue;

/// Whether a search ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SearchStatus {
    /// Every step the search asked for is measured, the confirmation included.
    Complete,
    /// It stopped before its end (interrupted, a trial missing or partial): its pick is
    /// provisional.
    Incomplete,
    /// Its trial files contradict the search replayed from them: nothing of it is used.
    Refused,
}

/// One trial as the analysis replayed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrialRow {
    /// Position in the search.
    pub index: u32,
    /// The configuration's name.
    pub name: String,
    /// Each knob's value.
    pub config: BTreeMap<String, KnobValue>,
    /// Why it was run.
    pub purpose: Purpose,
    /// Requests asked for.
    pub requests: u64,
    /// Its file.
    pub file: String,
    /// The primary metric after it (pooled over the configuration's trials but a
    /// confirmation's), with its 95 % interval; `null`: infeasible or not measured.
    pub primary: Option<Estimate>,
    /// Whether every SLO is met with confidence after it; `null`: infeasible.
    pub meets_all: Option<bool>,
    /// Why the server could not serve it, for an infeasible trial.
    pub infeasible: Option<String>,
}

/// A profile's configuration search, recomputed from its trial files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchReport {
    /// Complete, incomplete or refused.
    pub status: SearchStatus,
    /// Why it is incomplete or refused.
    pub problem: Option<String>,
    /// The space and its budget in one line.
    pub space: String,
    /// The knobs, in the space's order.
    pub knobs: Vec<String>,
    /// The metric it ranks by.
    pub primary: Metric,
    /// The settings replayed.
    pub settings: Settings,
    /// The answer (of the trials replayed, when it stopped early).
    pub result: SearchResult,
    /// Every trial, in search order.
    pub trials: Vec<TrialRow>,
}
