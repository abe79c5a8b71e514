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

/// What a legend entry shows beside its name.
#[derive(Debug, Clone, Copy)]
pub enum Swatch {
    /// A series' line.
    Line(RGBColor),
    /// A series' marker (its shape by index, as [`marker`] draws it).
    Marker(usize, RGBColor),
    /// A filled dot (a candidate's point).
    Dot(RGBColor),
    /// A dashed line (an SLO limit, a front).
    Dashed(RGBColor),
    /// A ring (a failing trial, a one-point front).
    Ring(RGBColor),
    /// A short vertical bar (an interval).
    Bar(RGBColor),
    /// A filled square (a histogram's bars).
    Block(RGBColor),
}

/// A legend entry: its name and what is drawn beside it.
pub type Entry = (String, Swatch);

/// Pixels of a legend column; charts narrower than [`LEGEND_COLUMN_MIN_W`] put the legend
/// under the plot instead.
const LEGEND_W: u32 = 200;
const LEGEND_COLUMN_MIN_W: u32 = 520;
const LEGEND_ROW_H: i32 = 20;
const LEGEND_LINE_H: i32 = 15;
/// Where an entry's text starts, right of its swatch.
const LEGEND_TEXT_X: i32 = 26;

/// An entry's name in lines that fit `room` pixels (at most two; the rest cut with "…").
fn wrapped<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    room: u32,
) -> Vec<String> {
    let font: TextStyle = (FONT, 13).into();
    let fits = |t: &str| {
        area.estimate_text_size(t, &font)
            .map_or(true, |(w, _)| w <= room)
    };
    if fits(name) {
        return vec![name.to_string()];
    }
    // The longest head that fits.
    let chars: Vec<char> = name.chars().collect();
    let mut end = chars.len();
    while end > 1 && !fits(&chars[..end].iter().collect::<String>()) {
        end -= 1;
    }
    let head: String = chars[..end].iter().collect();
    // Broken after a space, a hyphen, an underscore or a slash where there is one (never in
    // the middle of a word like `instruct-f` / `16`), else where the room ends.
    let cut = head
        .rfind([' ', '-', '_', '/', '.'])
        .filter(|&i| i > 0)
        .map_or(head.len(), |i| i + 1);
    let first = head[..cut].trim_end().to_string();
    let rest = name[cut..].trim_start();
    let mut second: String = rest.to_string();
    if !fits(&second) {
        second.pop();
        while !second.is_empty() && !fits(&format!("{second}…")) {
            second.pop();
        }
        second.push('…');
    }
    vec![first, second]
}

/// Where each entry goes (x, y of its first line) and its lines, and the height the legend
/// needs: a column (`column`) or two columns of rows.
fn layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    width: u32,
    column: bool,
) -> (Vec<(i32, i32, Vec<String>)>, i32) {
    let room = if column { width } else { width / 2 }.saturating_sub(LEGEND_TEXT_X as u32 + 12);
    let lines: Vec<Vec<String>> = entries.iter().map(|e| wrapped(area, &e.0, room)).collect();
    let height = |l: &Vec<String>| LEGEND_ROW_H + LEGEND_LINE_H * (l.len() as i32 - 1);
    let mut out = Vec::with_capacity(entries.len());
    let mut y = if column { 44 } else { 12 };
    for (i, l) in lines.iter().enumerate() {
        if column {
            out.push((0, y, l.clone()));
            y += height(l);
        } else {
            let x = 8 + (i % 2) as i32 * (width / 2) as i32;
            out.push((x, y, l.clone()));
            if i % 2 == 1 || i + 1 == lines.len() {
                let row = lines[i - i % 2..=i]
                    .iter()
                    .map(height)
                    .max()
                    .unwrap_or(LEGEND_ROW_H);
                y += row;
            }
        }
    }
    (out, y)
}

/// Splits the legend's room off the chart's area, so it never covers a point or a line: a
/// column at the right of a wide chart, two columns of rows under a narrow one (a phone).
/// Returns (plot area, legend area).
pub fn legend_room<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (w, h) = root.dim_in_pixel();
    if w >= LEGEND_COLUMN_MIN_W {
        return root.split_horizontally(w - LEGEND_W);
    }
    let (_, needed) = layout(root, entries, w, false);
    root.split_vertically(h.saturating_sub(needed as u32))
}

/// Draws a legend into the room [`legend_room`] made; names too long for it wrap to a second
/// line (and are cut with "…" after it).
pub fn legend<DB: DrawingBackend + 'static>(
    side: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Drawn<DB> {
    side.fill(&WHITE)?;
    let (w, _) = side.dim_in_pixel();
    let (placed, _) = layout(side, entries, w, w <= LEGEND_W);
    let base = side.get_base_pixel();
    for ((x, y, lines), (name, swatch)) in placed.into_iter().zip(entries) {
        // A series' entry toggles it; a hidden one is drawn grey and says so.
        let hidden = marks::series(name);
        let swatch = match hidden {
            Some(true) => greyed(*swatch),
            _ => *swatch,
        };
        draw_swatch(side, swatch, (x, y))?;
        // Grey enough to tell, dark enough to read (5.9:1 on white).
        let ink = if hidden == Some(true) {
            RGBColor(105, 105, 105)
        } else {
            BLACK
        };
        let n = lines.len();
        let widest = lines
            .iter()
            .filter_map(|l| side.estimate_text_size(l, &(FONT, 13).into()).ok())
            .map(|(w, _)| w as i32)
            .max()
            .unwrap_or(0);
        for (k, line) in lines.into_iter().enumerate() {
            let at = (x + LEGEND_TEXT_X, y - 7 + k as i32 * LEGEND_LINE_H);
            let line = match hidden {
                Some(true) if k + 1 == n => format!("{line} (hidden)"),
                _ => line,
            };
            side.draw(&Text::new(line, at, (FONT, 13).into_font().color(&ink)))?;
        }
        if let Some(h) = hidden {
            let how = if h {
                "hidden: click or Enter shows it"
            } else {
                "shown: click or Enter hides it"
            };
            marks::push(marks::Mark {
                x: base.0 + x + 12,
                y: base.1 + y,
                text: format!("legend: {name}, {how}"),
                toggles: Some(name.clone()),
                area: Some([
                    base.0 + x,
                    base.1 + y - LEGEND_ROW_H / 2,
                    base.0 + x + LEGEND_TEXT_X + widest + 4,
                    base.1 + y + LEGEND_ROW_H / 2 + LEGEND_LINE_H * (n as i32 - 1),
                ]),
            });
        }
    }
    Ok(())
}

/// A hidden series' swatch: its shape in grey.
fn greyed(s: Swatch) -> Swatch {
    let g = RGBColor(150, 150, 150);
    match s {
        Swatch::Line(_) => Swatch::Line(g),
        Swatch::Marker(k, _) => Swatch::Marker(k, g),
        Swatch::Dot(_) => Swatch::Dot(g),
        Swatch::Dashed(_) => Swatch::Dashed(g),
        Swatch::Ring(_) => Swatch::Ring(g),
        Swatch::Bar(_) => Swatch::Bar(g),
        Swatch::Block(_) => Swatch::Block(g),
    }
}

fn draw_swatch<DB: DrawingBackend + 'static>(
    side: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Drawn<DB> {
    match swatch {
        Swatch::Line(c) => side.draw(&PathElement::new(
            [(x + 4, y), (x + 20, y)],
            c.stroke_width(2),
        )),
        Swatch::Marker(k, c) => side.draw(&marker::<DB, _>(k, (x + 12, y), c)),
        Swatch::Dot(c) => side.draw(&Circle::new((x + 12, y), 5, c.filled())),
        Swatch::Ring(c) => side.draw(&Circle::new((x + 12, y), 5, c.stroke_width(2))),
        Swatch::Block(c) => side.draw(&Rectangle::new(
            [(x + 6, y - 6), (x + 18, y + 6)],
            c.filled(),
        )),
        Swatch::Bar(c) => side.draw(&PathElement::new(
            [(x + 12, y - 6), (x + 12, y + 6)],
            c.stroke_width(2),
        )),
        Swatch::Dashed(c) => {
            for dx in [4, 14] {
                side.draw(&PathElement::new(
                    [(x + dx, y), (x + dx + 6, y)],
                    c.stroke_width(2),
                ))?;
            }
            Ok(())
        }
    }
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
