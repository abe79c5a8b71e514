//! The quantized artifact against its float baseline: one ratio bar per metric, with the 95 %
//! interval of the difference drawn on the ratio's axis (the difference's ends over the float
//! value: `1 + lo / float` to `1 + hi / float`), only the ends the data give.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;

use plotters::style::text_anchor::{HPos, Pos, VPos};
use sloscope_core::measure::Metric;

use crate::{empty, frame, tick, Drawn, Frame, FONT, PALETTE};

/// One bar: the metric, quantized / float, and the 95 % interval's ends on the ratio's axis
/// (each `None` where the data give none, or where it would not be above 0 on the log axis).
pub type RatioBar = (String, f64, (Option<f64>, Option<f64>));

/// The quantized / float ratios to draw, or why there are none (the page says it in words
/// instead of drawing an empty chart).
pub fn baseline_bars(p: &ProfileReport) -> Result<Vec<RatioBar>, &'static str> {
    let Some(b) = &p.baseline else {
        return Err("no float baseline run");
    };
    let bars: Vec<RatioBar> = b
        .rows
        .iter()
        .filter_map(|r| {
            let (ratio, float) = (r.ratio?, r.baseline?);
            let end = |d: Option<f64>| {
                d.map(|d| 1.0 + d / float)
                    .filter(|x| x.is_finite() && *x > 0.0)
            };
            let iv = r.difference_interval.as_ref();
            let ends = (end(iv.and_then(|i| i.low)), end(iv.and_then(|i| i.high)));
            Some((r.metric.name(), ratio, ends))
        })
        .filter(|(_, r, _)| r.is_finite() && *r > 0.0)
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
        .flat_map(|(_, r, (lo, hi))| [Some(*r), *lo, *hi])
        .flatten()
        .map(|r| r.ln().abs())
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
    for (i, (metric, r, ends)) in bars.iter().enumerate() {
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
        // The interval: a whisker through the bar's middle, only the ends the data give.
        let mid = y + 0.5;
        let (from, to) = (ends.0.unwrap_or(*r), ends.1.unwrap_or(*r));
        if to > from {
            chart.draw_series(std::iter::once(PathElement::new(
                [(from, mid), (to, mid)],
                BLACK.mix(0.75).stroke_width(2),
            )))?;
        }
        // The label sits on the side of 1.0 away from the bar.
        let (anchor, dx) = if *r >= 1.0 { (lo, 4) } else { (hi, -4) };
        let text = format!("{metric} ×{} {word}", tick(r));
        let iv = match ends {
            (Some(a), Some(b)) => format!("; 95 % ×{}–×{}", tick(a), tick(b)),
            (Some(a), None) => format!("; 95 % from ×{}, no upper end", tick(a)),
            (None, Some(b)) => format!("; 95 % up to ×{}, no lower end", tick(b)),
            (None, None) => "; no 95 % interval from these data".to_string(),
        };
        let style = TextStyle::from((FONT, 13).into_font()).pos(if dx > 0 {
            Pos::new(HPos::Left, VPos::Center)
        } else {
            Pos::new(HPos::Right, VPos::Center)
        });
        crate::marks::add(
            &chart,
            &(*r, y + 0.5),
            format!("{text}: quantized / float{iv}"),
        );
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
