//! Legends: each chart's entries in their own room beside (or under) the plot, never over a
//! point; a series' entry toggles it (recorded as a mark), a hidden one drawn grey.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{marker, marks, Drawn, FONT};

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
pub(crate) const LEGEND_COLUMN_MIN_W: u32 = 520;
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
