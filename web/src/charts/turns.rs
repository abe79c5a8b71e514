//! TTFT by turn of a multi-turn session: one line per candidate from turn 1 on, the TTFT p95
//! SLO dashed. With a prefix cache later turns (which resend the conversation so far) should
//! not cost more than the first; without one TTFT grows with the conversation.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analyse::report::ProfileReport;
use sloscope_core::show::view::ChartsView;

use super::{empty, marker, shown, tick, upper, Drawn, FONT, PALETTE, SLO};

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
    // The legend has its own column at the right: it never covers a turn's point.
    let (w, _) = root.dim_in_pixel();
    let (root, side) = root.split_horizontally(w.saturating_sub(LEGEND_W));
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
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, (FONT, 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.5f64..turns + 0.5, 0f64..ymax)?;
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
    for (i, (_, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|&at| marker::<DB, _>(i, at, color)))?;
    }
    legend(&side, &series, slo)?;
    root.present()
}

/// Pixels of the legend column.
const LEGEND_W: u32 = 170;

/// The legend in its own column: the SLO line, then one marker and name per candidate.
fn legend<DB: DrawingBackend + 'static>(
    side: &DrawingArea<DB, Shift>,
    series: &[(String, Vec<(f64, f64)>)],
    slo: Option<f64>,
) -> Drawn<DB> {
    let mut y = 44;
    if let Some(limit) = slo {
        for x in [4, 14] {
            side.draw(&PathElement::new([(x, y), (x + 6, y)], SLO.stroke_width(2)))?;
        }
        side.draw(&Text::new(
            format!("SLO ≤ {} ms", tick(&limit)),
            (26, y - 7),
            (FONT, 13),
        ))?;
        y += 20;
    }
    for (i, (name, _)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        side.draw(&marker::<DB, _>(i, (12, y), color))?;
        side.draw(&Text::new(name.clone(), (26, y - 7), (FONT, 13)))?;
        y += 20;
    }
    Ok(())
}
