//! The analysis as data: what was compared, the recomputed summaries, the verdicts, the float
//! comparison. Built by [`crate::analysis`], serialized by `sloscope analyze --format json`,
//! turned into rows and cells by [`crate::view`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::baseline::BaselineReport;
use crate::contract::SloLimit;
use crate::lineage::LineageReport;
use crate::metric::{Direction, Metric};
use crate::problem::Problem;
use crate::schema::{Decision, EvidenceLevel, KnobValue, WorkloadSpec};
use crate::stats::Interval;
use crate::summary::Summary;
use crate::verdict::{BindingSlo, Confidence, SloCheck};

/// Where a candidate's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SummarySource {
    /// Recomputed by sloscope from raw requests.
    Recomputed,
    /// Taken as reported by another tool (no raw requests in the file).
    Reported,
}

/// A reported value that disagrees with the recomputed one beyond rounding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Disagreement {
    /// Metric name.
    pub metric: String,
    /// As reported in the file.
    pub reported: f64,
    /// As recomputed.
    pub recomputed: f64,
}

/// One comparable candidate of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CandidateReport {
    /// Candidate name.
    pub name: String,
    /// Run file.
    pub file: String,
    /// The knob it varies.
    pub knob: Option<String>,
    /// Its value.
    pub value: Option<KnobValue>,
    /// Evidence level of the run.
    pub evidence_level: EvidenceLevel,
    /// Where the numbers come from.
    pub source: SummarySource,
    /// Repeats with raw data.
    pub repeats: u32,
    /// Recomputed summary over all repeats (`null` for reported-only runs).
    pub summary: Option<Summary>,
    /// Recomputed summary of each repeat.
    pub per_repeat: Vec<Summary>,
    /// Reported summaries carried by the file.
    pub reported: BTreeMap<String, Option<f64>>,
    /// Reported values that disagree with the recomputed ones.
    pub disagreements: Vec<Disagreement>,
    /// Every SLO limit checked.
    pub slo_checks: Vec<SloCheck>,
    /// True when every SLO check passes.
    pub meets_slo: bool,
    /// Value of the primary metric.
    pub primary_value: Option<f64>,
    /// 95% interval of the primary metric over repeats (3 or more).
    pub primary_interval: Option<Interval>,
    /// The recommended candidate.
    pub chosen: bool,
    /// Where an imported run came from, and the run's own notes (how another tool's
    /// definitions were mapped, what could not be recovered; no GPU for memory …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl CandidateReport {
    /// The value of a metric: recomputed where there is raw data, else as reported.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        match &self.summary {
            Some(s) => s.metric(m),
            None => self.reported.get(&m.name()).copied().flatten(),
        }
    }
}

/// A stable code per kind of problem or flag, for tools that read `--format json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// A run whose status is `failed`.
    FailedRun,
    /// A run whose status is `partial`.
    PartialRun,
    /// A run whose evidence level is `failed_backend_profile`.
    FailedBackend,
    /// A run of another artifact than the deployed one.
    ArtifactMismatch,
    /// A run of another workload than the profile's.
    WorkloadMismatch,
    /// A run that varies another knob than the plan's.
    KnobMismatch,
    /// A run of a candidate the plan does not list.
    NotInPlan,
    /// A run whose knob value differs from the plan's value for that candidate.
    KnobValueMismatch,
    /// Two different runs of one candidate under one profile.
    ConflictingRuns,
    /// A byte-identical copy of another run, counted once.
    DuplicateRun,
    /// Different runs of one candidate pooled into one, as the user asked.
    PooledRuns,
    /// A run with no requests and no reported summaries.
    NoData,
    /// A run in which every request failed.
    AllFailed,
    /// Fewer repeats than the plan asks.
    FewerRepeats,
    /// Fewer requests in a repeat than the plan asks.
    FewerRequests,
    /// Later repeats systematically faster than the first: a cache or warm-up artefact.
    LaterRepeatsFaster,
    /// The winner cannot be told apart from a feasible candidate that uses fewer resources.
    EquivalentCheaper,
    /// What to try next after a `tune`.
    NextStep,
    /// A float-baseline run that is not used.
    BaselineNotUsed,
    /// A trial run of a capacity search the profile does not declare.
    TrialWithoutSearch,
}

/// Something a reviewer must know about a profile's comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Flag {
    /// Kind.
    pub code: Code,
    /// The candidate it concerns, when one.
    pub candidate: Option<String>,
    /// The flag spelled out, with its evidence.
    pub message: String,
}

/// A run left out of the comparison, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Excluded {
    /// Run file.
    pub file: String,
    /// Candidate name in the run.
    pub candidate: String,
    /// Kind of reason.
    pub code: Code,
    /// Why it is not comparable.
    pub reason: String,
}

/// Everything about one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProfileReport {
    /// Profile name.
    pub profile: String,
    /// accept / tune / reject.
    pub decision: Decision,
    /// The chosen candidate.
    pub recommended_name: Option<String>,
    /// Why.
    pub reason: String,
    /// Problems with the profile definition, each with a stable code and the field (empty
    /// when it passed its contract).
    pub contract_issues: Vec<Problem>,
    /// Where the profile definition came from (a plan or a run file).
    pub defined_in: Option<String>,
    /// The workload.
    pub workload: Option<WorkloadSpec>,
    /// The ranking metric.
    pub primary_metric: Option<String>,
    /// Its direction.
    pub primary_direction: Option<Direction>,
    /// SLO limits.
    pub slo: Vec<SloLimit>,
    /// The knob the candidates vary.
    pub knob: Option<String>,
    /// Comparable candidates.
    pub candidates: Vec<CandidateReport>,
    /// Runs left out, with reasons.
    pub excluded: Vec<Excluded>,
    /// When no candidate met every SLO: what bound.
    pub binding_slo: Option<BindingSlo>,
    /// Interval statement when repeats allow.
    pub confidence: Option<Confidence>,
    /// Quantized vs float, when a baseline run is loaded.
    pub baseline: Option<BaselineReport>,
    /// What weakens or qualifies the comparison (shortfalls, artefacts, cheaper equivalents,
    /// next steps), each with a stable code.
    pub flags: Vec<Flag>,
    /// The capacity search's result, derived from the trial runs, when the profile has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacityReport>,
    /// Nothing defines the profile and no lineage record was loaded (another tool's file read
    /// alone): summaries only, no verdict; `decision` stays `reject` and `reason` says what a
    /// verdict needs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summaries_only: bool,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Analysis {
    /// Version of the sloscope core that computed it.
    pub sloscope_version: String,
    /// Lineage check.
    pub lineage: LineageReport,
    /// One entry per profile, in latency, balanced, throughput order.
    pub profiles: Vec<ProfileReport>,
    /// Problems that belong to no profile.
    pub notes: Vec<String>,
}

impl Analysis {
    /// True when every profile is `accept`.
    pub fn all_accept(&self) -> bool {
        !self.profiles.is_empty() && self.profiles.iter().all(|p| p.decision == Decision::Accept)
    }
}
