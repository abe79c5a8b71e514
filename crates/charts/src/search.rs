//! A configuration search's path: each trial in the order it ran, its primary metric with the
//! 95 % interval of the configuration's evidence after it, the pick in its own colour, confirmation
//! launches hollow, infeasible launches crossed on the axis, the SLO limit dashed when the
//! primary metric has one.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;
use sloscope_core::search::{measured, Purpose, TrialRow};

use crate::{empty, frame, legend, legend_room, shown, tick, upper, Drawn, Frame, Swatch, SLO};

const MEASURED: RGBColor = RGBColor(31, 119, 180);
const PICK: RGBColor = RGBColor(214, 120, 0);
const INFEASIBLE: RGBColor = RGBColor(110, 110, 110);

/// The search's trials in order against the primary metric.
pub fn search_path<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &sloscope_core::view::ChartsView,
) -> Drawn<DB> {
    let Some(s) = p.search.as_ref() else {
        return empty(root, &format!("{}: no configuration search", p.profile));
    };
    let title = format!("{}: the configuration search's path", p.profile);
    if s.trials.is_empty() {
        return empty(root, &title);
    }
    let chosen = s.result.chosen_name.as_deref();
    let limit = cv.search_slo.as_ref().map(|l| l.limit);
    let ymax = upper(
        s.trials
            .iter()
            .filter_map(|t| t.primary.map(|e| e.hi.unwrap_or(e.value)))
            .chain(limit),
    );
    let xmax = s.trials.len() as f64 + 1.0;
    let mut entries = vec![
        (
            "trial, 95 % interval where bounded".to_string(),
            Swatch::Dot(MEASURED),
        ),
        (
            "confirmation (fresh launch)".to_string(),
            Swatch::Ring(MEASURED),
        ),
        (
            "infeasible launch".to_string(),
            Swatch::Marker(2, INFEASIBLE),
        ),
    ];
    pick_and_slo(&mut entries, chosen, cv);
    let (plot, side) = legend_room(root, &entries);
    let mut chart =
        frame(&plot, &title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("trial, in the order the search ran it")
        .y_desc(s.primary.name())
        .x_label_formatter(&|x| tick(x))
        .y_label_formatter(&tick)
        .draw()?;
    if let Some(l) = limit {
        chart.draw_series(DashedLineSeries::new(
            [(0.0, l), (xmax, l)],
            8,
            4,
            SLO.stroke_width(2),
        ))?;
    }
    for t in &s.trials {
        trial(&mut chart, t, chosen == Some(t.name.as_str()), ymax)?;
    }
    legend(&side, &entries)?;
    plot.present()
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn trial<DB: DrawingBackend + 'static>(
    chart: &mut Chart<'_, DB>,
    t: &TrialRow,
    picked: bool,
    ymax: f64,
) -> Drawn<DB> {
    let x = f64::from(t.index) + 1.0;
    let Some(e) = t.primary else {
        let at = (x, ymax * 0.02);
        chart.draw_series(std::iter::once(Cross::new(
            at,
            6,
            INFEASIBLE.stroke_width(2),
        )))?;
        return Ok(());
    };
    let color = if picked { PICK } else { MEASURED };
    // Only the ends the data give: a side with no bound gets no whisker (never one to the edge,
    // which would read as a measured spread).
    let (lo, hi) = (e.lo.unwrap_or(e.value), e.hi.unwrap_or(e.value));
    if hi > lo {
        chart.draw_series(std::iter::once(PathElement::new(
            [(x, lo), (x, hi.min(ymax))],
            color.stroke_width(2),
        )))?;
    }
    let style = if t.purpose == Purpose::Confirm {
        color.stroke_width(2)
    } else {
        color.filled()
    };
    chart.draw_series(std::iter::once(Circle::new((x, e.value), 5, style)))?;
    Ok(())
}

/// The explored space: each configuration measured, its primary metric (pooled, with its 95 %
/// interval) against its highest peak memory; the memory trade-off joined; the pick in its own
/// colour; the SLO limit dashed.
pub fn search_space<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &sloscope_core::view::ChartsView,
) -> Drawn<DB> {
    let title = format!("{}: the explored space against memory", p.profile);
    let Some(s) = p.search.as_ref().filter(|s| !s.front.is_empty()) else {
        return empty(root, &title);
    };
    let points = measured(&s.trials);
    let chosen = s.result.chosen_name.as_deref();
    let limit = cv.search_slo.as_ref().map(|l| l.limit);
    let ymax = upper(
        points
            .iter()
            .map(|p| p.primary.hi.unwrap_or(p.primary.value))
            .chain(limit),
    );
    // The memory axis spans what was measured (with a margin), not from zero: configurations
    // a few per cent apart would otherwise sit on one spot.
    let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.peak_memory_mb), hi.max(p.peak_memory_mb))
    });
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.02).max(1e-9);
    let (xmin, xmax) = ((lo - pad).max(0.0), hi + pad);
    let mut entries = vec![
        (
            "configuration, 95 % interval where bounded".to_string(),
            Swatch::Dot(MEASURED),
        ),
        (
            "no other beats it on both".to_string(),
            Swatch::Line(MEASURED),
        ),
    ];
    pick_and_slo(&mut entries, chosen, cv);
    let (plot, side) = legend_room(root, &entries);
    let mut chart =
        frame(&plot, &title, Frame::Roomy)?.build_cartesian_2d(xmin..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("peak memory (MB)")
        .y_desc(s.primary.name())
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    if let Some(l) = limit {
        chart.draw_series(DashedLineSeries::new(
            [(xmin, l), (xmax, l)],
            8,
            4,
            SLO.stroke_width(2),
        ))?;
    }
    chart.draw_series(LineSeries::new(
        s.front.iter().map(|f| (f.peak_memory_mb, f.primary.value)),
        MEASURED.stroke_width(2),
    ))?;
    for f in &points {
        let color = if chosen == Some(f.name.as_str()) {
            PICK
        } else {
            MEASURED
        };
        let x = f.peak_memory_mb;
        let (lo, hi) = (
            f.primary.lo.unwrap_or(f.primary.value),
            f.primary.hi.unwrap_or(f.primary.value),
        );
        if hi > lo {
            chart.draw_series(std::iter::once(PathElement::new(
                [(x, lo), (x, hi.min(ymax))],
                color.stroke_width(2),
            )))?;
        }
        chart.draw_series(std::iter::once(Circle::new(
            (x, f.primary.value),
            5,
            color.filled(),
        )))?;
    }
    legend(&side, &entries)?;
    plot.present()
}

/// The legend's entries for the pick and the SLO limit, where there are.
fn pick_and_slo(
    entries: &mut Vec<(String, Swatch)>,
    chosen: Option<&str>,
    cv: &sloscope_core::view::ChartsView,
) {
    if let Some(c) = chosen {
        entries.push((format!("pick: {}", shown(c)), Swatch::Dot(PICK)));
    }
    if let Some(line) = &cv.search_slo {
        let op = if line.higher_is_better { "≥" } else { "≤" };
        entries.push((
            format!("SLO {} {op} {}", line.metric, tick(&line.limit)),
            Swatch::Dashed(SLO),
        ));
    }
}
