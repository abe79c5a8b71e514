//! The verdict table (a row per profile, as the CLI and Markdown print it) and the profile names
//! that are none of latency, balanced or throughput: not analysed, and shown as such.

use crate::analyse::report::{Analysis, UnknownProfile};
use crate::base::fmt::{with_unit, MISSING};
use crate::base::metric::Metric;

use super::types::{Cell, Mark, Row, Shown, TableView, UnknownProfileView};
use super::{column, decision_label};

/// One row per profile, then one per profile name that is none of the three.
pub(super) fn table(a: &Analysis) -> TableView {
    let columns = vec![
        column("profile", true, false),
        column("decision", true, false),
        column("recommended", true, false),
        column("primary metric", true, false),
        column("value", true, true),
        column("reason", false, false),
    ];
    let rows = a
        .profiles
        .iter()
        .map(|p| {
            let chosen = p.candidates.iter().find(|c| c.chosen);
            let pm = p.primary_metric.as_deref().and_then(Metric::parse);
            let value = chosen.and_then(|c| c.primary_value);
            Row {
                key: Shown::input(&p.profile),
                highlighted: false,
                cells: vec![
                    Cell::text(&p.profile),
                    Cell::text(decision_label(p)),
                    Cell::text(p.recommended_name.as_deref().unwrap_or(MISSING)),
                    Cell::text(p.primary_metric.as_deref().unwrap_or(MISSING)),
                    Cell {
                        text: Shown::new(with_unit(value, pm.map_or("", Metric::unit))),
                        metric: pm,
                        value,
                        mark: Mark::None,
                    },
                    Cell::text(&p.reason),
                ],
            }
        })
        .chain(a.unknown_profiles.iter().map(|u| Row {
            key: Shown::input(&u.name),
            highlighted: false,
            cells: vec![
                Cell::text(&u.name),
                Cell::text(NOT_ANALYSED),
                Cell::text(MISSING),
                Cell::text(MISSING),
                Cell::text(MISSING),
                Cell::text(unknown_line(u)),
            ],
        }))
        .collect();
    TableView { columns, rows }
}

/// The decision shown for a profile name that is not a serving profile.
const NOT_ANALYSED: &str = "not analysed";

/// Why a profile name was not analysed, and what names it.
fn unknown_line(u: &UnknownProfile) -> String {
    format!(
        "not a serving profile (latency, balanced or throughput): its runs are not compared; named by {}",
        u.files.join(", ")
    )
}

/// The profile names that are none of the three, as a reader sees them.
pub(super) fn unknown(a: &Analysis) -> Vec<UnknownProfileView> {
    a.unknown_profiles
        .iter()
        .map(|u| UnknownProfileView {
            profile: Shown::input(&u.name),
            decision_label: Shown::new(NOT_ANALYSED),
            line: Shown::new(unknown_line(u)),
        })
        .collect()
}
