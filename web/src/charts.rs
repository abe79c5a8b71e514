//! Charts drawn with plotters. Every function is generic over plotters' `DrawingBackend`, so the
//! same code draws on the page's canvas and could draw to SVG or a bitmap elsewhere.

use plotters::coord::Shift;
use plotters::prelude::*;
use sloscope_core::metric::Metric;
use sloscope_core::report::{Analysis, ProfileReport};

/// Result of a drawing function.
pub type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Series colours (colour-blind-safe Okabe–Ito).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
];
const SLO: RGBColor = RGBColor(200, 30, 30);
const FONT: &str = "sans-serif";

fn upper(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    if m <= 0.0 {
        1.0
    } else {
        m * 1.15
    }
}

fn empty<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Drawn<DB> {
    root.fill(&WHITE)?;
    root.draw(&Text::new(
        format!("{title}: no data"),
        (20, 30),
        (FONT, 16),
    ))?;
    root.present()
}

// Axes, SLO lines, Pareto front, points and labels of one chart: plotters' builder style
// makes this one long function (past 80 lines); each block is one layer of the drawing.
/// TTFT p95 against output throughput per candidate, with the SLO lines and the Pareto front.
pub fn tradeoff<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, p: &ProfileReport) -> Drawn<DB> {
    let (ttft, tps) = (Metric::TTFT_P95, Metric::THROUGHPUT);
    let pts: Vec<(String, f64, f64)> = p
        .candidates
        .iter()
        .filter_map(|c| Some((c.name.clone(), c.metric(tps)?, c.metric(ttft)?)))
        .collect();
    let title = format!("{}: TTFT p95 vs output throughput", p.profile);
    if pts.is_empty() {
        return empty(root, &title);
    }
    let slo_y = p
        .slo
        .iter()
        .find(|s| s.metric == "ttft_p95_ms")
        .map(|s| s.limit);
    let slo_x = p
        .slo
        .iter()
        .find(|s| s.metric == "throughput_tps")
        .map(|s| s.limit);
    let xmax = upper(pts.iter().map(|p| p.1).chain(slo_x));
    let ymax = upper(pts.iter().map(|p| p.2).chain(slo_y));
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&title, (FONT, 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("output throughput (tokens/s)")
        .y_desc("TTFT p95 (ms)")
        .draw()?;
    if let Some(y) = slo_y {
        chart
            .draw_series(LineSeries::new([(0.0, y), (xmax, y)], SLO.stroke_width(2)))?
            .label(format!("SLO ttft_p95_ms ≤ {y}"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], SLO.stroke_width(2)));
    }
    if let Some(x) = slo_x {
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, ymax)], SLO.stroke_width(2)))?
            .label(format!("SLO throughput_tps ≥ {x}"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], SLO.stroke_width(2)));
    }
    // Pareto front: no other candidate has both more throughput and a lower TTFT.
    let mut front: Vec<(f64, f64)> = pts
        .iter()
        .filter(|a| {
            !pts.iter()
                .any(|b| b.1 >= a.1 && b.2 <= a.2 && (b.1 > a.1 || b.2 < a.2))
        })
        .map(|a| (a.1, a.2))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(front, BLACK.mix(0.4).stroke_width(1)))?
        .label("Pareto front")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.4)));
    for (i, (name, x, y)) in pts.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(std::iter::once(Circle::new((*x, *y), 6, color.filled())))?
            .label(name.clone())
            .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
        chart.draw_series(std::iter::once(Text::new(
            name.clone(),
            (*x, *y),
            (FONT, 13),
        )))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()
}

/// TPOT p95 of every candidate at each profile's concurrency (one line per candidate).
pub fn tpot_by_concurrency<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    a: &Analysis,
) -> Drawn<DB> {
    let tpot = Metric::TPOT_P95;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in &a.profiles {
        let Some(conc) = p.workload.as_ref().and_then(|w| w.concurrency) else {
            continue;
        };
        for c in &p.candidates {
            let Some(v) = c.metric(tpot) else {
                continue;
            };
            match series.iter_mut().find(|s| s.0 == c.name) {
                Some(s) => s.1.push((conc as f64, v)),
                None => series.push((c.name.clone(), vec![(conc as f64, v)])),
            }
        }
        if let Some(b) = &p.baseline {
            if let Some(v) = b.summary.metric(tpot) {
                let name = format!("{} (float)", b.artifact_id);
                match series.iter_mut().find(|s| s.0 == name) {
                    Some(s) => s.1.push((conc as f64, v)),
                    None => series.push((name, vec![(conc as f64, v)])),
                }
            }
        }
    }
    let title = "TPOT p95 by concurrency";
    if series.is_empty() {
        return empty(root, title);
    }
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let xmax = upper(series.iter().flat_map(|s| s.1.iter().map(|p| p.0)));
    let ymax = upper(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("concurrency (streams)")
        .y_desc("TPOT p95 (ms)")
        .draw()?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(
            pts.iter()
                .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()
}

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
pub fn cdf<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
    q: Quantity,
) -> Drawn<DB> {
    let pick = |c: &sloscope_core::summary::Curves| match q {
        Quantity::Ttft => c.ttft_ms.clone(),
        Quantity::Tpot => c.tpot_ms.clone(),
        Quantity::E2e => c.e2e_ms.clone(),
    };
    let mut lines: Vec<(String, Vec<f64>)> = p
        .candidates
        .iter()
        .filter_map(|c| Some((c.name.clone(), pick(c.summary.as_ref()?.curves.as_ref()?))))
        .filter(|l| !l.1.is_empty())
        .collect();
    if let Some(b) = &p.baseline {
        if let Some(c) = &b.summary.curves {
            lines.push((format!("{} (float)", b.artifact_id), pick(c)));
        }
    }
    let title = format!("{}: {} CDF", p.profile, q.label());
    if lines.is_empty() {
        return empty(root, &title);
    }
    let xmax = upper(lines.iter().flat_map(|l| l.1.iter().copied()));
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&title, (FONT, 15))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..xmax, 0f64..1.0f64)?;
    chart
        .configure_mesh()
        .x_desc(format!("{} (ms)", q.label()))
        .y_desc("fraction of requests")
        .draw()?;
    for (i, (name, vals)) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = vals
            .iter()
            .enumerate()
            .map(|(k, v)| (*v, k as f64 / 100.0))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()
}

/// Quantized / float ratio for each compared metric (1 = same as the float baseline).
pub fn baseline_ratios<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &ProfileReport,
) -> Drawn<DB> {
    let title = format!("{}: quantized / float", p.profile);
    let Some(b) = &p.baseline else {
        return empty(root, &title);
    };
    let bars: Vec<(String, f64)> = b
        .rows
        .iter()
        .filter_map(|r| Some((r.metric.clone(), r.ratio?)))
        .collect();
    if bars.is_empty() {
        return empty(root, &title);
    }
    let ymax = upper(bars.iter().map(|b| b.1).chain([1.0]));
    root.fill(&WHITE)?;
    let n = bars.len();
    let mut chart = ChartBuilder::on(root)
        .caption(&title, (FONT, 15))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| labels.get(x.floor() as usize).cloned().unwrap_or_default())
        .y_desc("ratio")
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
        let color = PALETTE[i % PALETTE.len()];
        Rectangle::new(
            [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)],
            color.filled(),
        )
    }))?;
    chart.draw_series(LineSeries::new(
        [(0.0, 1.0), (n as f64, 1.0)],
        BLACK.stroke_width(1),
    ))?;
    root.present()
}
