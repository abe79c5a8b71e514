//! The comparison's view-model: every word a reader sees of a [`Comparison`], made once —
//! the headline, what changed, the verdicts with their binding SLOs, capacity, each metric's
//! change with its unit, interval, threshold and label (the ones that lead first, the rest
//! counted), the whole-distribution shifts, what was not comparable and the notes. The CLI's
//! text and Markdown and the page only lay it out. Strings from files are made inert here
//! (names cut, everything escaped); a printer adds only its own escaping (Markdown).

use serde::{Deserialize, Serialize};

use crate::analyse::regression::types::{
    Cell, Comparison, Label, Margin, MetricChange, Outcome, ShiftChange,
};
use crate::analyse::verdict::ProfileDecision;
use crate::base::fmt::format_number as num;
use crate::show::view::{escaped, inert};

use super::words::{headline, leads};

/// What "What changed" says when only the measurements differ.
pub const NOTHING_CHANGED: &str =
    "Nothing but the measurements changed: the same lineage, backend, hardware and server commands.";

/// A comparison as a reader sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonView {
    /// The outcome as a class name: `regression`, `no-regression`, `nothing-comparable`,
    /// `incomplete`, `inconclusive`, `refused`.
    pub outcome: String,
    /// The one-line answer, naming the cells that got worse and the verdicts that changed.
    pub headline: String,
    /// Why nothing was compared (empty unless refused).
    pub refused: Vec<String>,
    /// What differs between the sides (lineage, backend, hardware, commands); `None` when
    /// refused; empty when only the measurements changed.
    pub changed: Option<Vec<ChangedRow>>,
    /// Per profile, the verdict and recommendation before and after.
    pub verdicts: Vec<VerdictRow>,
    /// Per profile, the capacity search before and after.
    pub capacity: Vec<CapacityBlock>,
    /// Every metric of every compared cell; `leads` marks the rows listed first.
    pub changes: Vec<ChangeRow>,
    /// Rows not leading shown unchanged.
    pub unchanged: usize,
    /// Rows not leading undecided, with a measured change within the threshold.
    pub small: usize,
    /// Percentiles told by the whole distribution's shift: `profile candidate metric: how`.
    pub by_shift: Vec<String>,
    /// Each cell's whole-distribution shifts.
    pub shifts: Vec<ShiftRow>,
    /// Per cell, how many requests each side holds and how they were paired.
    pub requests: Vec<String>,
    /// What could not be compared, and why.
    pub not_comparable: Vec<String>,
    /// Notes.
    pub notes: Vec<String>,
    /// Per profile with compared cells, in order: (profile, the trade-off chart's caption).
    pub tradeoff_captions: Vec<(String, String)>,
    /// What is judged, label by label: the value both sides share, or `before → after`.
    #[serde(default)]
    pub subject: Vec<crate::show::view::Labelled>,
    /// Per compared cell, in the comparison's order: its TTFT and TPOT CDF captions.
    pub cdf_captions: Vec<[String; 2]>,
}

/// One thing that differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedRow {
    /// What.
    pub what: String,
    /// Before (`—`: none).
    pub before: String,
    /// After (`—`: none).
    pub after: String,
}

/// A profile's verdict before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRow {
    /// The profile.
    pub profile: String,
    /// `decision · recommended`, or `—`.
    pub before: String,
    /// The same after.
    pub after: String,
    /// Whether the verdict or the recommendation changed.
    pub flipped: bool,
    /// The binding SLO before: `metric value (limit L, margin M%)`, or `—`.
    pub binding_before: String,
    /// The same after.
    pub binding_after: String,
}

/// A profile's capacity search before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityBlock {
    /// `profile: before …; after …`.
    pub line: String,
    /// Per candidate: `candidate: capacity X before, Y after`, and whether it fell.
    pub candidates: Vec<(String, bool)>,
}

/// One metric of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRow {
    /// The profile.
    pub profile: String,
    /// The candidate (inert).
    pub candidate: String,
    /// The metric's name (`ttft_p95_ms`).
    pub metric: String,
    /// Before, with its unit.
    pub before: String,
    /// After, with its unit.
    pub after: String,
    /// The change, with its unit and the relative change.
    pub change: String,
    /// The 95% interval of the change, with its unit.
    pub interval: String,
    /// How the interval was made.
    pub method: String,
    /// The smallest change the interval can detect (80% power).
    pub detectable: String,
    /// The threshold: relative and absolute.
    pub threshold: String,
    /// The label as a class name (`regression`, `no-change` …).
    pub class: String,
    /// The label in words.
    pub label: String,
    /// Whether the row leads (see [`leads`]).
    pub leads: bool,
}

/// One quantity's whole-distribution shift in one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftRow {
    /// The profile.
    pub profile: String,
    /// The candidate (inert).
    pub candidate: String,
    /// The quantity, `(paired)` when paired by index.
    pub quantity: String,
    /// The Hodges–Lehmann shift, ms.
    pub shift: String,
    /// Its 95% interval, ms.
    pub interval: String,
    /// Whether the shape differs (Kolmogorov–Smirnov).
    pub shape: String,
    /// The label in words.
    pub label: String,
}

/// The comparison's view.
pub fn comparison_view(c: &Comparison) -> ComparisonView {
    let changes: Vec<ChangeRow> = c
        .cells
        .iter()
        .flat_map(|cell| cell.metrics.iter().map(move |m| change_row(cell, m)))
        .collect();
    let rest = changes.iter().filter(|r| !r.leads);
    let unchanged = rest.clone().filter(|r| r.class == "no-change").count();
    let small = rest.count() - unchanged;
    ComparisonView {
        outcome: outcome_class(c.outcome).into(),
        headline: escaped(&headline(c)),
        refused: c.refused.iter().map(|r| escaped(r)).collect(),
        changed: (c.outcome != Outcome::Refused).then(|| changed_rows(c)),
        verdicts: c.verdicts.iter().map(verdict_row).collect(),
        capacity: capacity_blocks(c),
        changes,
        unchanged,
        small,
        by_shift: by_shift(c),
        shifts: c
            .cells
            .iter()
            .flat_map(|cell| cell.shifts.iter().map(move |s| shift_row(cell, s)))
            .collect(),
        requests: c.cells.iter().map(requests_line).collect(),
        not_comparable: c
            .not_comparable
            .iter()
            .map(|n| {
                format!(
                    "{} {}: {}",
                    inert(&n.profile),
                    inert(&n.candidate),
                    escaped(&n.reason)
                )
            })
            .collect(),
        notes: c.notes.iter().map(|n| escaped(n)).collect(),
        tradeoff_captions: tradeoff_captions(c),
        subject: subject_lines(c),
        cdf_captions: c
            .cells
            .iter()
            .map(|cell| {
                let who = format!("{} {}", inert(&cell.profile), inert(&cell.candidate));
                let n = format!(
                    "{} requests before, {} after",
                    cell.requests_before, cell.requests_after
                );
                [
                    format!("{who}: TTFT CDF before (dashed) and after (solid), {n}"),
                    format!("{who}: TPOT CDF before (dashed) and after (solid), {n}"),
                ]
            })
            .collect(),
    }
}

fn tradeoff_captions(c: &Comparison) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for cell in &c.cells {
        if !out.iter().any(|(p, _)| *p == cell.profile) {
            let caption = format!(
                "{}: TTFT p95 vs output throughput per candidate, before (hollow) → after (filled)",
                inert(&cell.profile)
            );
            out.push((cell.profile.clone(), caption));
        }
    }
    out
}

fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Regression => "regression",
        Outcome::NoRegression => "no-regression",
        Outcome::NothingComparable => "nothing-comparable",
        Outcome::Incomplete => "incomplete",
        Outcome::Inconclusive => "inconclusive",
        Outcome::Refused => "refused",
    }
}

fn changed_rows(c: &Comparison) -> Vec<ChangedRow> {
    let join = |v: &[String]| {
        if v.is_empty() {
            "—".to_string()
        } else {
            escaped(&v.join(", "))
        }
    };
    c.changed
        .iter()
        .map(|ch| ChangedRow {
            what: escaped(&ch.what),
            before: join(&ch.before),
            after: join(&ch.after),
        })
        .collect()
}

fn margin(m: &Option<Margin>) -> String {
    m.as_ref().map_or("—".into(), |m| {
        let unit = spaced(m.metric.unit());
        let margin = m
            .margin_ratio
            .map_or(String::new(), |r| format!(", margin {}%", num(r * 100.0)));
        format!(
            "{} {}{unit} (limit {}{unit}{margin})",
            m.metric.name(),
            m.value.map_or("—".into(), num),
            num(m.limit),
        )
    })
}

fn verdict(d: Option<ProfileDecision>, rec: &Option<String>) -> String {
    match (d, rec) {
        (Some(d), Some(r)) => format!("{} · {}", d.label(), inert(r)),
        (Some(d), None) => d.label().to_string(),
        (None, _) => "—".into(),
    }
}

/// Each line of what is judged: the shared value, or `before → after` where they differ.
fn subject_lines(c: &Comparison) -> Vec<crate::show::view::Labelled> {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "not recorded".into());
    c.subject
        .iter()
        .map(|s| crate::show::view::Labelled {
            label: crate::show::view::Shown::new(&s.label),
            value: crate::show::view::Shown::input(if s.before == s.after {
                or_none(&s.before)
            } else {
                format!(
                    "before {} → after {}",
                    or_none(&s.before),
                    or_none(&s.after)
                )
            }),
        })
        .collect()
}

fn verdict_row(v: &crate::analyse::regression::types::VerdictChange) -> VerdictRow {
    VerdictRow {
        profile: inert(&v.profile),
        before: verdict(v.before, &v.recommended_before),
        after: match v.incomplete_side {
            Some(side) => format!(
                "{} (not compared: the {} side is incomplete — a planned run is missing or left \
                 out there)",
                verdict(v.after, &v.recommended_after),
                match side {
                    crate::analyse::regression::types::WhichSide::Before => "before",
                    crate::analyse::regression::types::WhichSide::After => "after",
                }
            ),
            None => verdict(v.after, &v.recommended_after),
        },
        flipped: v.flipped,
        binding_before: margin(&v.binding_before),
        binding_after: margin(&v.binding_after),
    }
}

fn capacity_blocks(c: &Comparison) -> Vec<CapacityBlock> {
    c.capacity
        .iter()
        .map(|k| CapacityBlock {
            line: format!(
                "{}: before {}; after {}",
                inert(&k.profile),
                escaped(k.before.as_deref().unwrap_or("no search")),
                escaped(k.after.as_deref().unwrap_or("no search"))
            ),
            candidates: k
                .candidates
                .iter()
                .map(|x| {
                    let line = format!(
                        "{} {}: capacity {} before, {} after{}",
                        inert(&k.profile),
                        inert(&x.candidate),
                        escaped(&x.said[0]),
                        escaped(&x.said[1]),
                        if x.worse { " — REGRESSION" } else { "" }
                    );
                    (line, x.worse)
                })
                .collect(),
        })
        .collect()
}

/// A label as (class name, words).
pub fn label(l: Label) -> (&'static str, &'static str) {
    match l {
        Label::Regression => ("regression", "REGRESSION"),
        Label::Improvement => ("improvement", "improvement"),
        Label::NoChange => ("no-change", "no change"),
        Label::Inconclusive => ("inconclusive", "inconclusive"),
        Label::Borderline => ("borderline", "near the threshold"),
    }
}

fn change_row(cell: &Cell, m: &MetricChange) -> ChangeRow {
    let unit = spaced(m.metric.unit());
    let end = |v: Option<f64>, none: &str| v.map_or_else(|| none.to_string(), signed);
    let rel = m.ratio.map_or(String::new(), |r| {
        format!(" ({:+}%)", num((r - 1.0) * 100.0))
    });
    let (class, word) = label(m.label);
    ChangeRow {
        profile: inert(&cell.profile),
        candidate: inert(&cell.candidate),
        metric: m.metric.name(),
        before: m.before.map_or("—".into(), |v| format!("{}{unit}", num(v))),
        after: m.after.map_or("—".into(), |v| format!("{}{unit}", num(v))),
        change: m
            .difference
            .map_or("—".into(), |d| format!("{}{unit}{rel}", signed(d))),
        interval: m.difference_interval.map_or_else(
            || "—".into(),
            |iv| {
                format!(
                    "[{}, {}]{unit}",
                    end(iv.low, "no lower bound"),
                    end(iv.high, "no upper bound")
                )
            },
        ),
        method: escaped(&m.method),
        detectable: m
            .detectable_change
            .map_or_else(|| "none".into(), |d| format!("±{}{unit}", num(d))),
        threshold: format!(
            "{}% and {}{unit}",
            num(m.threshold.relative * 100.0),
            num(m.threshold.absolute)
        ),
        class: class.into(),
        label: word.into(),
        leads: leads(m),
    }
}

fn shift_row(cell: &Cell, s: &ShiftChange) -> ShiftRow {
    let iv = &s.shift;
    let end = |v: Option<f64>, none: &str| v.map_or_else(|| none.to_string(), signed);
    ShiftRow {
        profile: inert(&cell.profile),
        candidate: inert(&cell.candidate),
        quantity: format!("{}{}", s.quantity, if s.paired { " (paired)" } else { "" }),
        shift: format!("{} ms", signed(iv.estimate)),
        interval: format!(
            "[{}, {}] ms",
            end(iv.low, "no lower bound"),
            end(iv.high, "no upper bound")
        ),
        shape: if s.shape_p < 0.05 {
            format!("differs (KS p {:.3})", s.shape_p)
        } else {
            "same".into()
        },
        label: label(s.label).1.into(),
    }
}

fn by_shift(c: &Comparison) -> Vec<String> {
    c.cells
        .iter()
        .flat_map(|cell| {
            cell.metrics
                .iter()
                .filter(|m| leads(m) && m.method.contains("moved with it"))
                .map(move |m| {
                    format!(
                        "{} {} {}: {}",
                        inert(&cell.profile),
                        inert(&cell.candidate),
                        m.metric,
                        escaped(&m.method)
                    )
                })
        })
        .collect()
}

fn requests_line(cell: &Cell) -> String {
    let how = match &cell.pairing_note {
        None => "requests paired by index (the same request sequence)".to_string(),
        Some(why) => format!("requests not paired: {}", escaped(why)),
    };
    format!(
        "{} {}: {} requests before, {} after; {how}",
        inert(&cell.profile),
        inert(&cell.candidate),
        cell.requests_before,
        cell.requests_after
    )
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

fn spaced(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}
