//! The TTFT–throughput trade-off of one profile: a point per candidate, the SLO lines, the
//! Pareto front (ringed when one candidate is best on both axes) and the primary metric's 95 %
//! interval as a bar where it is an axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;
use sloscope_core::measure::Metric;
use sloscope_core::view::ChartsView;

use crate::{
    axes, empty, frame, label_offset, legend, legend_room, shown, tick, upper, Drawn, Entry, Frame,
    Plane, Rect, Swatch, FONT, SLO,
};

// Axes, SLO lines, Pareto front, points and labels of one chart: plotters' builder style
// makes this one long function (past 80 lines); each block is one layer of the drawing.
/// TTFT p95 against output throughput per candidate, with the SLO lines and the Pareto front.
pub fn tradeoff<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    cv: &ChartsView,
) -> Drawn<DB> {
    let (ttft, tps) = (Metric::TTFT_P95, Metric::THROUGHPUT);
    let pts: Vec<(String, f64, f64)> = p
        .candidates
        .iter()
        .filter_map(|c| Some((shown(&c.name), c.metric(tps)?, c.metric(ttft)?)))
        .collect();
    let title = format!("{}: TTFT p95 vs output throughput", p.profile);
    if pts.is_empty() {
        return empty(root, &title);
    }
    let slo_y = cv.tradeoff_ttft.as_ref().map(|s| s.limit);
    let slo_x = cv.tradeoff_throughput.as_ref().map(|s| s.limit);
    // Room for the primary metric's interval bars on its axis.
    let primary = p.primary_metric.as_deref().and_then(Metric::parse);
    let highs = |m: Metric| {
        p.candidates
            .iter()
            .filter(move |_| primary == Some(m))
            .filter_map(|c| c.primary_interval.as_ref().and_then(|i| i.high))
    };
    let xmax = upper(pts.iter().map(|p| p.1).chain(slo_x).chain(highs(tps)));
    let ymax = upper(pts.iter().map(|p| p.2).chain(slo_y).chain(highs(ttft)));
    // The candidates drawn (a legend entry hides one); the axes stay those of all of them.
    let shown_pts: Vec<&(String, f64, f64)> =
        pts.iter().filter(|p| crate::marks::visible(&p.0)).collect();
    // Pareto front: no other candidate drawn has both more throughput and a lower TTFT.
    let mut front: Vec<(f64, f64)> = shown_pts
        .iter()
        .filter(|a| {
            !shown_pts
                .iter()
                .any(|b| b.1 >= a.1 && b.2 <= a.2 && (b.1 > a.1 || b.2 < a.2))
        })
        .map(|a| (a.1, a.2))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let entries = entries(p, &pts, slo_y, slo_x, front.len());
    // The legend has its own room: it never covers a point, a label or the front.
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Roomy)?.build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    axes(&mut chart, "output throughput (tokens/s)", "TTFT p95 (ms)")?;
    if let Some(y) = slo_y {
        chart.draw_series(LineSeries::new([(0.0, y), (xmax, y)], SLO.stroke_width(2)))?;
    }
    if let Some(x) = slo_x {
        chart.draw_series(LineSeries::new([(x, 0.0), (x, ymax)], SLO.stroke_width(2)))?;
    }
    draw_front(&mut chart, &front)?;
    draw_intervals(&mut chart, p)?;
    let markers: Vec<(i32, i32)> = pts
        .iter()
        .map(|(_, x, y)| chart.backend_coord(&(*x, *y)))
        .collect();
    let mut placed: Vec<Rect> = Vec::new();
    let looks = crate::looks(&pts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>());
    for (i, (name, x, y)) in pts.iter().enumerate() {
        if crate::marks::series(name) == Some(true) {
            continue;
        }
        let color = looks[i].1;
        chart.draw_series(std::iter::once(Circle::new((*x, *y), 6, color.filled())))?;
        // The name beside its marker, on the first side where it covers no marker and no
        // other label.
        let offset = label_offset(markers[i], name, &markers, &mut placed);
        chart.draw_series(std::iter::once(
            EmptyElement::at((*x, *y)) + Text::new(name.clone(), offset, (FONT, 13)),
        ))?;
    }
    for c in &p.candidates {
        if crate::marks::series(&shown(&c.name)) == Some(true) {
            continue;
        }
        if let (Some(x), Some(y)) = (c.metric(tps), c.metric(ttft)) {
            let iv = c.primary_interval.as_ref().and_then(|i| i.ends()).map_or(
                String::new(),
                |(lo, hi)| {
                    format!(
                        "; {} 95 % interval {}–{}",
                        primary.map_or(String::new(), |m| m.name()),
                        tick(&lo),
                        tick(&hi)
                    )
                },
            );
            let text = format!(
                "{}: TTFT p95 {} ms, output throughput {} tokens/s{iv}",
                shown(&c.name),
                tick(&y),
                tick(&x)
            );
            crate::marks::add(&chart, &(x, y), text);
        }
    }
    legend(&side, &entries)?;
    root.present()
}

/// The legend: the SLO lines, each candidate's dot, the front (dashed, or ringed when it is one
/// point) and the primary metric's interval when it is drawn.
fn entries(
    p: &ProfileReport,
    pts: &[(String, f64, f64)],
    slo_y: Option<f64>,
    slo_x: Option<f64>,
    front: usize,
) -> Vec<Entry> {
    let front_color = RGBColor(51, 51, 51);
    let mut out: Vec<Entry> = Vec::new();
    if let Some(y) = slo_y {
        out.push((format!("SLO ttft_p95_ms ≤ {}", tick(&y)), Swatch::Line(SLO)));
    }
    if let Some(x) = slo_x {
        out.push((
            format!("SLO throughput_tps ≥ {}", tick(&x)),
            Swatch::Line(SLO),
        ));
    }
    let looks = crate::looks(&pts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>());
    for ((name, _, _), &(_, c)) in pts.iter().zip(&looks) {
        out.push((name.clone(), Swatch::Dot(c)));
    }
    out.push(match front {
        1 => (
            "Pareto front: one point (ringed)".into(),
            Swatch::Ring(front_color),
        ),
        _ => ("Pareto front (dashed)".into(), Swatch::Dashed(front_color)),
    });
    if interval_axis(p).is_some() && p.candidates.iter().any(|c| c.primary_interval.is_some()) {
        out.push((
            "95 % interval (primary)".into(),
            Swatch::Bar(RGBColor(115, 115, 115)),
        ));
    }
    out
}

/// Whether the primary metric is the vertical axis (TTFT p95) or the horizontal one
/// (throughput); `None` when it is neither.
fn interval_axis(p: &ProfileReport) -> Option<bool> {
    let primary = p.primary_metric.as_deref().and_then(Metric::parse);
    match primary {
        Some(m) if m == Metric::TTFT_P95 => Some(true),
        Some(m) if m == Metric::THROUGHPUT => Some(false),
        _ => None,
    }
}

/// The Pareto front dashed; a front of one candidate (best on both axes) ringed, so it is
/// drawn either way.
fn draw_front<'a, DB: DrawingBackend + 'a>(
    chart: &mut Plane<'a, DB>,
    front: &[(f64, f64)],
) -> Drawn<DB> {
    let style = BLACK.mix(0.8).stroke_width(2);
    if let [one] = front {
        chart.draw_series(std::iter::once(Circle::new(*one, 11, style)))?;
        return Ok(());
    }
    chart.draw_series(DashedLineSeries::new(front.to_vec(), 6, 4, style))?;
    Ok(())
}

/// The primary metric's 95 % interval as a bar through each point, when the primary metric is
/// one of the chart's axes (TTFT p95 up, output throughput across): overlapping bars are
/// candidates that cannot be told apart.
fn draw_intervals<DB: DrawingBackend>(chart: &mut Plane<'_, DB>, p: &ProfileReport) -> Drawn<DB> {
    let (ttft, tps) = (Metric::TTFT_P95, Metric::THROUGHPUT);
    let Some(vertical) = interval_axis(p) else {
        return Ok(());
    };
    let style = BLACK.mix(0.55).stroke_width(2);
    let bars: Vec<[(f64, f64); 2]> = p
        .candidates
        .iter()
        .filter(|c| crate::marks::series(&shown(&c.name)) != Some(true))
        .filter_map(|c| {
            let (x, y, iv) = (
                c.metric(tps)?,
                c.metric(ttft)?,
                c.primary_interval.as_ref()?,
            );
            // A bar only where the data give both ends: a half-open interval drawn to the
            // chart's edge would look like a measured one.
            let (lo, hi) = iv.ends()?;
            Some(match vertical {
                true => [(x, lo), (x, hi)],
                false => [(lo, y), (hi, y)],
            })
        })
        .collect();
    if bars.is_empty() {
        return Ok(());
    }
    chart.draw_series(
        bars.into_iter()
            .map(|b| PathElement::new(b.to_vec(), style)),
    )?;
    Ok(())
}
