//! Latency CDFs of every candidate and the float baseline.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::ProfileReport;

use crate::{axes, empty, frame, legend, legend_room, shown, upper, Drawn, Frame, Swatch};

/// Which latency a CDF shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Time to first token.
    Ttft,
    /// Time per output token.
    Tpot,
    /// End-to-end.
    E2e,
}

impl Quantity {
    /// Label.
    pub fn label(self) -> &'static str {
        match self {
            Quantity::Ttft => "TTFT",
            Quantity::Tpot => "TPOT",
            Quantity::E2e => "end-to-end",
        }
    }
}

/// Latency CDF of every candidate (and the float baseline) in one profile.
pub fn cdf<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    q: Quantity,
) -> Drawn<DB> {
    let pick = |c: &sloscope_core::analysis::Curves| match q {
        Quantity::Ttft => c.ttft_ms.clone(),
        Quantity::Tpot => c.tpot_ms.clone(),
        Quantity::E2e => c.e2e_ms.clone(),
    };
    // Each curve named with how many requests it is drawn from.
    let mut lines: Vec<(String, Vec<f64>)> = p
        .candidates
        .iter()
        .filter_map(|c| {
            let s = c.summary.as_ref()?;
            let name = format!("{} (n={})", shown(&c.name), s.requests_ok);
            Some((name, pick(s.curves.as_ref()?)))
        })
        .filter(|l| !l.1.is_empty())
        .collect();
    if let Some(b) = &p.baseline {
        if let Some(c) = &b.summary.curves {
            lines.push((
                format!(
                    "{} (n={}){}",
                    b.artifact_id,
                    b.summary.requests_ok,
                    crate::BASELINE_SUFFIX
                ),
                pick(c),
            ));
        }
    }
    let title = format!("{}: {} CDF", p.profile, q.label());
    if lines.is_empty() {
        return empty(root, &title);
    }
    let marks = slo_marks(p, q);
    let xmax = upper(
        lines
            .iter()
            .flat_map(|l| l.1.iter().copied())
            .chain(marks.iter().map(|m| m.1)),
    );
    // The legend has its own room: it never covers a curve (the float baseline's is often
    // where a legend inside the plot would sit).
    let looks = crate::looks(&lines.iter().map(|l| l.0.as_str()).collect::<Vec<_>>());
    let mut entries: Vec<(String, Swatch)> = lines
        .iter()
        .zip(&looks)
        .map(|(l, &(_, c))| (l.0.clone(), Swatch::Line(c)))
        .collect();
    entries.extend(marks.iter().map(|(name, limit, level)| {
        (
            format!("SLO {name} ≤ {} (at {level})", crate::tick(limit)),
            Swatch::Dashed(crate::SLO),
        )
    }));
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Small)?.build_cartesian_2d(0f64..xmax, 0f64..1.0f64)?;
    axes(
        &mut chart,
        &format!("{} (ms)", q.label()),
        "share of requests",
    )?;
    for (i, (name, vals)) in lines.iter().enumerate() {
        if !crate::marks::visible(name) {
            continue;
        }
        let color = looks[i].1;
        let pts: Vec<(f64, f64)> = vals
            .iter()
            .enumerate()
            .map(|(k, v)| (*v, k as f64 / 100.0))
            .collect();
        chart.draw_series(LineSeries::new(pts, color.stroke_width(2)))?;
        for k in [50, 90, 95, 99] {
            if let Some(v) = vals.get(k) {
                let text = format!("{}: p{k} {} {} ms", lines[i].0, q.label(), crate::tick(v));
                crate::marks::add(&chart, &(*v, k as f64 / 100.0), text);
            }
        }
    }
    for (_, limit, level) in &marks {
        let style = crate::SLO.stroke_width(2);
        chart.draw_series(DashedLineSeries::new(
            [(*limit, 0.0), (*limit, 1.0)],
            6,
            4,
            style,
        ))?;
        chart.draw_series(DashedLineSeries::new(
            [(0.0, *level), (*limit, *level)],
            6,
            4,
            style,
        ))?;
    }
    legend(&side, &entries)?;
    root.present()
}

/// The profile's percentile SLOs on this latency (`ttft_p95_ms ≤ 250`): name, limit and the
/// share of requests the curve must reach left of the limit.
fn slo_marks(p: &ProfileReport, q: Quantity) -> Vec<(String, f64, f64)> {
    use sloscope_core::measure::{Direction, Metric, Quantity as Q, Stat};
    let want = match q {
        Quantity::Ttft => Q::Ttft,
        Quantity::Tpot => Q::Tpot,
        Quantity::E2e => Q::E2e,
    };
    p.slo
        .iter()
        .filter(|s| s.direction == Direction::LowerIsBetter && s.limit.is_finite() && s.limit > 0.0)
        .filter_map(|s| {
            let Metric::Latency(quantity, stat) = s.metric else {
                return None;
            };
            let level = match stat {
                Stat::P50 => 0.5,
                Stat::P90 => 0.9,
                Stat::P95 => 0.95,
                Stat::P99 => 0.99,
                _ => return None,
            };
            (quantity == want).then(|| (s.metric.name(), s.limit, level))
        })
        .collect()
}
