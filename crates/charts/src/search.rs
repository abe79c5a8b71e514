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
    let ys = crate::spanned(
        s.trials
            .iter()
            .filter_map(|t| t.primary)
            .flat_map(|e| [Some(e.value), e.lo, e.hi])
            .flatten()
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
        frame(&plot, &title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, ys.clone())?;
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
        trial(&mut chart, t, chosen == Some(t.name.as_str()), &ys)?;
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
    ys: &std::ops::Range<f64>,
) -> Drawn<DB> {
    let x = f64::from(t.index) + 1.0;
    let Some(e) = t.primary else {
        // At the foot of the axis: an infeasible launch measured nothing.
        let at = (x, ys.start + (ys.end - ys.start) * 0.02);
        let why = t.infeasible.as_deref().unwrap_or("no measurement");
        crate::marks::add(
            chart,
            &at,
            format!("trial {}: {}: infeasible: {why}", t.index + 1, t.name),
        );
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
            [(x, lo.max(ys.start)), (x, hi.min(ys.end))],
            color.stroke_width(2),
        )))?;
    }
    let style = if t.purpose == Purpose::Confirm {
        color.stroke_width(2)
    } else {
        color.filled()
    };
    chart.draw_series(std::iter::once(Circle::new((x, e.value), 5, style)))?;
    let text = format!(
        "trial {}: {}{}: {}{}",
        t.index + 1,
        t.name,
        if picked { " (the pick)" } else { "" },
        tick(&e.value),
        interval_words(e.lo, e.hi)
    );
    crate::marks::add(chart, &(x, e.value), text);
    Ok(())
}

/// A 95 % interval in words, where the data bound it.
fn interval_words(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!(" (95 % interval {}–{})", tick(&lo), tick(&hi)),
        (Some(lo), None) => format!(" (95 % interval from {}, no upper bound)", tick(&lo)),
        (None, Some(hi)) => format!(" (95 % interval up to {})", tick(&hi)),
        (None, None) => String::new(),
    }
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
        let text = format!(
            "{}: {} MB peak memory, {}{}",
            f.name,
            tick(&x),
            tick(&f.primary.value),
            interval_words(f.primary.lo, f.primary.hi)
        );
        crate::marks::add(&chart, &(x, f.primary.value), text);
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

/// The explored space knob by knob: one panel per knob, each configuration measured placed at
/// its value of that knob against its primary metric (pooled), the pick in its own colour,
/// infeasible launches crossed at the bottom, the SLO limit dashed.
pub fn search_knobs<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &sloscope_core::view::ChartsView,
) -> Drawn<DB> {
    let Some(s) = p.search.as_ref().filter(|s| !s.knobs.is_empty()) else {
        return empty(root, &format!("{}: no configuration search", p.profile));
    };
    let points = measured_all(&s.trials);
    let chosen = s.result.chosen_name.as_deref();
    let limit = cv.search_slo.as_ref().map(|l| l.limit);
    let ymax = upper(points.iter().map(|(_, e)| e.value).chain(limit));
    root.fill(&WHITE)?;
    crate::marks::clear();
    let panels = root.split_evenly((1, s.knobs.len()));
    for (i, (knob, panel)) in s.knobs.iter().zip(&panels).enumerate() {
        let values = knob_values(&s.trials, knob);
        let at = |t: &TrialRow| {
            let v = t.config.get(knob)?;
            values
                .iter()
                .position(|x| x == &v.to_string())
                .map(|i| i as f64)
        };
        let n = values.len() as f64;
        let mut chart = ChartBuilder::on(panel)
            .caption(knob, (crate::FONT, 13))
            .margin(6)
            .x_label_area_size(24)
            .y_label_area_size(if i == 0 { 52 } else { 36 })
            .build_cartesian_2d(-0.5..n - 0.5, 0f64..ymax)?;
        chart
            .configure_mesh()
            .y_desc(if i == 0 {
                s.primary.name()
            } else {
                String::new()
            })
            .x_labels(values.len().max(1))
            .x_label_formatter(&|x| label_at(&values, *x))
            .y_label_formatter(&tick)
            .draw()?;
        if let Some(l) = limit {
            chart.draw_series(DashedLineSeries::new(
                [(-0.5, l), (n - 0.5, l)],
                6,
                3,
                SLO.stroke_width(2),
            ))?;
        }
        for (t, e) in &points {
            let Some(x) = at(t) else { continue };
            let color = if chosen == Some(t.name.as_str()) {
                PICK
            } else {
                MEASURED
            };
            chart.draw_series(std::iter::once(Circle::new(
                (x, e.value),
                4,
                color.filled(),
            )))?;
            crate::marks::add(
                &chart,
                &(x, e.value),
                format!(
                    "{knob} {}: {}: {}",
                    label_at(&values, x),
                    t.name,
                    tick(&e.value)
                ),
            );
        }
        for t in s.trials.iter().filter(|t| t.infeasible.is_some()) {
            if let Some(x) = at(t) {
                let cross = Cross::new((x, ymax * 0.02), 5, INFEASIBLE.stroke_width(2));
                chart.draw_series(std::iter::once(cross))?;
            }
        }
    }
    root.present()
}

/// Each configuration measured, once, with its primary metric after its last trial but a
/// confirmation (memory sampled or not).
fn measured_all(trials: &[TrialRow]) -> Vec<(&TrialRow, sloscope_core::search::Estimate)> {
    let mut out: Vec<(&TrialRow, sloscope_core::search::Estimate)> = Vec::new();
    for t in trials.iter().filter(|t| t.purpose != Purpose::Confirm) {
        let Some(e) = t.primary else { continue };
        match out.iter_mut().find(|(r, _)| r.name == t.name) {
            Some(slot) => *slot = (t, e),
            None => out.push((t, e)),
        }
    }
    out
}

/// The values a knob took in the trials, in ascending order (numbers by value, then words).
fn knob_values(trials: &[TrialRow], knob: &str) -> Vec<String> {
    use sloscope_core::schema::KnobValue;
    let mut values: Vec<&KnobValue> = trials.iter().filter_map(|t| t.config.get(knob)).collect();
    let key = |v: &KnobValue| match v {
        KnobValue::Int(i) => (0, *i as f64, String::new()),
        KnobValue::Float(x) => (0, *x, String::new()),
        KnobValue::Text(t) => (1, 0.0, t.clone()),
    };
    values.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
    });
    let mut out: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    out.dedup();
    out
}

/// The label of the value at position `x` (none between positions).
fn label_at(values: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() > 0.01 || i < 0.0 {
        return String::new();
    }
    values.get(i as usize).cloned().unwrap_or_default()
}
