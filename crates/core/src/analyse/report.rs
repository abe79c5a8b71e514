//! The analysis as data: what was compared, the recomputed summaries, the verdicts, the float
//! comparison. Built by [`crate::analyse`], serialized by `sloscope analyze --format json`,
//! turned into rows and cells by [`crate::show::view`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analyse::baseline::BaselineReport;
use crate::analyse::summary::Summary;
use crate::analyse::verdict::ProfileDecision as Decision;
use crate::analyse::verdict::{BindingSlo, Confidence, SloCheck};
use crate::base::metric::{Direction, Metric};
use crate::base::problem::Problem;
use crate::base::stats::Interval;
use crate::check::contract::SloLimit;
use crate::check::invariant::Invariant;
use crate::check::lineage::LineageReport;
use crate::schema::{EvidenceLevel, KnobValue, WorkloadSpec};

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
    pub metric: Metric,
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
    /// Cost per million output tokens, US dollars, at the plan's price and this candidate's
    /// output throughput; `null` without a price or a throughput.
    #[serde(default)]
    pub cost_per_million_output_tokens_usd: Option<f64>,
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

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal;)*) => {
        /// A stable code per kind of exclusion or flag, for tools that read `--format json`:
        /// a broken invariant of the catalogue ([`Invariant`], by its own code), or one of
        /// the selection's own reasons below. Serialized as the code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Code {
            /// A broken invariant.
            Invariant(Invariant),
            $($(#[$doc])* $name,)*
        }

        impl Code {
            /// Every code that is not an invariant's.
            const OWN: &'static [Code] = &[$(Code::$name,)*];

            /// The stable code.
            pub fn as_str(self) -> &'static str {
                match self {
                    Code::Invariant(i) => i.code(),
                    $(Code::$name => $code,)*
                }
            }
        }
    };
}

codes! {
    /// A run whose status is `failed`.
    FailedRun = "failed_run";
    /// A run whose status is `partial`.
    PartialRun = "partial_run";
    /// A run whose evidence level is `failed_backend_profile`.
    FailedBackend = "failed_backend";
    /// Two different runs of one candidate under one profile.
    ConflictingRuns = "conflicting_runs";
    /// A byte-identical copy of another run, counted once.
    DuplicateRun = "duplicate_run";
    /// Different runs of one candidate pooled into one, as the user asked.
    PooledRuns = "pooled_runs";
    /// A run with no requests and no reported summaries.
    NoData = "no_data";
    /// A run in which every request failed.
    AllFailed = "all_failed";
    /// Later repeats systematically faster than the first: a cache or warm-up artefact.
    LaterRepeatsFaster = "later_repeats_faster";
    /// The winner cannot be told apart from a feasible candidate that uses fewer resources.
    EquivalentCheaper = "equivalent_cheaper";
    /// What to try next after a `tune`.
    NextStep = "next_step";
    /// A float-baseline run that is not used.
    BaselineNotUsed = "baseline_not_used";
    /// A trial run of a capacity search the profile does not declare.
    TrialWithoutSearch = "trial_without_search";
    /// A run of another lineage than the records' (artifact, backend, version, hardware).
    LineageMismatch = "lineage_mismatch";
    /// A capacity-search trial that is not used (unfinished, another axis, no requests).
    TrialNotUsed = "trial_not_used";
    /// A configuration-search trial that contradicts the search replayed from its trials.
    SearchContradicted = "search_contradicted";
    /// A trial passed above a failing load of the same candidate: the search is not monotone.
    NonMonotoneTrials = "non_monotone_trials";
    /// The plan's SLOs are not the ones the runs were collected under (edited since): the runs
    /// are judged by the plan's, and the verdict says so.
    SloChanged = "slo_changed";
    /// Another tool's file placed in the plan by hand names another model than the deployed
    /// artifact it is judged as.
    PlacedModel = "placed_model";
}

impl Code {
    /// The code with this name.
    pub fn parse(s: &str) -> Option<Code> {
        Invariant::parse(s)
            .map(Code::Invariant)
            .or_else(|| Code::OWN.iter().copied().find(|c| c.as_str() == s))
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Code::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown code {s:?}")))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut codes: Vec<&str> = Invariant::ALL.iter().map(|i| i.code()).collect();
        codes.extend(Code::OWN.iter().map(|c| c.as_str()));
        schemars::json_schema!({
            "description": "An exclusion's or flag's code: an invariant of the catalogue, or a reason of the selection.",
            "type": "string",
            "enum": codes,
        })
    }
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
    pub capacity: Option<crate::analyse::capacity::types::CapacityReport>,
    /// The configuration search, recomputed from its trials, when the plan's space serves the
    /// profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::analyse::explore::record::SearchReport>,
    /// Nothing defines the profile and no lineage record was loaded (another tool's file read
    /// alone): summaries only, no verdict; `decision` stays `reject` and `reason` says what a
    /// verdict needs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summaries_only: bool,
    /// The plan's price (US dollars per GPU-hour, GPUs per server), or why it is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Result<(f64, u32), String>>,
    /// The plan's cells of this profile that have no usable run (then `decision` is
    /// `incomplete`, and `reason` names them first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingCell>,
    /// For an `incomplete` profile: what the measured cells alone would give — never its
    /// answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisional: Option<Provisional>,
}

/// What a planned cell is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CellKind {
    /// A candidate's run at the profile's load.
    Candidate,
    /// The float baseline's run.
    Baseline,
    /// A candidate's capacity-search trials.
    Trials,
    /// The profile's configuration search (the plan's `[space]`).
    Search,
}

impl CellKind {
    /// The kind in words.
    pub fn as_str(self) -> &'static str {
        match self {
            CellKind::Candidate => "candidate",
            CellKind::Baseline => "float baseline",
            CellKind::Trials => "capacity search of",
            CellKind::Search => "configuration search of",
        }
    }
}

/// A planned cell with no usable run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MissingCell {
    /// What it is.
    pub kind: CellKind,
    /// The candidate's (or the baseline's) name.
    pub name: String,
    /// Why it has no usable run.
    pub reason: String,
}

/// What the profile's verdict would be over the measured cells alone: shown beside an
/// `incomplete` profile as provisional, never as its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Provisional {
    /// The decision over the measured cells.
    pub decision: Decision,
    /// The candidate it would pick among them.
    pub recommended: Option<String>,
    /// Why.
    pub reason: String,
}

/// A profile name that is not a serving profile, and the files that name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnknownProfile {
    /// The name as the files give it.
    pub name: String,
    /// The files (a plan's with the profile's index).
    pub files: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Analysis {
    /// Version of the sloscope core that computed it.
    pub sloscope_version: String,
    /// What is judged: artifact, baseline, backend, hardware, plan, when collected.
    #[serde(default)]
    pub subject: crate::analyse::subject::Subject,
    /// Lineage check.
    pub lineage: LineageReport,
    /// One entry per profile, in latency, balanced, throughput order.
    pub profiles: Vec<ProfileReport>,
    /// Profile names that are none of latency, balanced or throughput: not analysed, and shown
    /// as such (a row of their own), never silently dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_profiles: Vec<UnknownProfile>,
    /// Problems that belong to no profile.
    pub notes: Vec<String>,
    /// Why the runs could not be checked against a plan for completeness (no plan loaded):
    /// which runs were planned, and so which are missing, is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completeness_unchecked: Option<String>,
    /// The merge of a sharded results tree, when the files came from `sloscope run --shard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<crate::analyse::shard::types::ShardReport>,
}

impl Analysis {
    /// True when every profile is `accept`.
    pub fn all_accept(&self) -> bool {
        !self.profiles.is_empty() && self.profiles.iter().all(|p| p.decision == Decision::Accept)
    }
}
