//! The report's charts, drawn with plotters. Every function is generic over plotters'
//! `DrawingBackend`: the page draws them on its canvas, the snapshot tests record them as SVG
//! (`tests/svg.rs`), so a change in a number, a label or a line is a reviewed diff. They read
//! the analysis and the core's view-model only (which SLO bound applies, captions).

use plotters::coord::Shift;
use plotters::prelude::*;

mod baseline;
mod capacity;
mod cdf;
mod compare;
mod concurrency;
mod legend;
pub mod marks;
mod search;
mod slo;
mod tradeoff;
mod traffic;
mod turns;
pub use baseline::{baseline_bars, baseline_ratios};
pub use capacity::{capacity, CapacityY};
pub use cdf::{cdf, Quantity};
pub use compare::{cdf_pair, tradeoff_shift};
pub use concurrency::tpot_by_concurrency;
pub(crate) use legend::LEGEND_COLUMN_MIN_W;
pub use legend::{legend, legend_room, Entry, Swatch};
pub use search::{search_knobs, search_path, search_space};
pub use slo::{slo_rows, slo_shares, SloRow, SLO_ROW_PX};
pub use tradeoff::tradeoff;
pub use traffic::{histogram, prefill, shares, Traffic, BINS};
pub use turns::ttft_by_turn;

/// A name from a file as a chart shows it (legends, labels): made inert by the view-model's one
/// constructor, like every other string the page shows.
pub fn shown(name: &str) -> String {
    sloscope_core::view::Shown::new(name).to_string()
}

/// Result of a drawing function.
pub type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// How much room a chart's axes take (margin, x-label and y-label areas in pixels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// CDFs and histograms: short ticks.
    Small,
    /// Longer y ticks (milliseconds in the thousands).
    LongTicks,
    /// Scatter plots with axis titles and long ticks.
    Roomy,
    /// Horizontal bars labelled inside the plot: no y ticks.
    Bars,
}

/// Pixel size of chart titles.
const TITLE_PX: u32 = 15;

/// Every chart's set-up: a white background, the title fitted to the width, the margins and
/// label areas of its frame.
pub fn frame<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    f: Frame,
) -> Result<ChartBuilder<'a, 'b, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    marks::clear();
    let (margin, x, y) = match f {
        Frame::Small => (10, 36, 48),
        Frame::LongTicks => (10, 36, 56),
        Frame::Roomy => (12, 40, 64),
        Frame::Bars => (10, 36, 10),
    };
    let mut b = ChartBuilder::on(root);
    b.caption(fitted_title(root, title), (FONT, TITLE_PX))
        .margin(margin)
        .x_label_area_size(x)
        .y_label_area_size(y);
    Ok(b)
}

/// A chart on two linear axes of `f64`.
pub(crate) type Plane<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The mesh of a plain chart: both axes named, ticks in the one number format.
pub(crate) fn axes<DB: DrawingBackend>(chart: &mut Plane<'_, DB>, x: &str, y: &str) -> Drawn<DB> {
    chart
        .configure_mesh()
        .x_desc(x)
        .y_desc(y)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()
}

/// A title as it fits the area's width (a phone's chart is about 330 px): whole, else without
/// its closing parenthesis (the figure's caption says the same in words), else cut with "…".
pub fn fitted_title<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> String {
    let room = root.dim_in_pixel().0.saturating_sub(24);
    let font: TextStyle = (FONT, TITLE_PX).into();
    let fits = |t: &str| {
        root.estimate_text_size(t, &font)
            .map_or(true, |(w, _)| w <= room)
    };
    if fits(title) {
        return title.to_string();
    }
    let short = title.find(" (").map_or(title, |i| &title[..i]);
    if fits(short) {
        return short.to_string();
    }
    let mut cut: String = short.to_string();
    while cut.pop().is_some() {
        let t = format!("{}…", cut.trim_end());
        if fits(&t) {
            return t;
        }
    }
    String::new()
}

/// What a baseline series' name ends with; it is drawn in [`BASELINE_LOOK`] in every chart.
pub(crate) const BASELINE_SUFFIX: &str = " (float)";
/// The float baseline's look: grey, a cross.
const BASELINE_LOOK: (usize, RGBColor) = (2, RGBColor(96, 96, 96));

/// Each series' marker shape and colour, the same from one load to the next and from one
/// profile to the next: a candidate's slot of the palette is derived from its name (FNV-1a),
/// ignoring what a legend adds after it in parentheses (` (n=72)`); a slot another series of
/// the chart holds passes to the next free one (names taken in sorted
/// order, so the order series arrive in changes nothing), and the float baseline is always
/// [`BASELINE_LOOK`].
pub fn looks<S: AsRef<str>>(names: &[S]) -> Vec<(usize, RGBColor)> {
    let fnv = |s: &str| {
        s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].as_ref().cmp(names[b].as_ref()));
    // Yellow, the palette's last colour, is too pale on white for a series of its own.
    const SLOTS: usize = PALETTE.len() - 1;
    let mut taken = [false; SLOTS];
    let mut slot = vec![None; names.len()];
    for i in order {
        let name = names[i].as_ref();
        if name.ends_with(BASELINE_SUFFIX) {
            continue;
        }
        // The candidate's name, without what a legend adds after it (` (n=72)`).
        let key = name.split(" (").next().unwrap_or(name);
        let start = (fnv(key) % SLOTS as u64) as usize;
        let free = (0..SLOTS).map(|k| (start + k) % SLOTS).find(|&k| !taken[k]);
        let k = free.unwrap_or(start);
        taken[k] = true;
        slot[i] = Some(k);
    }
    slot.into_iter()
        .map(|s| s.map_or(BASELINE_LOOK, |k| (k, PALETTE[k])))
        .collect()
}

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

/// A tick label as the tables write numbers: `20`, `2500`, `0.25` — never `20.0`.
pub fn tick(v: &f64) -> String {
    sloscope_core::measure::format_number(*v)
}

/// A marker shape per series, so series differ by more than colour.
fn marker<DB: DrawingBackend + 'static, C: Clone + 'static>(
    i: usize,
    at: C,
    color: RGBColor,
) -> DynElement<'static, DB, C> {
    let style = color.filled();
    match i % 3 {
        0 => Circle::new(at, 5, style).into_dyn(),
        1 => TriangleMarker::new(at, 6, style).into_dyn(),
        _ => Cross::new(at, 5, color.stroke_width(2)).into_dyn(),
    }
}

/// A label's box in pixels: left, top, right, bottom.
pub type Rect = (i32, i32, i32, i32);

pub fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where to put `name` next to the marker at `at` (pixels): right-above, right-below,
/// left-above, left-below, then further out, the first spot that covers no marker (radius 7)
/// and no label already placed. Records the chosen box in `placed`.
pub fn label_offset(
    at: (i32, i32),
    name: &str,
    markers: &[(i32, i32)],
    placed: &mut Vec<Rect>,
) -> (i32, i32) {
    label_offset_within(at, name, markers, placed, None)
}

/// [`label_offset`], preferring spots whose box lies inside `bounds` (the plotting area, in
/// pixels) so a label near the edge goes to the other side instead of being cut.
pub fn label_offset_within(
    at: (i32, i32),
    name: &str,
    markers: &[(i32, i32)],
    placed: &mut Vec<Rect>,
    bounds: Option<Rect>,
) -> (i32, i32) {
    let w = 8 * name.chars().count() as i32 + 2;
    let h = 14;
    let mut spots = Vec::new();
    for step in 0..4 {
        let d = 9 + 16 * step;
        spots.extend([(9, -d - 9), (9, d - 7), (-9 - w, -d - 9), (-9 - w, d - 7)]);
    }
    let rect = |(dx, dy): (i32, i32)| (at.0 + dx, at.1 + dy, at.0 + dx + w, at.1 + dy + h);
    let inside =
        |r: Rect| bounds.is_none_or(|b| r.0 >= b.0 && r.1 >= b.1 && r.2 <= b.2 && r.3 <= b.3);
    let free = |r: Rect| {
        inside(r)
            && !markers
                .iter()
                .any(|m| overlaps(r, (m.0 - 7, m.1 - 7, m.0 + 7, m.1 + 7)))
            && !placed.iter().any(|p| overlaps(r, *p))
    };
    // No free spot: the one inside the plot that covers the fewest labels and markers.
    let crowd = |r: Rect| {
        placed.iter().filter(|p| overlaps(r, **p)).count()
            + markers
                .iter()
                .filter(|m| overlaps(r, (m.0 - 7, m.1 - 7, m.0 + 7, m.1 + 7)))
                .count()
            + if inside(r) { 0 } else { 1000 }
    };
    let chosen = spots
        .iter()
        .copied()
        .find(|s| free(rect(*s)))
        .unwrap_or_else(|| {
            spots
                .iter()
                .copied()
                .min_by_key(|s| crowd(rect(*s)))
                .unwrap_or(spots[0])
        });
    placed.push(rect(chosen));
    chosen
}

fn upper(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    if m <= 0.0 {
        1.0
    } else {
        m * 1.15
    }
}

/// A value axis that spans the values given (and a limit drawn with them) with a margin, not
/// from zero: points and their intervals a few per cent apart stay apart. From zero only when
/// the values come within a third of their top to it.
fn spanned(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if hi.is_nan() || hi <= 0.0 {
        return 0.0..1.0;
    }
    let pad = ((hi - lo) * 0.15).max(hi * 0.02);
    let bottom = lo - pad;
    if bottom < hi / 3.0 {
        0.0..hi + pad
    } else {
        bottom..hi + pad
    }
}

fn empty<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Drawn<DB> {
    root.fill(&WHITE)?;
    marks::clear();
    let text = if title.contains(": no ") {
        title.to_string()
    } else {
        format!("{title}: no data")
    };
    root.draw(&Text::new(
        fitted_title(root, &text),
        (20, 30),
        (FONT, TITLE_PX),
    ))?;
    root.present()
}
