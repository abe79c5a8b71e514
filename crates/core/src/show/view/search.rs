//! The configuration search as a reader sees it: a heading (the space and its budget), one row
//! per trial in search order, and lines for the pick, its confirmation and why each other
//! configuration measured was dropped.

use crate::analyse::explore::replay::{SearchReport, SearchStatus, TrialRow};
use crate::base::fmt::{format_number, MISSING};

use super::{column, Cell, Row, Shown, TableView};

pub(super) fn title(s: &SearchReport) -> String {
    format!(
        "Configuration search ({}), ranked by {}: {}",
        match s.status {
            SearchStatus::Complete => "complete",
            SearchStatus::Incomplete => "incomplete",
            SearchStatus::Refused => "refused",
        },
        s.primary.name(),
        s.space
    )
}

fn estimate(t: &TrialRow) -> String {
    let Some(e) = t.primary else {
        return MISSING.to_string();
    };
    let b = |v: Option<f64>| v.map_or_else(|| "no bound".to_string(), format_number);
    format!("{} [{}, {}]", format_number(e.value), b(e.lo), b(e.hi))
}

pub(super) fn table(s: &SearchReport) -> TableView {
    let columns = vec![
        column("#", false, true),
        column("configuration", true, false),
        column("purpose", false, false),
        column("requests", false, true),
        column(&format!("{} [95 % interval]", s.primary.name()), true, true),
        column("every SLO met with confidence", true, false),
        column("peak memory (MB)", false, true),
    ];
    let chosen = s.result.chosen_name.as_deref();
    let rows = s
        .trials
        .iter()
        .map(|t| Row {
            key: Shown::input(format!("{}-{}", t.index, t.name)),
            highlighted: chosen == Some(t.name.as_str()),
            cells: vec![
                Cell::text((t.index + 1).to_string()),
                Cell::text(if chosen == Some(t.name.as_str()) {
                    format!("{} ★", t.name)
                } else {
                    t.name.clone()
                }),
                Cell::text(t.purpose.as_str()),
                Cell::text(t.requests.to_string()),
                Cell::text(estimate(t)),
                Cell::text(match (&t.infeasible, t.meets_all) {
                    (Some(why), _) => format!("infeasible: {why}"),
                    (None, Some(true)) => "yes".to_string(),
                    (None, _) => "no".to_string(),
                }),
                Cell::text(
                    t.peak_memory_mb
                        .map_or_else(|| MISSING.to_string(), format_number),
                ),
            ],
        })
        .collect();
    TableView { columns, rows }
}

pub(super) fn lines(s: &SearchReport) -> Vec<String> {
    let r = &s.result;
    let mut out = Vec::new();
    if let Some(p) = &s.problem {
        out.push(format!(
            "{}: {p}",
            match s.status {
                SearchStatus::Refused => "refused, nothing of it is used",
                _ => "incomplete, its pick is provisional",
            }
        ));
    }
    out.push(match &r.chosen_name {
        Some(n) => format!(
            "chose {n} after {} launches and {} requests over {} configurations{} (walk revision {})",
            r.launches,
            r.requests,
            r.configurations,
            if r.chosen_meets_all {
                ", meeting every SLO with confidence"
            } else {
                ", meeting the SLOs in the search by its point estimates only"
            },
            s.settings.walk
        ),
        None => format!(
            "no configuration meets the SLOs after {} launches and {} requests over {} configurations (walk revision {})",
            r.launches, r.requests, r.configurations, s.settings.walk
        ),
    });
    out.push(match (r.confirmed, &r.confirmation) {
        (Some(true), Some(c)) => format!("confirmed on fresh launches: {c}"),
        (Some(false), Some(c)) => format!("NOT upheld on fresh launches: {c}"),
        _ => "not confirmed on a fresh launch".to_string(),
    });
    if let Some(line) = front_line(s) {
        out.push(line);
    }
    out.extend(
        r.dropped
            .iter()
            .map(|d| match d.reason.strip_prefix("not chosen: ") {
                Some(why) => format!("not chosen {}: {why}", d.name),
                None => format!("dropped {}: {}", d.name, d.reason),
            }),
    );
    out
}

/// The memory trade-off in one line: each configuration no other beats on both, from the least
/// memory up.
fn front_line(s: &SearchReport) -> Option<String> {
    if s.front.is_empty() {
        return None;
    }
    let unit = s.primary.unit();
    let points: Vec<String> = s
        .front
        .iter()
        .map(|p| {
            format!(
                "{} ({} MB, {} {unit})",
                p.name,
                format_number(p.peak_memory_mb),
                format_number(p.primary.value)
            )
            .replace(" )", ")")
        })
        .collect();
    Some(format!(
        "{} vs peak memory, the configurations no other beats on both (point estimates): {}",
        s.primary.name(),
        points.join("; ")
    ))
}
