//! The report view-model: what a reader sees of an [`Analysis`], as lines, tables and cells
//! with their wording and numbers already decided. The text and Markdown printers
//! ([`crate::show::render`]) and the page's components only lay these out, so the terminal, the
//! review thread and the browser cannot disagree on a word or a digit.

mod capacity;
mod charts;
mod gate;
mod headline;
mod lineage;
mod search;
mod shards;
mod shown;
mod signals;
mod turns;
mod types;
mod verdicts;

pub use gate::{gate_label, GateView};
pub use types::*;

use crate::analyse::baseline::BaselineRow;
use crate::analyse::evidence::SloOutcome;
use crate::analyse::report::{Analysis, CandidateReport, ProfileReport, SummarySource};
use crate::base::fmt::{format_number, optional, with_unit, MISSING};
use crate::base::metric::{Direction, Metric};
use crate::schema::WorkloadSpec;

/// Every string of `items`, made inert.
fn all<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Vec<Shown> {
    items.into_iter().map(Shown::new).collect()
}

/// Builds the view of an analysis; every string of it is [`Shown`], made inert.
pub fn report_view(a: &Analysis) -> ReportView {
    let shared = shared_notes(a);
    ReportView {
        subject: subject(a),
        lineage: lineage::view(a),
        shards: shards::view(a),
        verdicts: verdicts::table(a),
        unknown_profiles: verdicts::unknown(a),
        profiles: a
            .profiles
            .iter()
            .map(|p| {
                let mut v = profile_view(p, &shared);
                v.caveats.extend(unplanned(a, p).map(Shown::new));
                v
            })
            .collect(),
        run_notes: all(report_run_notes(a)),
        legend: legend(),
        caveats: all(headline::report_caveats(a)),
        notes: all(&a.notes),
        footer: Shown::new(format!(
            "recomputed from raw per-request data by sloscope {}",
            a.sloscope_version
        )),
        across_caption: (a.profiles.len() > 1).then(|| {
            Shown::new("TPOT p95 per candidate by concurrency, across the profiles (each point one profile's run)")
        }),
    }
}

/// What each decision means (the seed's three, and the two states of absence and doubt): the
/// page's legend, the text's and the guide's (generated from it).
pub const LEGEND: [(&str, &str); 5] = [
    ("ACCEPT", "a candidate meets every SLO of the profile, each decided by its one-sided 95% bound (or as the run saw it, where the verdict says so), on real hardware, and ranks first on the primary metric — or cannot be told apart from the first on it (95% intervals overlap) and is cheaper (a lower knob value with no more memory): of tied candidates the cheaper is chosen"),
    ("TUNE", "no candidate meets every SLO, or the best one's evidence cannot accept (a simulation): nothing to deploy yet; the next step says what to change and measure again"),
    ("REJECT", "nothing comparable to decide on: an invalid profile, a broken lineage, or no candidate with usable evidence"),
    ("INCOMPLETE", "a planned run is missing or unusable: no verdict over what was not measured; what the measured runs alone give is shown as provisional, never as the answer"),
    ("NOT ENOUGH DATA", "the SLO that decides the verdict cannot be decided from the requests there are (its 95% bound crosses the limit, or no bound exists at this size); the next step says how many requests would decide it"),
];

fn legend() -> Vec<Labelled> {
    LEGEND
        .into_iter()
        .map(|(label, value)| Labelled {
            label: Shown::new(label),
            value: Shown::new(value),
        })
        .collect()
}

/// What is judged, a labelled line each; empty when nothing is known of it.
fn subject(a: &Analysis) -> Vec<Labelled> {
    if a.subject.is_empty() {
        return Vec::new();
    }
    a.subject
        .lines()
        .into_iter()
        .map(|(label, value)| Labelled {
            label: Shown::new(label),
            value: Shown::input(value),
        })
        .collect()
}

pub(super) fn column(title: &str, decisive: bool, numeric: bool) -> Column {
    let help = match title {
        "requests ok/sent" => "requests that completed without error, of those sent".into(),
        "evidence" => "what the run measured: a real backend, a simulation, or a failed one".into(),
        "SLO" => "every SLO met (pass), one missed (fail), or not decided from the data".into(),
        t => Metric::parse(t).map(Metric::describe).unwrap_or_default(),
    };
    Column {
        title: Shown::new(title),
        decisive,
        numeric,
        help: Shown::new(help),
    }
}

/// Metric columns of the candidate table, in order.
pub const CANDIDATE_METRICS: [Metric; 10] = [
    Metric::TTFT_P50,
    Metric::TTFT_P95,
    Metric::TPOT_P95,
    Metric::ITL_P95,
    Metric::E2E_P95,
    Metric::QUEUE_WAIT_P95,
    Metric::THROUGHPUT,
    Metric::GOODPUT_RATIO,
    Metric::FAILURE_RATE,
    Metric::PEAK_MEMORY,
];

fn candidate_table(p: &ProfileReport) -> TableView {
    let in_slo = |m: Metric| p.slo.iter().any(|s| s.metric == m);
    let primary = p.primary_metric.as_deref().and_then(Metric::parse);
    // With no SLO and no primary metric (summaries only), the usual four are the decisive ones.
    let undefined = p.slo.is_empty() && primary.is_none();
    let usual = |m: Metric| {
        undefined
            && ["ttft_p95_ms", "tpot_p95_ms", "e2e_p95_ms", "throughput_tps"]
                .contains(&m.name().as_str())
    };
    let mut columns = vec![
        column("candidate", true, false),
        column(p.knob.as_deref().unwrap_or("knob"), true, false),
    ];
    columns.extend(
        CANDIDATE_METRICS
            .iter()
            .map(|&m| column(&m.name(), in_slo(m) || primary == Some(m) || usual(m), true)),
    );
    columns.push(column("requests ok/sent", true, true));
    columns.push(column("evidence", true, false));
    columns.push(column("SLO", true, false));
    let rows = p
        .candidates
        .iter()
        .map(|c| candidate_row(c, undefined))
        .collect();
    TableView { columns, rows }
}

fn candidate_row(c: &CandidateReport, no_slo: bool) -> Row {
    let mut cells = vec![
        Cell::text(if c.chosen {
            format!("{} ★", c.name)
        } else {
            c.name.clone()
        }),
        Cell::text(
            c.value
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| MISSING.into()),
        ),
    ];
    for m in CANDIDATE_METRICS {
        let mark = c
            .slo_checks
            .iter()
            .find(|k| k.metric == m)
            .map_or(Mark::None, slo_mark);
        cells.push(Cell::number(m, c.metric(m), mark));
    }
    cells.push(Cell::text(match &c.summary {
        Some(s) => format!("{}/{}", s.requests_ok, s.requests_sent),
        None => "reported".into(),
    }));
    let evidence = match c.source {
        SummarySource::Recomputed => c.evidence_level.as_str().to_string(),
        SummarySource::Reported => format!("{} (as reported)", c.evidence_level.as_str()),
    };
    cells.push(Cell::text(evidence));
    cells.push(if no_slo {
        Cell::text(MISSING)
    } else {
        let open = c
            .slo_checks
            .iter()
            .any(|k| k.outcome == SloOutcome::NotEnoughData);
        let failed = c.slo_checks.iter().any(|k| k.outcome == SloOutcome::Fail);
        let (mark, word) = if failed {
            (Mark::Fail, "fail")
        } else if open {
            (Mark::Undecided, "not enough data")
        } else {
            (Mark::Pass, "pass")
        };
        Cell {
            mark,
            ..Cell::text(word)
        }
    });
    Row {
        key: Shown::input(&c.name),
        highlighted: c.chosen,
        cells,
    }
}

/// An SLO check's mark: met, missed, or not decidable from the data.
fn slo_mark(k: &crate::analyse::verdict::SloCheck) -> Mark {
    match k.outcome {
        SloOutcome::Pass => Mark::Pass,
        SloOutcome::Fail => Mark::Fail,
        SloOutcome::NotEnoughData => Mark::Undecided,
    }
}

/// `workload ID: concurrency …, prompt … tokens, …`.
pub fn workload_line(w: Option<&WorkloadSpec>) -> String {
    let Some(w) = w else {
        return "no workload".into();
    };
    let n = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
    // A length distribution is named in place of the fixed length it replaces.
    let prompt = w
        .prompt_length
        .as_ref()
        .map_or_else(|| n(w.prompt_tokens), |d| d.label());
    let output = w
        .output_length
        .as_ref()
        .map_or_else(|| n(w.max_output_tokens), |d| d.label());
    let arrival = w.arrival.unwrap_or(crate::base::traffic::Arrival::Poisson);
    // What is replayed from files, and shared prefixes, after the counts.
    let mut replayed = String::new();
    if let Some(t) = &w.trace {
        replayed.push_str(&format!(
            ", replaying the {} (at most {} in flight)",
            t.label(),
            n(w.concurrency)
        ));
    }
    if let Some(d) = &w.dataset {
        replayed.push_str(&format!(", prompts from the {}", d.label()));
    }
    if let Some(p) = &w.shared_prefix {
        replayed.push_str(&format!(", {}", p.label()));
    }
    if let Some(s) = &w.sessions {
        replayed.push_str(&format!(", {}", s.label()));
    }
    if w.trace.is_some() {
        return format!(
            "workload {}: {} repeats × {} requests{}",
            w.id.as_deref().unwrap_or(MISSING),
            n(w.repeats),
            n(w.requests_per_repeat),
            replayed
        );
    }
    format!(
        "workload {}: concurrency {}, prompt {} tokens, max output {} tokens, {} repeats × {} requests{}{replayed}",
        w.id.as_deref().unwrap_or(MISSING),
        n(w.concurrency),
        prompt,
        output,
        n(w.repeats),
        n(w.requests_per_repeat),
        w.request_rate_rps
            .map(|r| match arrival {
                crate::base::traffic::Arrival::Poisson => format!(", Poisson {} req/s", format_number(r)),
                crate::base::traffic::Arrival::Gamma { burstiness } => format!(
                    ", {} req/s in gamma bursts (burstiness {})",
                    format_number(r),
                    format_number(burstiness)
                ),
            })
            .unwrap_or_default()
    )
}

fn slo_line(p: &ProfileReport) -> String {
    let limits: Vec<String> = p
        .slo
        .iter()
        .map(|s| {
            let op = match s.direction {
                Direction::LowerIsBetter => "≤",
                Direction::HigherIsBetter => "≥",
            };
            let unit = s.metric.unit();
            if s.limit == 0.0 && s.direction == Direction::LowerIsBetter {
                // `failure_rate ≤ 0` says it less plainly.
                format!("{} = 0 (none allowed)", s.metric)
            } else {
                format!("{} {op} {}", s.metric, with_unit(Some(s.limit), unit))
            }
        })
        .collect();
    let limits = if limits.is_empty() {
        "none".to_string()
    } else {
        limits.join(", ")
    };
    format!(
        "SLO: {limits}; primary metric {}",
        p.primary_metric.as_deref().unwrap_or(MISSING)
    )
}

/// `ACCEPT`, `TUNE`, `REJECT`, `INCOMPLETE`, `NOT ENOUGH DATA`, or `NO VERDICT` for summaries
/// only.
pub(crate) fn decision_label(p: &ProfileReport) -> String {
    if p.summaries_only {
        "NO VERDICT".into()
    } else {
        p.decision.label().to_string()
    }
}

/// A verdict given with no plan loaded, said on its own card: which runs were planned is
/// unknown, so a planned run missing from these would not show (the report says why above).
fn unplanned(a: &Analysis, p: &ProfileReport) -> Option<String> {
    use crate::analyse::verdict::ProfileDecision as D;
    (a.completeness_unchecked.is_some() && matches!(p.decision, D::Accept | D::Tune | D::Reject))
        .then(|| {
            "no plan loaded: a planned run missing from these would not show (load the plan.json)"
                .to_string()
        })
}

fn profile_view(p: &ProfileReport, shared: &[&str]) -> ProfileView {
    let chosen = p.candidates.iter().find(|c| c.chosen);
    let decision_label = decision_label(p);
    let recommended = p
        .recommended_name
        .clone()
        .unwrap_or_else(|| "no pick".into());
    let verdict_line = format!(
        "Verdict: {decision_label} {}— {}",
        p.recommended_name
            .as_ref()
            .map(|n| format!("{n} "))
            .unwrap_or_default(),
        p.reason
    );
    let (baseline_title, baseline) = match &p.baseline {
        Some(b) => (
            Some(format!(
                "Quantized {} vs float baseline {}",
                b.compared_with
                    .as_deref()
                    .unwrap_or("(no candidate chosen)"),
                b.artifact_id
            )),
            Some(baseline_table(&b.rows)),
        ),
        None => (None, None),
    };
    ProfileView {
        profile: Shown::input(&p.profile),
        decision: p.decision,
        decision_label: Shown::new(decision_label),
        recommended: Shown::input(recommended),
        recommended_setting: Shown::new(chosen.map(setting).unwrap_or_default()),
        workload_line: Shown::new(workload_line(p.workload.as_ref())),
        slo_line: Shown::new(slo_line(p)),
        headline: Shown::new(headline::headline(p)),
        card_line: Shown::new(headline::card_line(p)),
        card_ids: Shown::new(headline::card_ids(p)),
        next_step: headline::next_step(p).map(Shown::new),
        caveats: all(headline::caveats(p)),
        verdict_line: Shown::new(verdict_line),
        reason: Shown::new(&p.reason),
        missing: all(p.missing.iter().map(|m| {
            format!(
                "not measured: {} {} — {}",
                m.kind.as_str(),
                m.name,
                m.reason
            )
        })),
        provisional_line: p.provisional.as_ref().map(|v| {
            Shown::new(format!(
                "Provisional, over the measured cells only (not a verdict): {}{}{}",
                v.decision.label(),
                v.recommended
                    .as_ref()
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default(),
                Some(&v.reason)
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default()
            ))
        }),
        binding_line: binding_line(p).map(Shown::new),
        confidence_line: p.confidence.as_ref().map(|c| Shown::new(&c.statement)),
        margins_line: chosen.map(margins_line).map(Shown::new),
        contract_issues: all(p.contract_issues.iter().map(|i| &i.message)),
        candidates: candidate_table(p),
        warnings: all(candidate_warnings(p)),
        notes: all(run_notes(p, shared)),
        signals: all(turns::lines(p).into_iter().chain(signals::lines(p))),
        excluded: all(p
            .excluded
            .iter()
            .map(|e| format!("not compared: {} ({}): {}", e.candidate, e.file, e.reason))),
        baseline_title: baseline_title.map(Shown::new),
        baseline,
        capacity_title: p.capacity.as_ref().map(capacity::title).map(Shown::new),
        capacity: p.capacity.as_ref().map(capacity::table),
        capacity_lines: all(p.capacity.as_ref().map(capacity::lines).unwrap_or_default()),
        search_title: p.search.as_ref().map(search::title).map(Shown::new),
        search: p.search.as_ref().map(search::table),
        search_lines: all(p.search.as_ref().map(search::lines).unwrap_or_default()),
        charts: charts::charts(p),
    }
}

fn setting(c: &CandidateReport) -> String {
    // A searched configuration is named by its knobs' values already.
    if c.value.as_ref().is_some_and(|v| v.to_string() == c.name)
        && c.knob.as_deref().is_some_and(|k| k.contains('+'))
    {
        return "(found by the configuration search)".into();
    }
    format!(
        "({} = {})",
        c.knob.as_deref().unwrap_or("knob"),
        c.value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_else(|| MISSING.into())
    )
}

fn binding_line(p: &ProfileReport) -> Option<String> {
    let b = p.binding_slo.as_ref()?;
    if b.outcome == SloOutcome::NotEnoughData {
        return Some(format!(
            "Binding SLO: {} limit {} — {} has {}, which its data cannot decide ({})",
            b.metric,
            format_number(b.limit),
            b.candidate,
            b.value
                .map(format_number)
                .unwrap_or_else(|| "no measurement".into()),
            match (b.value, b.needed_requests, b.needed_repeats) {
                (None, ..) => "the run holds no value for it".to_string(),
                (_, Some(n), _) => format!("about {n} requests would decide it"),
                (_, None, Some(r)) => crate::analyse::verdict::repeats_words(r),
                (_, None, None) =>
                    "no number of requests decides a value this close to the limit".into(),
            }
        ));
    }
    Some(format!(
        "Binding SLO: {} limit {} — {} has {}{}",
        b.metric,
        format_number(b.limit),
        b.candidate,
        b.value
            .map(format_number)
            .unwrap_or_else(|| "no measurement".into()),
        b.missed_by
            .map(|m| format!(", missed by {}", format_number(m)))
            .unwrap_or_default()
    ))
}

fn margins_line(c: &CandidateReport) -> String {
    let parts: Vec<String> = c
        .slo_checks
        .iter()
        .map(|k| format!("{} {}", k.metric, optional(k.margin)))
        .collect();
    format!("Margins to the SLO limits: {}", parts.join(" · "))
}

/// `candidates: note`, one line per distinct note (the same note of several candidates once,
/// with their names), in candidate order.
/// A profile's run notes, each with the candidates whose runs carry it, in their order.
fn notes_of(p: &ProfileReport) -> Vec<(&str, Vec<&str>)> {
    let mut notes: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in &p.candidates {
        for n in &c.notes {
            match notes.iter_mut().find(|(m, _)| m == n) {
                Some((_, names)) => names.push(&c.name),
                None => notes.push((n, vec![&c.name])),
            }
        }
    }
    notes
}

/// Notes carried by runs of more than one profile: said once for the report.
fn shared_notes(a: &Analysis) -> Vec<&str> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for p in &a.profiles {
        for (n, _) in notes_of(p) {
            match seen.iter_mut().find(|(m, _)| *m == n) {
                Some((_, k)) => *k += 1,
                None => seen.push((n, 1)),
            }
        }
    }
    seen.into_iter()
        .filter(|(_, k)| *k > 1)
        .map(|(n, _)| n)
        .collect()
}

/// The notes of runs of several profiles, once each: which candidates, in which profiles.
fn report_run_notes(a: &Analysis) -> Vec<String> {
    let shared = shared_notes(a);
    let every = |ps: &[&str]| ps.len() == a.profiles.len();
    shared
        .into_iter()
        .map(|n| {
            let mut names: Vec<&str> = Vec::new();
            let mut profiles: Vec<&str> = Vec::new();
            for p in &a.profiles {
                if let Some((_, c)) = notes_of(p).into_iter().find(|(m, _)| *m == n) {
                    profiles.push(&p.profile);
                    for x in c {
                        if !names.contains(&x) {
                            names.push(x);
                        }
                    }
                }
            }
            let r#where = if every(&profiles) {
                "every profile".to_string()
            } else {
                profiles.join(", ")
            };
            format!("{} ({}): {n}", names.join(", "), r#where)
        })
        .collect()
}

/// A profile's own run notes: those no other profile's runs carry.
fn run_notes(p: &ProfileReport, shared: &[&str]) -> Vec<String> {
    notes_of(p)
        .into_iter()
        .filter(|(n, _)| !shared.contains(n))
        .map(|(n, names)| format!("{}: {n}", names.join(", ")))
        .collect()
}

fn candidate_warnings(p: &ProfileReport) -> Vec<String> {
    let mut out: Vec<String> = p.flags.iter().map(|f| f.message.clone()).collect();
    for c in &p.candidates {
        for d in &c.disagreements {
            out.push(format!(
                "{}: reported {} = {} but the raw requests give {}",
                c.name,
                d.metric,
                format_number(d.reported),
                format_number(d.recomputed)
            ));
        }
        if c.source == SummarySource::Reported {
            out.push(format!(
                "{}: numbers as reported by {} (no raw requests to recompute from)",
                c.name, c.file
            ));
        }
    }
    out
}

fn baseline_table(rows: &[BaselineRow]) -> TableView {
    let columns = vec![
        column("metric", true, false),
        column("quantized", true, true),
        column("float", true, true),
        column("difference", true, true),
        column("ratio", true, true),
        column("95% interval of difference", false, false),
    ];
    let rows = rows
        .iter()
        .map(|r| {
            let m = Some(r.metric);
            let num = |v: Option<f64>| match m {
                Some(m) => Cell::number(m, v, Mark::None),
                None => Cell::text(optional(v)),
            };
            Row {
                key: Shown::new(r.metric.name()),
                highlighted: false,
                cells: vec![
                    Cell::text(r.metric.name()),
                    num(r.quantized),
                    num(r.baseline),
                    num(r.difference),
                    Cell::text(
                        r.ratio
                            .map(|x| format!("{x:.2}×"))
                            .unwrap_or_else(|| MISSING.into()),
                    ),
                    Cell::text(
                        r.difference_interval
                            .map(|i| crate::base::fmt::interval(i.low, i.high))
                            .unwrap_or_else(|| MISSING.into()),
                    ),
                ],
            }
        })
        .collect();
    TableView { columns, rows }
}

impl AnalysisOutput {
    /// The analysis with its view.
    pub fn new(analysis: Analysis) -> AnalysisOutput {
        let view = report_view(&analysis);
        AnalysisOutput { analysis, view }
    }
}
