//! What `compare` reports: what changed between the two collections, what a reviewer reads
//! first (verdict flips, capacity, the binding SLO's margin), then per cell and metric the
//! change with its interval and label.

use serde::{Deserialize, Serialize};

use crate::analyse::verdict::ProfileDecision as Decision;
use crate::base::metric::Metric;
use crate::base::stats::Interval;
use crate::schema::KnobValue;

/// The comparison's answer, for CI (exit codes follow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Some metric of some cell is worse beyond its threshold, with 95% confidence.
    Regression,
    /// Cells were compared and none regressed.
    NoRegression,
    /// No cell could be compared (each reason is listed).
    NothingComparable,
    /// No compared cell regressed, but a run of one side was left out of its analysis (a
    /// contradiction, a partial run), or holds the other side's measurements: the comparison
    /// cannot vouch for that cell, so it does not pass.
    Incomplete,
    /// Cells were compared, but not one metric of any could be decided (every interval too wide
    /// for its threshold): a comparison that compared nothing does not pass.
    Inconclusive,
    /// The input cannot be compared at all (the same files on both sides, a side without
    /// runs, a side whose lineage is broken): `refused` says why.
    Refused,
}

/// A metric change's label, in the metric's own direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Worse beyond the threshold: the whole interval is past it.
    Regression,
    /// Better beyond the threshold: the whole interval is past it.
    Improvement,
    /// The whole interval lies within the threshold either way.
    NoChange,
    /// The interval reaches past the threshold and not wholly, and the data could not see a
    /// change of the threshold's size (or there is no interval at all; `method` says which).
    Inconclusive,
    /// The interval straddles the threshold although the data could see a change of its size:
    /// a change near the threshold, neither shown past it nor within it.
    Borderline,
}

/// How large a change must be to count: both a relative and an absolute change (the larger
/// of the two bounds applies).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Relative to the before value (0.05 = 5%).
    pub relative: f64,
    /// In the metric's unit.
    pub absolute: f64,
}

/// How the requests of the two sides were resampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// The same request sequence on both sides (same workload, and per request the same
    /// prompt length and output cap in every repeat): requests paired by index, which cancels
    /// the workload's own variance.
    Paired,
    /// Each side resampled on its own (within repeats).
    Unpaired,
}

/// Something that differs between the two collections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// What (a lineage field, a run header field, the plan's server command …).
    pub what: String,
    /// Its values before (each distinct value once).
    pub before: Vec<String>,
    /// Its values after.
    pub after: Vec<String>,
}

/// The SLO closest to failing for a profile's chosen candidate (or the one missed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Margin {
    /// The SLO's metric.
    pub metric: Metric,
    /// Its limit.
    pub limit: f64,
    /// The candidate's value.
    pub value: Option<f64>,
    /// Distance to the limit on the good side, relative to the limit (negative: missed).
    pub margin_ratio: Option<f64>,
}

/// One side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WhichSide {
    /// The before collection.
    Before,
    /// The after collection.
    After,
}

/// One profile's verdict before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VerdictChange {
    /// Profile name.
    pub profile: String,
    /// Verdict before (`null`: the profile is not in that collection).
    pub before: Option<Decision>,
    /// Verdict after.
    pub after: Option<Decision>,
    /// The recommended candidate before.
    pub recommended_before: Option<String>,
    /// The recommended candidate after.
    pub recommended_after: Option<String>,
    /// Whether the verdict or the recommendation differs (never when one side is incomplete:
    /// an absence is not a change of verdict).
    pub flipped: bool,
    /// The side whose profile is incomplete while the other's is not (a planned run missing
    /// or left out there): its "verdict" is none, so nothing is said to have changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_side: Option<WhichSide>,
    /// The binding SLO's margin before (the chosen candidate's tightest, else the missed one).
    pub binding_before: Option<Margin>,
    /// …and after.
    pub binding_after: Option<Margin>,
}

/// One profile's capacity search before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CapacityChange {
    /// Profile name.
    pub profile: String,
    /// The search's statement before.
    pub before: Option<String>,
    /// …and after.
    pub after: Option<String>,
    /// The best candidate before.
    pub best_before: Option<String>,
    /// …and after.
    pub best_after: Option<String>,
    /// Each candidate searched on both sides: the load it sustained before and after.
    pub candidates: Vec<SustainedChange>,
}

/// The highest load one candidate sustained under every SLO, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SustainedChange {
    /// Candidate name.
    pub candidate: String,
    /// Sustained before (`null`: no load passed).
    pub before: Option<f64>,
    /// …and after.
    pub after: Option<f64>,
    /// The capacity as its search found it, in words ("at least 8 streams", "11 streams (12
    /// fails)"), before and after: a load sustained is not a capacity when every load passed.
    #[serde(default)]
    pub said: [String; 2],
    /// Lower after by more than the searches' tolerance (or nothing sustained after where
    /// something was before): counted as a regression.
    pub worse: bool,
}

/// One metric of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricChange {
    /// The metric.
    pub metric: Metric,
    /// Its value before.
    pub before: Option<f64>,
    /// …and after.
    pub after: Option<f64>,
    /// `after − before`, in the metric's unit.
    pub difference: Option<f64>,
    /// 95% interval of the difference.
    pub difference_interval: Option<Interval>,
    /// `after / before`.
    pub ratio: Option<f64>,
    /// 95% interval of the ratio (low, high).
    pub ratio_interval: Option<[f64; 2]>,
    /// The threshold applied.
    pub threshold: Threshold,
    /// What the interval says (or, for a percentile its own interval cannot decide, the
    /// whole distribution's shift, when the shapes agree: `method` says which).
    pub label: Label,
    /// The smallest true change the interval would tell from none four times in five (`null`:
    /// an end is missing, so no change is detectable).
    pub detectable_change: Option<f64>,
    /// How the interval was made, or why there is none.
    pub method: String,
}

/// One per-request quantity's whole distribution, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShiftChange {
    /// `ttft`, `tpot` or `e2e`.
    pub quantity: String,
    /// The Hodges–Lehmann shift `after − before`, ms, with its 95% rank-test interval.
    pub shift: Interval,
    /// Paired by request (the same request sequence on both sides), or all pairs.
    pub paired: bool,
    /// The Kolmogorov–Smirnov p-value of the before values against the after values moved
    /// back by the shift: below 0.05 the shapes differ (a tail may have changed differently).
    pub shape_p: f64,
    /// The label against the quantity's median threshold.
    pub label: Label,
}

/// One cell: a profile's candidate measured on the same workload on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cell {
    /// Profile name.
    pub profile: String,
    /// Candidate name (after's, when the knob value matched under another name).
    pub candidate: String,
    /// The knob.
    pub knob: Option<String>,
    /// Its value.
    pub value: Option<KnobValue>,
    /// How the requests were resampled.
    pub pairing: Pairing,
    /// Why the requests could not be paired (when unpaired).
    pub pairing_note: Option<String>,
    /// Successful requests before.
    pub requests_before: u64,
    /// …and after.
    pub requests_after: u64,
    /// The worst label of its metrics (regression first).
    pub label: Label,
    /// Each metric compared.
    pub metrics: Vec<MetricChange>,
    /// Each per-request quantity's whole distribution compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shifts: Vec<ShiftChange>,
    /// Its distributions before and after, for overlaid charts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curves: Option<CellCurves>,
}

/// A cell's distributions on both sides: percentiles 0, 1, …, 100 (numpy-linear) of each
/// per-request quantity, in ms; `[before, after]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CellCurves {
    /// TTFT.
    pub ttft_ms: [Vec<f64>; 2],
    /// TPOT.
    pub tpot_ms: [Vec<f64>; 2],
    /// End-to-end.
    pub e2e_ms: [Vec<f64>; 2],
}

/// Why a cell could not be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotComparableKind {
    /// Measured on the after side only (a new cell).
    OneSideOnly,
    /// Measured before, not after: the after side lost a cell (a deleted run, a dropped
    /// profile), so the comparison is incomplete — a cell does not pass by being left out.
    MissingAfter,
    /// The workloads differ.
    WorkloadDiffers,
    /// A side holds summaries only (no per-request data).
    SummariesOnly,
    /// Its run on the after side failed (every request failed, or the run failed) where the
    /// before side's did not: counted as a regression.
    FailedAfter,
    /// Its run on a side was left out of that side's analysis for another reason: the
    /// comparison is incomplete.
    LeftOut,
    /// Its after run holds measurements of the before side (a copy, a subset, nudged,
    /// relabelled): nothing that changed can show, and the comparison is incomplete.
    SameMeasurements,
}

/// A cell on one side that has no partner on the other, or whose workload differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NotComparable {
    /// Profile name.
    pub profile: String,
    /// Candidate name.
    pub candidate: String,
    /// Kind of reason.
    pub kind: NotComparableKind,
    /// Why.
    pub reason: String,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// Version of the sloscope core that computed it.
    pub sloscope_version: String,
    /// The answer.
    pub outcome: Outcome,
    /// Why the input could not be compared (empty unless `outcome` is `refused`).
    pub refused: Vec<String>,
    /// What differs between the collections besides the measurements.
    pub changed: Vec<Change>,
    /// Every profile's verdict before and after.
    pub verdicts: Vec<VerdictChange>,
    /// Every capacity search before and after.
    pub capacity: Vec<CapacityChange>,
    /// The cells compared.
    pub cells: Vec<Cell>,
    /// Cells that could not be compared, with why.
    pub not_comparable: Vec<NotComparable>,
    /// Notes from either side's analysis (files left out and why), prefixed with the side.
    pub notes: Vec<String>,
    /// What each side judges (artifact, baseline, backend, hardware, plan, collection dates),
    /// label by label: before, after.
    #[serde(default)]
    pub subject: Vec<SubjectChange>,
}

/// One line of what is judged, on each side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubjectChange {
    /// `Artifact`, `Backend`, …
    pub label: String,
    /// Before (`null`: that side says nothing of it).
    pub before: Option<String>,
    /// After.
    pub after: Option<String>,
}
