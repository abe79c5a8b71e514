//! A capacity search's trials against load: the binding SLO metric (limit drawn) and the output
//! throughput, one line per candidate, each knee marked.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;
use sloscope_core::measure::Metric;

use crate::{
    empty, frame, label_offset_within, legend, legend_room, marker, shown, tick, upper, Drawn,
    Frame, Rect, Swatch, FONT, SLO,
};

/// What a capacity chart puts on its y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityY {
    /// The SLO metric that broke at the best candidate's first failing load (or the first
    /// SLO), with its limit drawn.
    Slo,
    /// Output tokens per second.
    Throughput,
}

/// One candidate's trials: (load, value, passed, the SLO it failed on).
type Trials<'a> = Vec<(f64, f64, bool, Option<Metric>)>;
/// Per candidate: its name, its knee (last passing load) and its trials.
type Series<'a> = Vec<(String, Option<f64>, Trials<'a>)>;
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Per candidate, a capacity search's trials against load (a sweep of one workload, so each
/// candidate's trials are joined), passing trials filled, failing ones crossed, the SLO limit
/// drawn (for `CapacityY::Slo`) and each candidate's knee (last passing load) marked.
pub fn capacity<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &sloscope_core::view::ChartsView,
    y: CapacityY,
) -> Drawn<DB> {
    let Some(cap) = p.capacity.as_ref() else {
        return empty(root, &format!("{}: no capacity search", p.profile));
    };
    let (y_name, limit) = match (y, &cv.capacity_slo) {
        (CapacityY::Throughput, _) => (Metric::THROUGHPUT, None),
        (CapacityY::Slo, Some(l)) => (l.metric, Some(l)),
        (CapacityY::Slo, None) => {
            return empty(
                root,
                &format!("{}: no SLO metric measured in the trials", p.profile),
            )
        }
    };
    let series = series(cap, y, y_name);
    let unit = cap.over.unit();
    let title = match y {
        CapacityY::Slo => format!("{}: {y_name} against load ({unit})", p.profile),
        CapacityY::Throughput => format!("{}: output throughput against load ({unit})", p.profile),
    };
    if series.iter().all(|s| s.2.is_empty()) {
        return empty(root, &title);
    }
    let xmax = upper(series.iter().flat_map(|s| s.2.iter().map(|p| p.0)));
    let ymax = upper(
        series
            .iter()
            .flat_map(|s| s.2.iter().map(|p| p.1))
            .chain(limit.map(|l| l.limit)),
    );
    // The legend has its own room: it never covers a knee label or a trial.
    let mut entries: Vec<(String, Swatch)> = limit
        .map(|l| {
            let op = if l.higher_is_better { "≥" } else { "≤" };
            let name = format!("SLO {} {op} {}", l.metric, tick(&l.limit));
            (name, Swatch::Dashed(SLO))
        })
        .into_iter()
        .collect();
    let looks = crate::looks(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>());
    entries.extend(
        series
            .iter()
            .zip(&looks)
            .map(|(s, &(m, c))| (s.0.clone(), Swatch::Marker(m, c))),
    );
    entries.push(("failing trial (ringed)".into(), Swatch::Ring(SLO)));
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    let y_desc = y_words(y, y_name);
    chart
        .configure_mesh()
        .x_desc(format!("{} ({unit})", cap.over.as_str()))
        .y_desc(y_desc)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    if let Some(l) = limit {
        slo_limit(&mut chart, l, xmax)?;
    }
    candidates(&mut chart, &series, y, y_name)?;
    legend(&side, &entries)?;
    root.present()
}

/// Each candidate's trials as the chart draws them, in load order.
fn series<'a>(
    cap: &'a sloscope_core::analysis::CapacityReport,
    y: CapacityY,
    y_name: Metric,
) -> Series<'a> {
    let value = |t: &sloscope_core::analysis::TrialReport| match y {
        CapacityY::Throughput => t.throughput_tps,
        CapacityY::Slo => t
            .checks
            .iter()
            .find(|k| k.metric == y_name)
            .and_then(|k| k.value),
    };
    cap.candidates
        .iter()
        .map(|c| {
            let mut pts: Trials<'_> = c
                .trials
                .iter()
                .filter_map(|t| {
                    let failed_on = (!t.pass).then_some(t.binding).flatten();
                    Some((t.load, value(t)?, t.pass, failed_on))
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (shown(&c.name), c.last_pass, pts)
        })
        .collect()
}

fn slo_limit<DB: DrawingBackend + 'static>(
    chart: &mut Chart<'_, DB>,
    line: &sloscope_core::view::SloLine,
    xmax: f64,
) -> Drawn<DB> {
    let l = line.limit;
    chart.draw_series(DashedLineSeries::new(
        [(0.0, l), (xmax, l)],
        8,
        4,
        SLO.stroke_width(2),
    ))?;
    Ok(())
}

/// Each candidate's line, markers, failing rings (with the SLO a trial failed on, when it is
/// not the one drawn) and knee.
fn candidates<DB: DrawingBackend + 'static>(
    chart: &mut Chart<'_, DB>,
    series: &Series<'_>,
    y: CapacityY,
    y_name: Metric,
) -> Drawn<DB> {
    let markers: Vec<(i32, i32)> = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| chart.backend_coord(&(p.0, p.1))))
        .collect();
    let mut placed: Vec<Rect> = Vec::new();
    let (px, py) = chart.plotting_area().get_pixel_range();
    let bounds = Some((px.start, py.start, px.end, py.end));
    let looks = crate::looks(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>());
    for (i, (name, knee, pts)) in series.iter().enumerate() {
        if !crate::marks::visible(name) {
            continue;
        }
        let (shape, color) = looks[i];
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|p| marker(shape, (p.0, p.1), color)))?;
        for p in pts.iter() {
            let outcome = match (p.2, p.3) {
                (true, _) => "meets every SLO".to_string(),
                (false, Some(m)) => format!("fails {m}"),
                (false, None) => "fails".to_string(),
            };
            let text = format!(
                "{name}: load {}, {} {}: {outcome}",
                tick(&p.0),
                y_words(y, y_name),
                tick(&p.1)
            );
            crate::marks::add(chart, &(p.0, p.1), text);
        }
        // A failing trial: a red ring around its marker (shape keeps the series, the ring the
        // outcome, so neither rests on colour alone).
        chart.draw_series(
            pts.iter()
                .filter(|p| !p.2)
                .map(|p| Circle::new((p.0, p.1), 9, SLO.stroke_width(2))),
        )?;
        // A trial that failed on another SLO than the one drawn says which, so its ring
        // does not read as a miss of this metric.
        for p in pts.iter().filter(|p| !p.2) {
            let Some(m) = p.3.filter(|m| y == CapacityY::Throughput || *m != y_name) else {
                continue;
            };
            let label = format!("fails {m}");
            let at_px = chart.backend_coord(&(p.0, p.1));
            let offset = label_offset_within(at_px, &label, &markers, &mut placed, bounds);
            chart.draw_series(std::iter::once(
                EmptyElement::at((p.0, p.1)) + Text::new(label, offset, (FONT, 12)),
            ))?;
        }
        let Some(k) = knee else { continue };
        let Some(at) = pts.iter().find(|p| p.0 == *k) else {
            continue;
        };
        chart.draw_series(DashedLineSeries::new(
            [(*k, 0.0), (*k, at.1)],
            4,
            4,
            color.stroke_width(1),
        ))?;
        let label = format!("{name} knee {}", tick(k));
        let at_px = chart.backend_coord(&(at.0, at.1));
        let offset = label_offset_within(at_px, &label, &markers, &mut placed, bounds);
        chart.draw_series(std::iter::once(
            EmptyElement::at((at.0, at.1)) + Text::new(label, offset, (FONT, 13)),
        ))?;
    }
    Ok(())
}

/// What the vertical axis shows.
fn y_words(y: CapacityY, y_name: Metric) -> String {
    match y {
        CapacityY::Slo => y_name.name(),
        CapacityY::Throughput => "output throughput (tokens/s)".to_string(),
    }
}
