//! The traffic a profile measured: histograms of the realised prompt and output lengths and of
//! the gaps between sends, and the prefill cost (TTFT against prompt length). All from the
//! core's percentile grids and equal-count bins, so they draw as fast at a million requests as
//! at a hundred.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::analysis::Curves;
use sloscope_core::analysis::ProfileReport;

use crate::{
    empty, frame, legend, legend_room, marker, shown, tick, upper, Drawn, Entry, Frame, Swatch,
};

/// Which measured quantity a traffic histogram shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// Prompt tokens of the successful requests.
    Prompt,
    /// Output tokens of the successful requests.
    Output,
    /// Gaps between consecutive sends.
    Interarrival,
}

impl Traffic {
    /// Axis label.
    pub fn label(self) -> &'static str {
        match self {
            Traffic::Prompt => "prompt tokens",
            Traffic::Output => "output tokens",
            Traffic::Interarrival => "gap between sends (ms)",
        }
    }

    fn grid(self, c: &Curves) -> &[f64] {
        match self {
            Traffic::Prompt => &c.prompt_tokens,
            Traffic::Output => &c.output_tokens,
            Traffic::Interarrival => &c.interarrival_ms,
        }
    }
}

/// Series of one profile: each candidate's curves, then the float baseline's.
fn series(p: &ProfileReport) -> Vec<(String, &Curves)> {
    let mut out: Vec<(String, &Curves)> = p
        .candidates
        .iter()
        .filter_map(|c| Some((shown(&c.name), c.summary.as_ref()?.curves.as_ref()?)))
        .collect();
    if let Some(b) = &p.baseline {
        if let Some(c) = &b.summary.curves {
            out.push((format!("{}{}", b.artifact_id, crate::BASELINE_SUFFIX), c));
        }
    }
    out
}

/// Bins of a histogram.
pub const BINS: usize = 16;

/// Share of requests (%) per equal-width bin over `[lo, hi]`, from a 101-point percentile grid:
/// each of its 100 steps holds 1 % of the requests, counted in the bin of its midpoint.
pub fn shares(grid: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let mut out = vec![0.0; BINS];
    if grid.len() < 2 {
        return out;
    }
    let width = (hi - lo).max(f64::MIN_POSITIVE) / BINS as f64;
    let step = 100.0 / (grid.len() - 1) as f64;
    for w in grid.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        let b = (((mid - lo) / width).floor().max(0.0) as usize).min(BINS - 1);
        out[b] += step;
    }
    out
}

/// Histogram of one measured quantity per candidate (and the baseline): bars over shared bins,
/// the series side by side within each bin, each in its own colour.
pub fn histogram<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    which: Traffic,
) -> Drawn<DB> {
    let title = format!(
        "{}: {} measured (share of requests)",
        p.profile,
        which.label()
    );
    let lines: Vec<(String, &[f64])> = series(p)
        .into_iter()
        .map(|(n, c)| (n, which.grid(c)))
        .filter(|(_, g)| g.len() > 1)
        .collect();
    if lines.is_empty() {
        return empty(root, &format!("{title}: no per-request data"));
    }
    let mut lo = lines.iter().map(|l| l.1[0]).fold(f64::INFINITY, f64::min);
    let mut hi = lines.iter().map(|l| l.1[l.1.len() - 1]).fold(0.0, f64::max);
    if hi - lo < BINS as f64 && which != Traffic::Interarrival {
        // Token counts that barely vary: one bin per count, centred on them.
        let mid = ((lo + hi) / 2.0).round();
        lo = (mid - BINS as f64 / 2.0).max(0.0);
        hi = lo + BINS as f64;
    } else if hi <= lo {
        hi = lo + 1.0;
    }
    let width = (hi - lo) / BINS as f64;
    let bars: Vec<Vec<f64>> = lines.iter().map(|l| shares(l.1, lo, hi)).collect();
    let ymax = upper(bars.iter().flatten().copied()).min(100.0);
    let looks = crate::looks(&lines.iter().map(|l| l.0.as_str()).collect::<Vec<_>>());
    let entries: Vec<Entry> = lines
        .iter()
        .zip(&looks)
        .map(|(l, &(_, c))| (l.0.clone(), Swatch::Block(c)))
        .collect();
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart = frame(root, &title, Frame::Small)?.build_cartesian_2d(lo..hi, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc(which.label())
        .y_desc("% of requests")
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    // Bars side by side within each bin, one per series, a tenth of the bin left free at
    // each edge so neighbouring bins stay apart.
    let k = bars.len() as f64;
    let slot = width * 0.8 / k;
    for (i, shares) in bars.iter().enumerate() {
        if !crate::marks::visible(&lines[i].0) {
            continue;
        }
        let (_, color) = looks[i];
        for (b, share) in shares.iter().enumerate().filter(|(_, s)| **s > 0.0) {
            let (from, x0) = (
                lo + width * b as f64,
                lo + width * (b as f64 + 0.1) + slot * i as f64,
            );
            let text = format!(
                "{}: {} {}–{}: {} % of requests",
                lines[i].0,
                which.label(),
                tick(&from),
                tick(&(from + width)),
                tick(share)
            );
            crate::marks::add(&chart, &(x0 + slot / 2.0, *share), text);
        }
        chart.draw_series(
            shares
                .iter()
                .enumerate()
                .filter(|(_, s)| **s > 0.0)
                .map(|(b, s)| {
                    let x0 = lo + width * (b as f64 + 0.1) + slot * i as f64;
                    Rectangle::new([(x0, 0.0), (x0 + slot, *s)], color.filled())
                }),
        )?;
    }
    legend(&side, &entries)?;
    root.present()
}

/// Prefill cost: TTFT against prompt length per candidate, the median of each equal-count bin
/// as a line with markers and its 90th percentile dashed.
pub fn prefill<DB: DrawingBackend + 'static>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
) -> Drawn<DB> {
    let title = format!("{}: TTFT against prompt length (prefill cost)", p.profile);
    let lines: Vec<(String, &Curves)> = series(p)
        .into_iter()
        .filter(|(_, c)| !c.ttft_by_prompt.is_empty())
        .collect();
    if lines.is_empty() {
        return empty(root, &format!("{title}: no prompt lengths recorded"));
    }
    let bins = lines.iter().flat_map(|l| l.1.ttft_by_prompt.iter());
    let xs = bins.clone().map(|b| b.prompt_tokens);
    let (xlo, xhi) = xs.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    // The measured range of prompt lengths, padded (not from 0: prefill cost is its slope).
    let pad = ((xhi - xlo) * 0.1).max(4.0);
    let (xmin, xmax) = ((xlo - pad).max(0.0), xhi + pad);
    let ymax = upper(bins.map(|b| b.ttft_p90_ms));
    let looks = crate::looks(&lines.iter().map(|l| l.0.as_str()).collect::<Vec<_>>());
    let entries: Vec<Entry> = lines
        .iter()
        .zip(&looks)
        .map(|(l, &(m, c))| (l.0.clone(), Swatch::Marker(m, c)))
        .collect();
    let (plot, side) = legend_room(root, &entries);
    let root = &plot;
    let mut chart =
        frame(root, &title, Frame::LongTicks)?.build_cartesian_2d(xmin..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("prompt tokens (bin median)")
        .y_desc("TTFT (ms): p50 solid, p90 dashed")
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    for (i, (name, c)) in lines.iter().enumerate() {
        if !crate::marks::visible(name) {
            continue;
        }
        let (shape, color) = looks[i];
        let p50: Vec<(f64, f64)> = c
            .ttft_by_prompt
            .iter()
            .map(|b| (b.prompt_tokens, b.ttft_p50_ms))
            .collect();
        let p90: Vec<(f64, f64)> = c
            .ttft_by_prompt
            .iter()
            .map(|b| (b.prompt_tokens, b.ttft_p90_ms))
            .collect();
        chart.draw_series(LineSeries::new(p50.clone(), color.stroke_width(2)))?;
        chart.draw_series(DashedLineSeries::new(p90, 6, 4, color.stroke_width(1)))?;
        for (b, at) in c.ttft_by_prompt.iter().zip(&p50) {
            let text = format!(
                "{}: prompts of about {} tokens: TTFT p50 {} ms, p90 {} ms",
                lines[i].0,
                tick(&b.prompt_tokens),
                tick(&b.ttft_p50_ms),
                tick(&b.ttft_p90_ms)
            );
            crate::marks::add(&chart, at, text);
        }
        chart.draw_series(p50.into_iter().map(|at| marker(shape, at, color)))?;
    }
    legend(&side, &entries)?;
    root.present()
}
