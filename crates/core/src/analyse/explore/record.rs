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
    /// The launch's peak memory (the GPU's where sampled, else the server's RSS), MB; `null`:
    /// not sampled, or infeasible.
    #[serde(default)]
    pub peak_memory_mb: Option<f64>,
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
    /// The trade-off between the primary metric and memory: the configurations no other
    /// measured configuration beats on both (its primary metric pooled over its trials but
    /// the confirmation, point estimates; its memory the highest peak of those trials), in
    /// ascending memory. Empty when no trial sampled memory.
    #[serde(default)]
    pub front: Vec<FrontPoint>,
}

/// A configuration on the search's memory trade-off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FrontPoint {
    /// The configuration's name.
    pub name: String,
    /// Its primary metric, pooled, with its 95 % interval.
    pub primary: Estimate,
    /// Its highest peak memory over those trials, MB.
    pub peak_memory_mb: f64,
}

/// The configurations of `trials` no other beats on both the primary metric (`higher`: higher
/// is better) and peak memory, in ascending memory; ties on both keep each.
pub fn front(trials: &[TrialRow], higher: bool) -> Vec<FrontPoint> {
    let latest = measured(trials);
    let better = |a: f64, b: f64| if higher { a > b } else { a < b };
    let beats = |a: &FrontPoint, b: &FrontPoint| {
        let (pa, pb) = (a.primary.value, b.primary.value);
        let no_worse = !better(pb, pa) && a.peak_memory_mb <= b.peak_memory_mb;
        no_worse && (better(pa, pb) || a.peak_memory_mb < b.peak_memory_mb)
    };
    let mut front: Vec<FrontPoint> = latest
        .iter()
        .filter(|b| !latest.iter().any(|a| beats(a, b)))
        .cloned()
        .collect();
    crate::base::order::sort_by(&mut front, |a, b| {
        a.peak_memory_mb
            .total_cmp(&b.peak_memory_mb)
            .then(a.name.cmp(&b.name))
    });
    front
}

/// Each configuration whose trials sampled memory, in the order first measured: its primary
/// metric after its last trial but a confirmation (pooled) and its highest peak memory.
pub fn measured(trials: &[TrialRow]) -> Vec<FrontPoint> {
    let mut latest: Vec<FrontPoint> = Vec::new();
    for t in trials.iter().filter(|t| t.purpose != Purpose::Confirm) {
        let (Some(primary), Some(mem)) = (t.primary, t.peak_memory_mb) else {
            continue;
        };
        match latest.iter_mut().find(|p| p.name == t.name) {
            Some(p) => {
                p.primary = primary;
                p.peak_memory_mb = p.peak_memory_mb.max(mem);
            }
            None => latest.push(FrontPoint {
                name: t.name.clone(),
                primary,
                peak_memory_mb: mem,
            }),
        }
    }
    latest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(name: &str, purpose: Purpose, value: f64, mem: Option<f64>) -> TrialRow {
        TrialRow {
            index: 0,
            name: name.to_string(),
            config: BTreeMap::new(),
            purpose,
            requests: 10,
            file: format!("{name}.json"),
            primary: Some(Estimate {
                value,
                lo: None,
                hi: None,
            }),
            meets_all: Some(true),
            infeasible: None,
            peak_memory_mb: mem,
        }
    }

    fn names(f: &[FrontPoint]) -> Vec<&str> {
        f.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn the_front_keeps_what_nothing_beats_on_both() {
        let t = [
            trial("small", Purpose::Screen, 40.0, Some(100.0)),
            trial("big", Purpose::Screen, 60.0, Some(300.0)),
            // Beaten by `big` on both: more memory, less throughput.
            trial("waste", Purpose::Screen, 50.0, Some(400.0)),
            // Its later trial is the pooled estimate: no longer beaten by `small`.
            trial("mid", Purpose::Screen, 30.0, Some(200.0)),
            trial("mid", Purpose::Refine, 55.0, Some(150.0)),
            // A confirmation stands apart from the search's estimate: not counted.
            trial("small", Purpose::Confirm, 1000.0, Some(1.0)),
            // No memory sampled: not placed.
            trial("blind", Purpose::Screen, 99.0, None),
        ];
        let f = front(&t, true);
        assert_eq!(names(&f), ["small", "mid", "big"]);
        assert_eq!(f[1].peak_memory_mb, 200.0, "the highest peak of its trials");
        assert_eq!(f[1].primary.value, 55.0);
        // Lower is better (a latency): the same points read the other way round.
        assert_eq!(names(&front(&t, false)), ["small"]);
        // Control: nothing sampled, no front.
        let none: Vec<TrialRow> = t
            .iter()
            .map(|r| TrialRow {
                peak_memory_mb: None,
                ..r.clone()
            })
            .collect();
        assert!(front(&none, true).is_empty());
    }
}
