//! The quantized artifact against its float baseline: one ratio bar per metric.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;

use plotters::style::text_anchor::{HPos, Pos, VPos};
use sloscope_core::measure::Metric;

use crate::{empty, frame, tick, Drawn, Frame, FONT, PALETTE};

/// The quantized / float ratios to draw (metric, ratio), or why there are none (the page says
/// it in words instead of drawing an empty chart).
pub fn baseline_bars(p: &ProfileReport) -> Result<Vec<(String, f64)>, &'static str> {
    let Some(b) = &p.baseline else {
        return Err("no float baseline run");
    };
    let bars: Vec<(String, f64)> = b
        .rows
        .iter()
        .filter_map(|r| Some((r.metric.name(), r.ratio?)))
        .filter(|(_, r)| r.is_finite() && *r > 0.0)
        .collect();
    match (bars.is_empty(), &b.compared_with) {
        (false, _) => Ok(bars),
        (true, None) => {
            Err("no candidate was chosen, so there is nothing to compare with the float baseline")
        }
        (true, Some(_)) => Err("no metric measured on both sides"),
    }
}

/// Quantized / float ratio for each compared metric: one horizontal bar per metric from the
/// 1.0 line (same as float) on a log axis, so ×2 and ×0.5 are as long; each bar is labelled with
/// its metric, the ratio and whether that is better or worse in the metric's direction.
pub fn baseline_ratios<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
) -> Drawn<DB> {
    let title = format!(
        "{}: quantized / float (log scale; 1 = same as float)",
        p.profile
    );
    let bars = match baseline_bars(p) {
        Ok(bars) => bars,
        Err(why) => return empty(root, &format!("{title}: {why}")),
    };
    let far = bars
        .iter()
        .map(|(_, r)| r.ln().abs())
        .fold(0.0f64, f64::max)
        .max(2f64.ln())
        * 1.25;
    let (lo, hi) = ((-far).exp(), far.exp());
    let n = bars.len();
    let mut chart = frame(root, &title, Frame::Bars)?
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..n as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("quantized / float")
        .x_label_formatter(&|x| format!("×{}", tick(x)))
        .draw()?;
    for (i, (metric, r)) in bars.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        let better = Metric::parse(metric).map(|m| match m.direction() {
            sloscope_core::measure::Direction::LowerIsBetter => *r < 1.0,
            sloscope_core::measure::Direction::HigherIsBetter => *r > 1.0,
        });
        let (color, word) = match better {
            _ if (*r - 1.0).abs() < 1e-9 => (BLACK.mix(0.4).to_rgba(), "same"),
            Some(true) => (PALETTE[2].to_rgba(), "better"),
            Some(false) => (PALETTE[5].to_rgba(), "worse"),
            None => (BLACK.mix(0.4).to_rgba(), ""),
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(1.0f64.min(*r), y + 0.2), (1.0f64.max(*r), y + 0.8)],
            color.filled(),
        )))?;
        // The label sits on the side of 1.0 away from the bar.
        let (anchor, dx) = if *r >= 1.0 { (lo, 4) } else { (hi, -4) };
        let text = format!("{metric} ×{} {word}", tick(r));
        let style = TextStyle::from((FONT, 13).into_font()).pos(if dx > 0 {
            Pos::new(HPos::Left, VPos::Center)
        } else {
            Pos::new(HPos::Right, VPos::Center)
        });
        crate::marks::add(&chart, &(*r, y + 0.5), format!("{text}: quantized / float"));
        chart.draw_series(std::iter::once(
            EmptyElement::at((anchor, y + 0.5)) + Text::new(text, (dx, 0), style),
        ))?;
    }
    chart.draw_series(LineSeries::new(
        [(1.0, 0.0), (1.0, n as f64)],
        BLACK.stroke_width(2),
    ))?;
    root.present()
}
