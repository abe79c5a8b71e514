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

/// A failed launch's reason, short enough for a table cell: what happened and the server log's
/// last line (where the cause usually is), at most 160 characters; the whole reason is in the
/// lines under the table.
fn first_words(why: &str) -> String {
    let said = match why.split_once("; log tail: ") {
        Some((head, tail)) => match tail.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
            Some(last) => format!("{head}; log's last line: {last}"),
            None => head.to_string(),
        },
        None => why.lines().next().unwrap_or_default().to_string(),
    };
    let cut: String = said.chars().take(160).collect();
    if cut.len() < said.len() || said.len() < why.trim_end().len() {
        format!("{cut}… (in full below)")
    } else {
        cut
    }
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
                    (Some(why), _) => format!("infeasible: {}", first_words(why)),
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
            "chose {n} after {} of {} launches and {} requests over {} configurations{} (walk revision {})",
            r.launches,
            s.settings.launches,
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
            "no configuration meets the SLOs after {} of {} launches and {} requests over {} configurations (walk revision {})",
            r.launches, s.settings.launches, r.requests, r.configurations, s.settings.walk
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

#[cfg(test)]
mod tests {
    use super::first_words;

    #[test]
    fn a_failed_launch_is_said_short_with_the_logs_last_line() {
        let log: String = (0..40)
            .map(|i| format!("line {i} of the server's log\n"))
            .collect();
        let why = format!(
            "server did not start: exited (exit code 1); log tail: {log}out of memory: KV cache"
        );
        let short = first_words(&why);
        assert!(short.chars().count() < 200, "{short}");
        assert!(short.contains("out of memory: KV cache"), "{short}");
        assert!(short.ends_with("(in full below)"), "{short}");
        // Control: a short reason is said whole.
        assert_eq!(first_words("out of memory"), "out of memory");
    }
}
