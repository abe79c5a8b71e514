//! What a chart says at each of its points, for the page to show on hover or keyboard focus: a
//! drawing records each value it draws with where it is drawn (in the drawing area's pixels)
//! and the page takes them after the draw ([`take`]). Every chart starts a new list
//! ([`crate::frame`] clears it), so what is taken is the last chart's; the page takes them after
//! every draw.
//!
//! Series can be hidden from their legend entry: the page says which before a draw
//! ([`set_hidden`]); a chart asks [`visible`] of each series it draws (which also makes the
//! series' legend entry a toggle, recorded as a mark with [`Mark::toggles`]).

use std::cell::RefCell;

use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;

/// One value a chart shows, where it shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Pixels from the left of the drawing area.
    pub x: i32,
    /// Pixels from the top.
    pub y: i32,
    /// The value in words: series, position and value, with units.
    pub text: String,
    /// For a legend entry of a series: the series it shows or hides.
    pub toggles: Option<String>,
    /// For a legend entry: the box it takes (left, top, right, bottom), swatch and words, all
    /// of which a click may land on.
    pub area: Option<[i32; 4]>,
}

thread_local! {
    static MARKS: RefCell<Vec<Mark>> = const { RefCell::new(Vec::new()) };
    /// Series the chart drew or hid (their legend entries toggle them).
    static SERIES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Series the page hides, by name.
    static HIDDEN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Starts a new chart's list of marks (the series it names are forgotten by [`take`]: a chart
/// may ask [`visible`] before its frame is drawn).
pub(crate) fn clear() {
    MARKS.with(|m| m.borrow_mut().clear());
}

/// The series the next draws hide (none: every series drawn).
pub fn set_hidden(names: &[String]) {
    HIDDEN.with(|h| *h.borrow_mut() = names.to_vec());
}

/// Whether the series `name` is drawn (and from now on, that its legend entry toggles it).
pub(crate) fn visible(name: &str) -> bool {
    SERIES.with(|s| {
        let mut s = s.borrow_mut();
        if !s.iter().any(|n| n == name) {
            s.push(name.to_string());
        }
    });
    !HIDDEN.with(|h| h.borrow().iter().any(|n| n == name))
}

/// Whether `name` is a series of the chart being drawn, and whether it is hidden.
pub(crate) fn series(name: &str) -> Option<bool> {
    SERIES
        .with(|s| s.borrow().iter().any(|n| n == name))
        .then(|| HIDDEN.with(|h| h.borrow().iter().any(|n| n == name)))
}

/// Records `text` at the data point `at` of `chart`.
pub(crate) fn add<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    at: &(X::ValueType, Y::ValueType),
    text: String,
) {
    let (x, y) = chart.backend_coord(at);
    push(Mark {
        x,
        y,
        text,
        toggles: None,
        area: None,
    });
}

/// Records a mark at pixel `(x, y)` of the whole drawing.
pub(crate) fn push(m: Mark) {
    MARKS.with(|v| v.borrow_mut().push(m));
}

/// The marks of the chart drawn last, left to right (then top to bottom), and a new list.
pub fn take() -> Vec<Mark> {
    SERIES.with(|m| m.borrow_mut().clear());
    let mut out = MARKS.with(|m| std::mem::take(&mut *m.borrow_mut()));
    out.sort_by(|a, b| a.x.cmp(&b.x).then(a.y.cmp(&b.y)));
    out
}
