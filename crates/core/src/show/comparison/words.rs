//! The comparison's sentences: the one-line answer naming what got worse, and which metric
//! rows lead.

use crate::analyse::regression::types::{
    Comparison, Label, MetricChange, NotComparableKind, Outcome,
};
use crate::analyse::verdict::ProfileDecision;
use crate::show::view::inert;

/// The cells that got worse, by name with the metrics that did (three at most, the rest
/// counted), and the profiles whose recommendation changed: `: balanced np4 (tpot_p50_ms,
/// e2e_p50_ms); the recommendation changed in latency (np1 → np4)`.
fn what_got_worse(c: &Comparison) -> String {
    let worse: Vec<String> = c
        .cells
        .iter()
        .filter(|x| x.label == Label::Regression)
        .map(|x| {
            let metrics: Vec<String> = x
                .metrics
                .iter()
                .filter(|m| m.label == Label::Regression)
                .map(|m| m.metric.name())
                .chain(
                    x.shifts
                        .iter()
                        .filter(|s| s.label == Label::Regression)
                        .map(|s| format!("{} shift", s.quantity)),
                )
                .collect();
            // The first few, in the table's order: the headline names the cells; the table
            // holds every metric.
            let shown = metrics.len().min(3);
            let rest = metrics.len() - shown;
            format!(
                "{} {} ({}{})",
                inert(&x.profile),
                inert(&x.candidate),
                metrics[..shown].join(", "),
                if rest > 0 {
                    format!(" and {rest} more")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    let mut out = String::new();
    if !worse.is_empty() {
        let more = worse.len().saturating_sub(3);
        out = format!(": {}", worse[..worse.len().min(3)].join("; "));
        if more > 0 {
            out.push_str(&format!(" and {more} more"));
        }
    }
    out
}

/// `; the verdict changed in latency (np1 → np4)` for the profiles whose recommendation (or,
/// with the same recommendation, decision) changed; empty when none did.
fn verdicts_changed(c: &Comparison) -> String {
    let flips: Vec<String> = c
        .verdicts
        .iter()
        .filter(|v| v.flipped)
        .map(|v| {
            let r = |x: &Option<String>| x.as_deref().map_or("none".to_string(), inert);
            let d = |x: Option<ProfileDecision>| x.map_or("none", |d| d.as_str());
            let (a, b) = if v.recommended_before == v.recommended_after {
                (d(v.before).to_string(), d(v.after).to_string())
            } else {
                (r(&v.recommended_before), r(&v.recommended_after))
            };
            format!("{} ({a} → {b})", inert(&v.profile))
        })
        .collect();
    if flips.is_empty() {
        return String::new();
    }
    format!("; the verdict changed in {}", flips.join(", "))
}

/// Whether a metric's row leads (is listed first): a change shown past or near its threshold,
/// or an undecided one whose measured change is itself past the threshold. A row shown
/// unchanged, or undecided with a measured change within its threshold, is only counted (and
/// kept under "all metrics" on the page and in the JSON).
pub fn leads(m: &MetricChange) -> bool {
    match m.label {
        Label::NoChange => false,
        Label::Inconclusive => m.difference.is_some_and(|d| {
            let base = m.before.map_or(0.0, f64::abs);
            d.abs() > m.threshold.relative * base && d.abs() > m.threshold.absolute
        }),
        _ => true,
    }
}

/// The one-line answer.
pub fn headline(c: &Comparison) -> String {
    let regressed = c
        .cells
        .iter()
        .filter(|x| x.label == Label::Regression)
        .count();
    match c.outcome {
        Outcome::Regression => {
            let failed = c
                .not_comparable
                .iter()
                .filter(|n| n.kind == NotComparableKind::FailedAfter)
                .count();
            let mut s = format!(
                "regression: {regressed} of {} compared cells got worse beyond their thresholds",
                c.cells.len()
            );
            if failed > 0 {
                s.push_str(&format!("; {failed} run(s) failed after the change"));
            }
            let fell = c
                .capacity
                .iter()
                .flat_map(|k| &k.candidates)
                .filter(|x| x.worse)
                .count();
            if fell > 0 {
                s.push_str(&format!(
                    "; the sustained load fell for {fell} candidate(s)"
                ));
            }
            s.push_str(&what_got_worse(c));
            // What could not be compared is said beside what got worse, never left out.
            let lost = c
                .not_comparable
                .iter()
                .filter(|n| {
                    matches!(
                        n.kind,
                        NotComparableKind::MissingAfter | NotComparableKind::LeftOut
                    )
                })
                .count();
            if lost > 0 {
                s.push_str(&format!(
                    "; {lost} cell(s) not compared (not measured after, or left out: each below)"
                ));
            }
            s + &verdicts_changed(c)
        }
        Outcome::NoRegression => format!(
            "no regression in {} compared cells ({} inconclusive){}",
            c.cells.len(),
            c.cells
                .iter()
                .filter(|x| x.label == Label::Inconclusive)
                .count(),
            verdicts_changed(c)
        ),
        Outcome::NothingComparable => {
            "nothing comparable: no cell has the same profile, candidate and workload on both sides"
                .into()
        }
        Outcome::Incomplete => format!(
            "incomplete: no compared cell regressed, but {} (each below){}",
            incomplete_because(c),
            verdicts_changed(c)
        ),
        Outcome::Inconclusive => format!(
            "inconclusive: {} cell(s) compared, but no metric of any could be decided (every \
             interval is too wide for its threshold; each row says how many requests a side \
             would be): nothing was shown unchanged{}",
            c.cells.len(),
            verdicts_changed(c)
        ),
        Outcome::Refused => format!(
            "not compared: {}",
            match c.refused.as_slice() {
                [one] => one.clone(),
                many => format!("{} reasons, each below", many.len()),
            }
        ),
    }
}

/// What made a comparison incomplete, counted by kind: cells the after side lost, runs left
/// out, runs holding the other side's measurements; else the after side's own planned cells
/// missing.
fn incomplete_because(c: &Comparison) -> String {
    let count = |k: NotComparableKind| c.not_comparable.iter().filter(|n| n.kind == k).count();
    let said: Vec<String> = [
        (
            NotComparableKind::MissingAfter,
            "cell(s) measured before were not measured after",
        ),
        (
            NotComparableKind::LeftOut,
            "run(s) were left out of a side's analysis",
        ),
        (
            NotComparableKind::SameMeasurements,
            "run(s) hold the other side's measurements",
        ),
    ]
    .into_iter()
    .filter_map(|(k, what)| {
        Some(count(k))
            .filter(|&n| n > 0)
            .map(|n| format!("{n} {what}"))
    })
    .collect();
    if said.is_empty() {
        "the after side's own analysis is incomplete: a planned cell of it has no usable run".into()
    } else {
        said.join(", ")
    }
}
