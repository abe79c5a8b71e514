//! Compare mode's charts: per profile, each candidate's TTFT p95 against output throughput
//! before (hollow) and after (filled), joined by an arrow; per cell, a distribution before
//! (dashed) and after (solid) on one axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::comparison::Cell;
use sloscope_core::measure::Metric;

use crate::{
    axes, empty, frame, legend, legend_room, shown, upper, Drawn, Entry, Frame, Quantity, Swatch,
    PALETTE,
};

/// (throughput, TTFT p95) of one side.
type Point = (f64, f64);

fn value(cell: &Cell, m: Metric) -> Option<(f64, f64)> {
    let c = cell.metrics.iter().find(|x| x.metric == m)?;
    Some((c.before?, c.after?))
}

/// One profile's cells on the TTFT–throughput plane, before and after.
pub fn tradeoff_shift<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    profile: &str,
    cells: &[&Cell],
) -> Drawn<DB> {
    let pts: Vec<(String, Point, Point)> = cells
        .iter()
        .filter_map(|c| {
            let (tb, ta) = value(c, Metric::THROUGHPUT)?;
            let (fb, fa) = value(c, Metric::TTFT_P95)?;
            Some((shown(&c.candidate), (tb, fb), (ta, fa)))
        })
        .collect();
    let title = format!("{profile}: TTFT p95 vs output throughput, before → after");
    if pts.is_empty() {
        return empty(root, &format!("{title}: no cell has both"));
    }
    let xmax = upper(pts.iter().flat_map(|p| [p.1 .0, p.2 .0]));
    let ymax = upper(pts.iter().flat_map(|p| [p.1 .1, p.2 .1]));
    let looks = crate::looks(&pts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>());
    let entries: Vec<Entry> = pts
        .iter()
        .zip(&looks)
        .map(|(p, &(_, c))| {
            let name = format!("{}: before ○ → after ●", p.0);
            (name, Swatch::Dot(c))
        })
        .collect();
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    axes(&mut chart, "output throughput (tokens/s)", "TTFT p95 (ms)")?;
    // Each candidate's legend entry shows or hides its before → after pair.
    let shown: Vec<bool> = pts
        .iter()
        .map(|p| crate::marks::visible(&format!("{}: before ○ → after ●", p.0)))
        .collect();
    for ((name, b, a), _) in pts.iter().zip(&shown).filter(|(_, s)| **s) {
        let t = crate::tick;
        let after = format!(
            "{name}, after: TTFT p95 {} ms (before {}), output throughput {} tokens/s (before {})",
            t(&a.1),
            t(&b.1),
            t(&a.0),
            t(&b.0)
        );
        crate::marks::add(&chart, a, after);
        let before = format!(
            "{name}, before: TTFT p95 {} ms, output throughput {} tokens/s",
            t(&b.1),
            t(&b.0)
        );
        crate::marks::add(&chart, b, before);
    }
    for (i, (_, b, a)) in pts.iter().enumerate().filter(|(i, _)| shown[*i]) {
        let color = looks[i].1;
        chart.draw_series(LineSeries::new([*b, *a], color.stroke_width(2)))?;
        chart.draw_series([Circle::new(*b, 5, color.stroke_width(2))])?;
        chart.draw_series([Circle::new(*a, 5, color.filled())])?;
    }
    legend(&side, &entries)?;
    root.present()
}

/// One cell's distribution of `q` before (dashed) and after (solid).
pub fn cdf_pair<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    cell: &Cell,
    q: Quantity,
) -> Drawn<DB> {
    let title = format!(
        "{} {}: {} CDF, before and after",
        cell.profile,
        shown(&cell.candidate),
        q.label()
    );
    let Some(curves) = &cell.curves else {
        return empty(root, &format!("{title}: no distributions"));
    };
    let [before, after] = match q {
        Quantity::Ttft => &curves.ttft_ms,
        Quantity::Tpot => &curves.tpot_ms,
        Quantity::E2e => &curves.e2e_ms,
    };
    if before.is_empty() || after.is_empty() {
        return empty(root, &format!("{title}: no values"));
    }
    let xmax = upper(before.iter().chain(after).copied());
    let (cb, ca) = (PALETTE[0], PALETTE[5]);
    let entries: Vec<Entry> = vec![
        ("before (dashed)".into(), Swatch::Dashed(cb)),
        ("after (solid)".into(), Swatch::Line(ca)),
    ];
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Small)?.build_cartesian_2d(0f64..xmax, 0f64..1.0f64)?;
    axes(
        &mut chart,
        &format!("{} (ms)", q.label()),
        "share of requests",
    )?;
    let line = |v: &[f64]| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .map(|(k, x)| (*x, k as f64 / 100.0))
            .collect()
    };
    // The legend's two entries show or hide their curve.
    let drawn = [
        crate::marks::visible("before (dashed)"),
        crate::marks::visible("after (solid)"),
    ];
    if drawn[0] {
        chart.draw_series(DashedLineSeries::new(
            line(before),
            6,
            4,
            cb.stroke_width(2),
        ))?;
    }
    if drawn[1] {
        chart.draw_series(LineSeries::new(line(after), ca.stroke_width(2)))?;
    }
    for (side, v) in [("before", before), ("after", after)]
        .into_iter()
        .zip(drawn)
        .filter(|(_, d)| *d)
        .map(|(s, _)| s)
    {
        for k in [50, 90, 95, 99] {
            if let Some(x) = v.get(k) {
                let text = format!("{side}: p{k} {} {} ms", q.label(), crate::tick(x));
                crate::marks::add(&chart, &(*x, k as f64 / 100.0), text);
            }
        }
    }
    legend(&side, &entries)?;
    root.present()
}
