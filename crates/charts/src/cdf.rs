//! Latency CDFs of every candidate and the float baseline.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analyse::report::ProfileReport;

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
    let pick = |c: &sloscope_core::analyse::summary::Curves| match q {
        Quantity::Ttft => c.ttft_ms.clone(),
        Quantity::Tpot => c.tpot_ms.clone(),
        Quantity::E2e => c.e2e_ms.clone(),
    };
    let mut lines: Vec<(String, Vec<f64>)> = p
        .candidates
        .iter()
        .filter_map(|c| Some((shown(&c.name), pick(c.summary.as_ref()?.curves.as_ref()?))))
        .filter(|l| !l.1.is_empty())
        .collect();
    if let Some(b) = &p.baseline {
        if let Some(c) = &b.summary.curves {
            lines.push((
                format!("{}{}", b.artifact_id, crate::BASELINE_SUFFIX),
                pick(c),
            ));
        }
    }
    let title = format!("{}: {} CDF", p.profile, q.label());
    if lines.is_empty() {
        return empty(root, &title);
    }
    let xmax = upper(lines.iter().flat_map(|l| l.1.iter().copied()));
    // The legend has its own room: it never covers a curve (the float baseline's is often
    // where a legend inside the plot would sit).
    let looks = crate::looks(&lines.iter().map(|l| l.0.as_str()).collect::<Vec<_>>());
    let entries: Vec<(String, Swatch)> = lines
        .iter()
        .zip(&looks)
        .map(|(l, &(_, c))| (l.0.clone(), Swatch::Line(c)))
        .collect();
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::Small)?.build_cartesian_2d(0f64..xmax, 0f64..1.0f64)?;
    axes(
        &mut chart,
        &format!("{} (ms)", q.label()),
        "fraction of requests",
    )?;
    for (i, (_, vals)) in lines.iter().enumerate() {
        let color = looks[i].1;
        let pts: Vec<(f64, f64)> = vals
            .iter()
            .enumerate()
            .map(|(k, v)| (*v, k as f64 / 100.0))
            .collect();
        chart.draw_series(LineSeries::new(pts, color.stroke_width(2)))?;
    }
    legend(&side, &entries)?;
    root.present()
}
