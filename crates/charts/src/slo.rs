//! What decides a profile: every SLO of every candidate as a share of its limit, with the
//! one-sided 95 % bounds that decide it — met when the whole bar stays left of the limit line,
//! missed when the whole bar is right of it, undecided when the line crosses it (or a bound is
//! missing, drawn as an open end). A profile that fails on TPOT or on queue wait shows it here,
//! whatever the TTFT-versus-throughput chart looks like.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sloscope_core::analysis::ProfileReport;
use sloscope_core::analysis::SloOutcome;
use sloscope_core::measure::Direction;

use crate::{empty, frame, shown, tick, Drawn, Frame, FONT, PALETTE, SLO};

/// One SLO of one candidate, as a share of its limit (`1` = at the limit, below 1 = on its good
/// side, whichever the limit's direction).
#[derive(Debug, Clone, PartialEq)]
pub struct SloRow {
    /// The candidate's name, inert.
    pub candidate: String,
    /// The SLO's metric.
    pub metric: String,
    /// The measured value's share of the limit.
    pub at: f64,
    /// The bound on the good side's share (`None`: the data give none).
    pub low: Option<f64>,
    /// The bound on the bad side's share (`None`: the data give none).
    pub high: Option<f64>,
    /// Whether the figure has sampling bounds at all (a maximum or a peak is decided as
    /// observed).
    pub sampled: bool,
    /// Met, missed or undecided.
    pub outcome: SloOutcome,
}

/// The rows to draw, candidates in the report's order; an SLO with a limit of 0 (no failure
/// allowed: a rule, not a share) or with no value is left out and said in the caption.
pub fn slo_rows(p: &ProfileReport) -> Vec<SloRow> {
    let mut out = Vec::new();
    for c in &p.candidates {
        for k in &c.slo_checks {
            let Some(v) = k.value.filter(|v| v.is_finite()) else {
                continue;
            };
            if k.limit == 0.0 || !k.limit.is_finite() {
                continue;
            }
            let lower = k.metric.direction() == Direction::LowerIsBetter;
            let share = |x: f64| {
                let s = if lower { x / k.limit } else { k.limit / x };
                (s.is_finite() && s >= 0.0).then_some(s)
            };
            let Some(at) = share(v) else { continue };
            let (good, bad) = if lower {
                (k.lower_bound, k.upper_bound)
            } else {
                (k.upper_bound, k.lower_bound)
            };
            out.push(SloRow {
                candidate: shown(&c.name),
                metric: k.metric.name(),
                at,
                low: good.and_then(share),
                high: bad.and_then(share),
                sampled: k.lower_bound.is_some() || k.upper_bound.is_some(),
                outcome: k.outcome,
            });
        }
    }
    out
}

fn outcome_style(o: SloOutcome) -> (RGBColor, &'static str) {
    match o {
        SloOutcome::Pass => (PALETTE[2], "met"),
        SloOutcome::Fail => (PALETTE[5], "missed"),
        SloOutcome::NotEnoughData => (RGBColor(110, 110, 110), "undecided"),
    }
}

/// Pixels each row takes; the page sizes the chart by it.
pub const SLO_ROW_PX: u32 = 34;

/// Every SLO of every candidate on one axis, its share of the limit: a dot for the value, a
/// bar from the good-side bound to the bad-side bound (an open end where there is none), the
/// limit as a dashed line at 1, each row labelled with candidate, metric and outcome.
pub fn slo_shares<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
) -> Drawn<DB> {
    let title = format!(
        "{}: each SLO as a share of its limit (1 = the limit; met when the whole 95% bar is left of it)",
        p.profile
    );
    let rows = slo_rows(p);
    if rows.is_empty() {
        return empty(
            root,
            &format!("{title}: no SLO with a measured value and a limit other than 0"),
        );
    }
    let top = rows
        .iter()
        .flat_map(|r| [Some(r.at), r.low, r.high])
        .flatten()
        .fold(1.25f64, f64::max)
        .min(4.0)
        * 1.08;
    let n = rows.len();
    let mut chart =
        frame(root, &title, Frame::Bars)?.build_cartesian_2d(0f64..top, 0f64..n as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("share of the SLO limit (past 4: drawn at the edge)")
        .x_label_formatter(&|x| format!("{}×", tick(x)))
        .draw()?;
    for (i, r) in rows.iter().enumerate() {
        draw_row(&mut chart, (n - 1 - i) as f64, r, top)?;
    }
    chart.draw_series(DashedLineSeries::new(
        [(1.0, 0.0), (1.0, n as f64)],
        6,
        4,
        SLO.stroke_width(2),
    ))?;
    root.present()
}

type Bars<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_row<DB: DrawingBackend>(
    chart: &mut Bars<'_, DB>,
    y: f64,
    r: &SloRow,
    top: f64,
) -> Drawn<DB> {
    let (color, word) = outcome_style(r.outcome);
    let edge = |x: f64| x.min(top);
    let mid = y + 0.3;
    if r.sampled {
        let from = r.low.map_or(0.0, edge);
        let to = r.high.map_or(top, edge);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, mid - 0.09), (to, mid + 0.09)],
            color.mix(0.55).filled(),
        )))?;
        if r.high.is_none() {
            // An open end: an arrowhead at the edge (the caption says what it means).
            let (dx, dy) = (top * 0.025, 0.16);
            chart.draw_series(std::iter::once(Polygon::new(
                vec![(top - dx, mid - dy), (top, mid), (top - dx, mid + dy)],
                color.filled(),
            )))?;
        }
    }
    chart.draw_series(std::iter::once(Circle::new(
        (edge(r.at), mid),
        5,
        color.filled(),
    )))?;
    // An open end is the arrowhead alone: the label must fit a phone's width.
    let basis = if r.sampled { "" } else { ", as observed" };
    let label = format!(
        "{} · {} {}× · {word}{basis}",
        r.candidate,
        r.metric,
        tick(&r.at)
    );
    let iv = match (r.sampled, r.low, r.high) {
        (true, Some(lo), Some(hi)) => format!("; 95 % interval {}–{}×", tick(&lo), tick(&hi)),
        (true, Some(lo), None) => format!("; 95 % interval from {}×, no upper bound", tick(&lo)),
        _ => String::new(),
    };
    crate::marks::add(chart, &(edge(r.at), mid), format!("{label}{iv}"));
    let style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Bottom));
    chart.draw_series(std::iter::once(
        EmptyElement::at((0.0, y + 1.0)) + Text::new(label, (4, 15), style),
    ))?;
    Ok(())
}
