//! TPOT by concurrency across profiles: the first screen's chart.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::Analysis;
use sloscope_core::measure::Metric;

use crate::{
    empty, frame, legend, legend_room, marker, shown, tick, upper, Drawn, Frame, Swatch,
    LEGEND_COLUMN_MIN_W,
};

/// TPOT p95 of every candidate at each profile's concurrency. Each profile has its own
/// workload (prompt and output lengths), so points are markers, never joined into a line that
/// would read as one concurrency sweep; each is labelled with its workload.
pub fn tpot_by_concurrency<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    a: &Analysis,
) -> Drawn<DB> {
    let tpot = Metric::TPOT_P95;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut workloads: Vec<(f64, String)> = Vec::new();
    for p in &a.profiles {
        let Some(w) = p.workload.as_ref() else {
            continue;
        };
        let Some(conc) = w.concurrency else {
            continue;
        };
        workloads.push((conc as f64, shown(w.id.as_deref().unwrap_or(&p.profile))));
        let mut add = |name: String, v: f64| match series.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push((conc as f64, v)),
            None => series.push((name, vec![(conc as f64, v)])),
        };
        for c in &p.candidates {
            if let Some(v) = c.metric(tpot) {
                add(shown(&c.name), v);
            }
        }
        if let Some(b) = &p.baseline {
            if let Some(v) = b.summary.metric(tpot) {
                add(format!("{}{}", b.artifact_id, crate::BASELINE_SUFFIX), v);
            }
        }
    }
    let title = "TPOT p95 by concurrency (one point per profile and workload; not a sweep)";
    if series.is_empty() {
        return empty(root, title);
    }
    let xmax = upper(series.iter().flat_map(|s| s.1.iter().map(|p| p.0)));
    let ymax = upper(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    let looks = crate::looks(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>());
    let entries: Vec<(String, Swatch)> = series
        .iter()
        .zip(&looks)
        .map(|(s, &(m, c))| (s.0.clone(), Swatch::Marker(m, c)))
        .collect();
    let narrow = root.dim_in_pixel().0 < LEGEND_COLUMN_MIN_W;
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart = frame(root, title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    // The workload's name under its concurrency's tick; on a narrow chart (a phone) only
    // those ticks are labelled, so names and numbers do not run into each other.
    let at_tick = |x: &f64| match workloads.iter().find(|(c, _)| (c - x).abs() < 1e-9) {
        Some((_, id)) => format!("{} · {id}", tick(x)),
        None if narrow => String::new(),
        None => tick(x),
    };
    chart
        .configure_mesh()
        .x_desc("concurrency (streams) · workload")
        .y_desc("TPOT p95 (ms)")
        .x_label_formatter(&at_tick)
        .y_label_formatter(&tick)
        .draw()?;
    for (x, _) in &workloads {
        chart.draw_series(LineSeries::new(
            [(*x, 0.0), (*x, ymax)],
            BLACK.mix(0.15).stroke_width(1),
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
                format!("{name}: concurrency {}, TPOT p95 {} ms", tick(x), tick(y)),
            );
        }
        chart.draw_series(pts.iter().map(|&at| marker::<DB, _>(shape, at, color)))?;
    }
    legend(&side, &entries)?;
    root.present()
}
