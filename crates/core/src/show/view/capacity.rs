//! The capacity search as a reader sees it: a heading, one row per candidate, and lines for
//! the comparison and each candidate's trials.

use crate::analyse::capacity::{
    load_text, CandidateCapacity, CapacityReport, CapacityStatus, RankBy,
};
use crate::base::fmt::format_number;
use crate::base::metric::Metric;

use super::{column, Cell, Row, Shown, TableView};

pub(super) fn title(c: &CapacityReport) -> String {
    format!(
        "Capacity under the SLO: {} from {} to {}, tolerance {}; {}",
        c.over.as_str(),
        format_number(c.min),
        load_text(c.over, c.max),
        load_text(c.over, c.tolerance),
        match c.rank_by {
            RankBy::Capacity => "candidates ranked by capacity",
            RankBy::Goodput => "candidates ranked by output throughput within every SLO",
            RankBy::FixedLoad => "the verdict is the fixed-load one; capacities beside it",
        }
    )
}

fn status(s: CapacityStatus) -> &'static str {
    match s {
        CapacityStatus::Found => "found",
        CapacityStatus::AtLeastMax => "at least max",
        CapacityStatus::BelowMin => "below min",
        CapacityStatus::Open => "open (search incomplete)",
        CapacityStatus::NoTrials => "no trials",
    }
}

fn load_cell(v: Option<f64>) -> Cell {
    Cell {
        text: Shown::new(v.map_or_else(|| crate::base::fmt::MISSING.to_string(), format_number)),
        metric: None,
        value: v,
        mark: super::Mark::None,
    }
}

pub(super) fn table(c: &CapacityReport) -> TableView {
    let unit = c.over.unit();
    let columns = vec![
        column("candidate", true, false),
        column(&format!("capacity ({unit})"), true, false),
        column(&format!("last pass ({unit})"), true, true),
        column(&format!("first fail ({unit})"), true, true),
        column("binding SLO at first fail", true, false),
        column(
            "best output within SLO",
            c.rank_by == RankBy::Goodput,
            false,
        ),
        column(&format!("trials (grid: {})", c.grid_trials), false, true),
        column("status", false, false),
        column("evidence", true, false),
    ];
    let rows = c
        .candidates
        .iter()
        .map(|k| Row {
            key: Shown::input(&k.name),
            highlighted: c.best.as_deref() == Some(k.name.as_str()),
            cells: vec![
                Cell::text(if c.best.as_deref() == Some(k.name.as_str()) {
                    format!("{} ★", k.name)
                } else {
                    k.name.clone()
                }),
                Cell::text(k.text.clone()),
                load_cell(k.last_pass),
                load_cell(k.first_fail),
                Cell::text(k.binding_at_fail.clone().unwrap_or_else(|| "—".into())),
                Cell {
                    text: Shown::new(match (k.goodput_tps, k.goodput_load) {
                        (Some(g), Some(l)) => {
                            format!("{} tok/s at {}", format_number(g), load_text(c.over, l))
                        }
                        _ => crate::base::fmt::MISSING.to_string(),
                    }),
                    metric: Some(Metric::THROUGHPUT),
                    value: k.goodput_tps,
                    mark: super::Mark::None,
                },
                Cell {
                    text: Shown::new(k.trials.len().to_string()),
                    metric: None,
                    value: Some(k.trials.len() as f64),
                    mark: super::Mark::None,
                },
                Cell::text(status(k.status)),
                Cell::text(if k.real_evidence {
                    "real backend"
                } else {
                    "not real (never accepted)"
                }),
            ],
        })
        .collect();
    TableView { columns, rows }
}

fn trials_line(c: &CapacityReport, k: &CandidateCapacity) -> String {
    let mut by_index: Vec<&crate::analyse::capacity::TrialReport> = k.trials.iter().collect();
    crate::base::order::sort_by_key(&mut by_index, |t| t.index);
    let steps: Vec<String> = by_index
        .iter()
        .map(|t| {
            format!(
                "{} {}{}",
                format_number(t.load),
                if t.pass { "✓" } else { "✗" },
                if t.marginal { " (marginal)" } else { "" }
            )
        })
        .collect();
    format!(
        "{} trials in order ({}): {}",
        k.name,
        c.over.unit(),
        steps.join(", ")
    )
}

pub(super) fn lines(c: &CapacityReport) -> Vec<String> {
    let mut out = vec![c.statement.clone()];
    for k in &c.candidates {
        out.push(trials_line(c, k));
        if !k.marginal_loads.is_empty() {
            out.push(format!(
                "{}: decided by the point estimate at {} (the SLO interval straddles the limit at the request cap)",
                k.name,
                k.marginal_loads
                    .iter()
                    .map(|&l| load_text(c.over, l))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !k.short_loads.is_empty() {
            out.push(format!(
                "{}: fewer than {} requests per stream at {} — the queue may not have reached its steady state, so a pass there is weak evidence",
                k.name,
                crate::analyse::capacity::MIN_REQUESTS_PER_STREAM,
                k.short_loads
                    .iter()
                    .map(|&l| load_text(c.over, l))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !k.passes_above_fail.is_empty() {
            out.push(format!(
                "{}: passed at {} above its first failing load — not monotone (noise, or a server that recovers); the capacity uses the first fail",
                k.name,
                k.passes_above_fail
                    .iter()
                    .map(|&l| load_text(c.over, l))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.extend(k.excluded.iter().map(|e| format!("trial not used: {e}")));
    }
    out
}
