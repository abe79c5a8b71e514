//! What a chart says at each of its points, for the page to show on hover or keyboard focus: a
//! drawing records each value it draws with where it is drawn (in the drawing area's pixels)
//! and the page takes them after the draw ([`take`]). Every chart starts a new list
//! ([`crate::frame`] clears it), so what is taken is the last chart's.

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
}

thread_local! {
    static MARKS: RefCell<Vec<Mark>> = const { RefCell::new(Vec::new()) };
}

/// Starts a new chart's list.
pub(crate) fn clear() {
    MARKS.with(|m| m.borrow_mut().clear());
}

/// Records `text` at the data point `at` of `chart`.
pub(crate) fn add<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    at: &(X::ValueType, Y::ValueType),
    text: String,
) {
    let (x, y) = chart.backend_coord(at);
    MARKS.with(|m| m.borrow_mut().push(Mark { x, y, text }));
}

/// The marks of the chart drawn last, left to right (then top to bottom), and a new list.
pub fn take() -> Vec<Mark> {
    let mut out = MARKS.with(|m| std::mem::take(&mut *m.borrow_mut()));
    out.sort_by(|a, b| a.x.cmp(&b.x).then(a.y.cmp(&b.y)));
    out
}
