//! The view-model's types: lines, tables and cells with their wording decided (built in
//! [`super`], laid out by the printers and the page).

use serde::{Deserialize, Serialize};

use crate::analyse::report::Analysis;
use crate::analyse::verdict::ProfileDecision as Decision;
use crate::base::fmt::optional;
use crate::base::metric::Metric;

pub use super::shown::{escaped, inert, Shown, MAX_ECHO_CHARS};

/// Whether a cell passed an SLO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Not checked against an SLO.
    None,
    /// Meets its SLO.
    Pass,
    /// Misses its SLO (or is not measured).
    Fail,
    /// The data cannot decide its SLO (not enough data).
    Undecided,
}

impl Mark {
    /// The suffix shown after the value.
    pub fn suffix(self) -> &'static str {
        match self {
            Mark::None => "",
            Mark::Pass => " ✓",
            Mark::Fail => " ✗",
            Mark::Undecided => " ?",
        }
    }
}

/// One cell: its text as shown (the mark appended), the number behind it and its SLO mark (for
/// a lineage field: pass when the records agree as they must, fail when they do not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cell {
    /// Shown text, mark included.
    pub text: Shown,
    /// The metric this cell shows, when it shows one.
    pub metric: Option<Metric>,
    /// The number, unrounded (`null` when missing or not a number).
    pub value: Option<f64>,
    /// SLO mark.
    pub mark: Mark,
}

impl Cell {
    pub(crate) fn text(t: impl AsRef<str>) -> Cell {
        Cell {
            text: Shown::new(t),
            metric: None,
            value: None,
            mark: Mark::None,
        }
    }

    pub(crate) fn number(m: Metric, v: Option<f64>, mark: Mark) -> Cell {
        Cell {
            text: Shown::new(format!("{}{}", optional(v), mark.suffix())),
            metric: Some(m),
            value: v,
            mark,
        }
    }
}

/// A column heading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Column {
    /// Heading text.
    pub title: Shown,
    /// True for the columns that decide the verdict (always shown on narrow screens).
    pub decisive: bool,
    /// True for numeric columns (right-aligned).
    pub numeric: bool,
    /// What the column holds, in words (a metric's description), for a heading's tooltip;
    /// empty where the heading says it all.
    #[serde(default)]
    pub help: Shown,
}

/// One table row; `key` names what the row is about (a candidate, a metric, a profile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Row {
    /// Candidate, metric or profile name.
    pub key: Shown,
    /// The recommended candidate's row.
    pub highlighted: bool,
    /// Cells, one per column.
    pub cells: Vec<Cell>,
}

/// A table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TableView {
    /// Headings.
    pub columns: Vec<Column>,
    /// Rows.
    pub rows: Vec<Row>,
}

/// What a reader sees of one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProfileView {
    /// Profile name.
    pub profile: Shown,
    /// accept / tune / reject.
    pub decision: Decision,
    /// `ACCEPT`, `TUNE` or `REJECT`.
    pub decision_label: Shown,
    /// The recommended candidate, or `no pick` (none meets every SLO).
    pub recommended: Shown,
    /// `(knob = value)` of the recommended candidate, empty when none.
    pub recommended_setting: Shown,
    /// The workload measured.
    pub workload_line: Shown,
    /// The SLO limits and the primary metric.
    pub slo_line: Shown,
    /// The answer in one line, for the top of the report: decision, configuration, the primary
    /// metric with its interval, the binding (or tightest) SLO and its margin or miss.
    pub headline: Shown,
    /// The headline after what a verdict card shows on its own (profile and decision): what the
    /// card says beside them, each metric by its short name (`TTFT p95`).
    pub card_line: Shown,
    /// The same line with the metrics' identifiers (`ttft_p95_ms`), shown on hover.
    #[serde(default)]
    pub card_ids: Shown,
    /// What to do next: deploy what was accepted, the tune advice, the cells or the requests
    /// still to measure; `null` where there is nothing to say.
    #[serde(default)]
    pub next_step: Option<Shown>,
    /// What weakens this verdict beyond the report-wide caveats (simulation evidence, fewer
    /// repeats or requests than planned, runs left out, cache artefacts, pooled reruns, a
    /// cheaper equivalent).
    pub caveats: Vec<Shown>,
    /// Decision, candidate and reason in one sentence.
    pub verdict_line: Shown,
    /// The reason alone.
    pub reason: Shown,
    /// For an `incomplete` profile: each planned cell without a usable run, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Shown>,
    /// For an `incomplete` profile: what the measured cells alone give, labelled provisional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisional_line: Option<Shown>,
    /// For a `tune` with no feasible candidate: the binding SLO and its miss.
    pub binding_line: Option<Shown>,
    /// The interval statement.
    pub confidence_line: Option<Shown>,
    /// The recommended candidate's margin to each SLO.
    pub margins_line: Option<Shown>,
    /// Problems with the profile definition.
    pub contract_issues: Vec<Shown>,
    /// The candidates.
    pub candidates: TableView,
    /// Warnings about candidates (reported-only numbers, disagreements).
    pub warnings: Vec<Shown>,
    /// Notes of the compared runs (`candidate: note`): an import's provenance and how the
    /// tool's definitions were mapped, what the collector could not measure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Shown>,
    /// What the servers report of prefix-cache hits and speculative decoding, per candidate,
    /// and what none reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Shown>,
    /// Runs left out, with reasons.
    pub excluded: Vec<Shown>,
    /// Heading of the float comparison.
    pub baseline_title: Option<Shown>,
    /// The float comparison.
    pub baseline: Option<TableView>,
    /// Heading of the capacity search, when the profile has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_title: Option<Shown>,
    /// One row per candidate: its capacity, the bracket, the binding SLO, trials used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<TableView>,
    /// Who sustains most, by what margin, whether it can be told apart; each candidate's
    /// trials in order; trials left out; marginal or non-monotone trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_lines: Vec<Shown>,
    /// Heading of the configuration search, when the plan's space serves the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_title: Option<Shown>,
    /// One row per trial of the search, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<TableView>,
    /// The pick, its confirmation, and why each other configuration was dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search_lines: Vec<Shown>,
    /// What each chart draws: captions and the SLO lines that apply.
    pub charts: ChartsView,
}

/// The lineage as lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineageView {
    /// True when nothing blocks the comparison.
    pub ready: bool,
    /// No lineage record was loaded at all (another tool's file read alone): summaries only,
    /// which is a state, not a failure.
    #[serde(default)]
    pub absent: bool,
    /// One status line.
    pub status_line: Shown,
    /// Blocking problems.
    pub issues: Vec<Shown>,
    /// What could not be checked.
    pub warnings: Vec<Shown>,
    /// The records' own notes (an asserted gate decision, a derived baseline).
    pub notes: Vec<Shown>,
    /// Field by field: the value in each record (whole, inert) and the check; the columns name
    /// the records' files. Empty when a record is missing.
    #[serde(default)]
    pub table: TableView,
    /// The quality gate's measurement, when the gate record carries one: shown first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<super::GateView>,
    /// One line per gate record of another artifact (gated, not deployed), its decision first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_gates: Vec<Shown>,
}

/// What a reader sees of the whole analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReportView {
    /// What is judged (artifact, float baseline, backend, hardware, plan, when collected),
    /// above the verdicts; empty when nothing is known of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subject: Vec<Labelled>,
    /// Lineage.
    pub lineage: LineageView,
    /// The shards of a sharded results tree (`sloscope run --shard`), when the files came
    /// from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardsView>,
    /// One row per profile (and per profile name that is none of the three).
    pub verdicts: TableView,
    /// Profile names that are none of latency, balanced or throughput: shown beside the
    /// verdicts as not analysed, with the files that name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_profiles: Vec<UnknownProfileView>,
    /// Per profile.
    pub profiles: Vec<ProfileView>,
    /// What weakens every verdict (lineage warnings: an asserted gate, fields not recorded),
    /// said once above the per-profile lines.
    pub caveats: Vec<Shown>,
    /// Problems that belong to no profile.
    pub notes: Vec<Shown>,
    /// Notes the runs of several profiles carry (the backend's, the host's), said once: which
    /// candidates, in which profiles. A profile's own `notes` hold the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_notes: Vec<Shown>,
    /// What each decision means, as a reader looks it up beside the cards.
    #[serde(default)]
    pub legend: Vec<Labelled>,
    /// Where the numbers come from.
    pub footer: Shown,
    /// The caption of the chart across profiles (TPOT p95 by concurrency), when there are
    /// several profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across_caption: Option<Shown>,
}

/// `sloscope analyze --format json`: the analysis (numbers) and its view (what the text,
/// Markdown and page show), so a test or a reviewer can hold one against the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AnalysisOutput {
    /// The numbers.
    #[serde(flatten)]
    pub analysis: Analysis,
    /// What a reader sees of them.
    pub view: ReportView,
}

/// A profile name that is not a serving profile, as a reader sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UnknownProfileView {
    /// The name, inert.
    pub profile: Shown,
    /// `not analysed`.
    pub decision_label: Shown,
    /// Why, and the files that name it.
    pub line: Shown,
}

/// An SLO limit a chart draws as a line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloLine {
    /// The SLO's metric.
    pub metric: Metric,
    /// Its limit.
    pub limit: f64,
    /// A floor (higher is better) rather than a ceiling.
    pub higher_is_better: bool,
}

/// What a profile's charts draw, decided by the core: the page only draws it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChartsView {
    /// The SLO chart's caption: what decides the profile, every SLO of every candidate as a
    /// share of its limit with the bounds that decide it.
    #[serde(default)]
    pub slo_caption: Shown,
    /// The TTFT–throughput trade-off chart's caption.
    pub tradeoff_caption: Shown,
    /// Its TTFT p95 SLO line, when the profile has that SLO.
    pub tradeoff_ttft: Option<SloLine>,
    /// Its output-throughput SLO line, when the profile has that SLO.
    pub tradeoff_throughput: Option<SloLine>,
    /// The capacity chart's caption (with a capacity search).
    pub capacity_caption: Option<Shown>,
    /// The capacity throughput chart's caption.
    pub capacity_throughput_caption: Option<Shown>,
    /// The SLO the capacity chart plots against load, with its limit.
    pub capacity_slo: Option<SloLine>,
    /// The configuration search chart's caption (with a search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_caption: Option<Shown>,
    /// The search's chart of the primary metric against each knob (with a search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_knobs_caption: Option<Shown>,
    /// The search's memory trade-off chart, when its trials sampled memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_space_caption: Option<Shown>,
    /// The search's primary metric's SLO limit, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_slo: Option<SloLine>,
    /// The TTFT-by-turn chart's caption, when a candidate's runs had multi-turn sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_caption: Option<Shown>,
    /// The per-request distributions' captions (TTFT, TPOT, end to end): what each curve is
    /// drawn from and which SLO is marked where.
    #[serde(default)]
    pub cdf_captions: CdfCaptions,
    /// The quantized/float ratio chart's caption, with a float baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_caption: Option<Shown>,
    /// The measured traffic charts' captions.
    #[serde(default)]
    pub traffic_captions: TrafficCaptions,
    /// The charts shown first, unfolded, in order: the SLO chart, then the chart of the metric
    /// that decides the verdict (the binding SLO, else the chosen candidate's tightest SLO, else
    /// the primary metric). Every other chart waits under "more charts".
    #[serde(default)]
    pub first: Vec<ChartKind>,
    /// Why those charts come first, in words (`decided by TPOT p95: its distribution first`).
    #[serde(default)]
    pub first_reason: Shown,
}

/// A profile's chart, by what it draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// Every SLO of every candidate as a share of its limit.
    Slo,
    /// TTFT p95 against output throughput.
    Tradeoff,
    /// The TTFT distribution.
    CdfTtft,
    /// The TPOT distribution.
    CdfTpot,
    /// The end-to-end distribution.
    CdfE2e,
    /// The capacity search's SLO metric against load.
    Capacity,
    /// The configuration search's trials in order.
    Search,
}

/// The captions of a profile's three CDFs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CdfCaptions {
    /// Time to first token.
    pub ttft: Shown,
    /// Time per output token.
    pub tpot: Shown,
    /// End to end.
    pub e2e: Shown,
}

/// The captions of a profile's measured-traffic charts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrafficCaptions {
    /// TTFT against prompt length.
    pub prefill: Shown,
    /// Prompt tokens measured.
    pub prompt: Shown,
    /// Output tokens measured.
    pub output: Shown,
    /// Gaps between sends.
    pub gaps: Shown,
}

/// The shards of a sharded results tree, as a reader sees them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardsView {
    /// Every shard finished once, every cell covered once, one plan, one lineage.
    pub complete: bool,
    /// One line: complete or not, and the plan.
    pub status_line: Shown,
    /// One row per shard.
    pub table: TableView,
    /// What keeps the merge from standing for the whole plan.
    pub problems: Vec<Shown>,
    /// Attempts whose runs were left out.
    pub left_out: Vec<Shown>,
}

/// A value with its label (`Artifact: smollm2-135m-instruct-q4_1 (Q4_1)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Labelled {
    /// What it is.
    pub label: Shown,
    /// Its value.
    pub value: Shown,
}
