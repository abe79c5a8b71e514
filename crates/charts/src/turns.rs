//! TTFT by turn of a multi-turn session: one line per candidate from turn 1 on, the TTFT p95
//! SLO dashed. With a prefix cache later turns (which resend the conversation so far) should
//! not cost more than the first; without one TTFT grows with the conversation.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;
use sloscope_core::view::ChartsView;

use crate::{
    empty, frame, legend, legend_room, marker, shown, tick, upper, Drawn, Frame, Swatch, SLO,
};

/// TTFT p95 against the turn number, per candidate.
pub fn ttft_by_turn<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &ChartsView,
) -> Drawn<DB> {
    let series: Vec<(String, Vec<(f64, f64)>)> = p
        .candidates
        .iter()
        .filter_map(|c| {
            let pts: Vec<(f64, f64)> = c
                .summary
                .as_ref()?
                .signals
                .by_turn
                .iter()
                .filter_map(|t| Some((f64::from(t.turn), t.ttft.p95_ms?)))
                .collect();
            (!pts.is_empty()).then(|| (shown(&c.name), pts))
        })
        .collect();
    let title = format!("{}: TTFT p95 by turn", p.profile);
    if series.is_empty() {
        return empty(root, &format!("{title}: no sessions"));
    }
    let slo = cv.tradeoff_ttft.as_ref().map(|s| s.limit);
    // The legend has its own room: it never covers a turn's point.
    let mut entries: Vec<(String, Swatch)> = slo
        .map(|limit| (format!("SLO ≤ {} ms", tick(&limit)), Swatch::Dashed(SLO)))
        .into_iter()
        .collect();
    let looks = crate::looks(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>());
    entries.extend(
        series
            .iter()
            .zip(&looks)
            .map(|((name, _), &(m, c))| (name.clone(), Swatch::Marker(m, c))),
    );
    let (root, side) = legend_room(root, &entries);
    let turns = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let ymax = upper(
        series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .chain(slo),
    );
    let mut chart =
        frame(&root, &title, Frame::Roomy)?.build_cartesian_2d(0.5f64..turns + 0.5, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("turn of the session")
        .y_desc("TTFT p95 (ms)")
        .x_labels((turns as usize).min(12))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    if let Some(y) = slo {
        chart.draw_series(DashedLineSeries::new(
            [(0.5, y), (turns + 0.5, y)],
            6,
            4,
            SLO.stroke_width(2),
        ))?;
    }
    for (i, (name, pts)) in series.iter().enumerate() {
        if !crate::marks::visible(name) {
            continue;
        }
        let (shape, color) = looks[i];
        for (x, y) in pts {
            crate::marks::add(
                &chart,
                &(*x, *y),
                format!("{name}: turn {}, TTFT p95 {} ms", tick(x), tick(y)),
            );
        }
        chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|&at| marker::<DB, _>(shape, at, color)))?;
    }
    legend(&side, &entries)?;
    root.present()
}
