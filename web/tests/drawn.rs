//! What a chart draws, recorded by a backend that keeps every text (with where it is drawn)
//! and every circle instead of pixels: the one-point Pareto front is drawn (ringed) and said in
//! the legend, the primary metric's interval bars are drawn where it is an axis, the
//! TTFT-by-turn chart draws the example's multi-turn profile, legends have their own room (no
//! curve or label under them), knee labels do not overlap, and titles fit a phone's width.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;

use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use sloscope_web::charts;
use wasm_bindgen_test::*;

mod common;
use common::example_analysis;

wasm_bindgen_test_configure!(run_in_browser);

/// Texts and circles a chart drew, on a canvas of `size` (800 × 400 unless set).
#[derive(Default)]
struct Recorder {
    texts: RefCell<Vec<String>>,
    at: RefCell<Vec<(String, BackendCoord)>>,
    circles: RefCell<Vec<(BackendCoord, u32)>>,
    size: Option<(u32, u32)>,
}

impl Recorder {
    fn sized(w: u32, h: u32) -> &'static Recorder {
        Box::leak(Box::new(Recorder {
            size: Some((w, h)),
            ..Default::default()
        }))
    }

    /// Where each text with this name was drawn.
    fn placed(&self, name: &str) -> Vec<BackendCoord> {
        let at = self.at.borrow();
        at.iter()
            .filter(|(t, _)| t == name)
            .map(|(_, p)| *p)
            .collect()
    }
}

/// A text's box as the recorder estimates it (7 px a character, 13 high).
fn text_box(text: &str, at: BackendCoord) -> (i32, i32, i32, i32) {
    (
        at.0,
        at.1,
        at.0 + 7 * text.chars().count() as i32,
        at.1 + 13,
    )
}

#[derive(Debug)]
struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

impl DrawingBackend for &Recorder {
    type ErrorType = Never;
    fn get_size(&self) -> (u32, u32) {
        self.size.unwrap_or((800, 400))
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Never>> {
        Ok(())
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Never>> {
        Ok(())
    }
    fn draw_pixel(
        &mut self,
        _: BackendCoord,
        _: BackendColor,
    ) -> Result<(), DrawingErrorKind<Never>> {
        Ok(())
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        _: &S,
        _: bool,
    ) -> Result<(), DrawingErrorKind<Never>> {
        self.circles.borrow_mut().push((center, radius));
        Ok(())
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        _: &S,
        at: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Never>> {
        self.texts.borrow_mut().push(text.to_string());
        self.at.borrow_mut().push((text.to_string(), at));
        Ok(())
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        _: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Never>> {
        Ok((text.chars().count() as u32 * 7, 13))
    }
}

#[wasm_bindgen_test]
fn a_one_point_front_is_ringed_and_intervals_drawn_where_the_primary_is_an_axis() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let i = a
        .profiles
        .iter()
        .position(|p| p.profile == "latency")
        .unwrap();
    let (mut p, cv) = (a.profiles[i].clone(), &view.profiles[i].charts);
    assert_eq!(p.primary_metric.as_deref(), Some("ttft_p95_ms"));
    assert!(p.candidates.iter().all(|c| c.primary_interval.is_some()));
    let r = Recorder::sized(800, 400);
    charts::tradeoff(&r.into_drawing_area(), &p, cv).unwrap();
    let texts = r.texts.borrow().join(" ");
    assert!(texts.contains("95 % interval (primary)"), "{texts}");
    // One candidate left: its front is one point, ringed and said.
    p.candidates.truncate(1);
    let one = Recorder::sized(800, 400);
    charts::tradeoff(&one.into_drawing_area(), &p, cv).unwrap();
    let texts = one.texts.borrow().join(" ");
    assert!(
        texts.contains("Pareto front: one point (ringed)"),
        "{texts}"
    );
    assert!(one.circles.borrow().iter().any(|c| c.1 == 11), "the ring");
}

#[wasm_bindgen_test]
fn the_examples_multi_turn_profile_draws_ttft_by_turn() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let with: Vec<&str> = view
        .profiles
        .iter()
        .filter(|v| v.charts.turns_caption.is_some())
        .map(|v| v.profile.as_str())
        .collect();
    assert_eq!(
        with,
        ["latency"],
        "the example's latency profile is multi-turn"
    );
    let i = a
        .profiles
        .iter()
        .position(|p| p.profile == "latency")
        .unwrap();
    // The chart's markers are `'static` elements: the recorder lives as long as the test.
    let r: &'static Recorder = Box::leak(Box::default());
    charts::ttft_by_turn(
        &r.into_drawing_area(),
        &a.profiles[i],
        &view.profiles[i].charts,
    )
    .unwrap();
    let texts = r.texts.borrow().join("\n");
    assert!(texts.contains("turn of the session"), "{texts}");
    for c in &a.profiles[i].candidates {
        assert!(texts.contains(&c.name), "{} in the legend: {texts}", c.name);
    }
}

fn profile(a: &sloscope_core::Analysis, name: &str) -> usize {
    a.profiles.iter().position(|p| p.profile == name).unwrap()
}

#[wasm_bindgen_test]
fn legends_have_their_own_room_beside_or_under_the_plot() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let (l, b) = (profile(&a, "latency"), profile(&a, "balanced"));
    let names: Vec<String> = a.profiles[l]
        .candidates
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert!(
        a.profiles[l].baseline.is_some(),
        "the example has a float baseline"
    );
    for (w, h) in [(800, 260), (390, 260)] {
        let cdf = Recorder::sized(w, h);
        charts::cdf(
            &cdf.into_drawing_area(),
            &a.profiles[l],
            charts::Quantity::Ttft,
        )
        .unwrap();
        let cap = Recorder::sized(w, 300);
        charts::capacity(
            &cap.into_drawing_area(),
            &a.profiles[b],
            &view.profiles[b].charts,
            charts::CapacityY::Slo,
        )
        .unwrap();
        for (r, h, extra) in [(cdf, h, "(float)"), (cap, 300, "failing trial (ringed)")] {
            let legend: Vec<String> =
                r.at.borrow()
                    .iter()
                    .map(|t| t.0.clone())
                    .filter(|t| {
                        // A CDF names each curve with its count: `np1 (n=72)`.
                        names
                            .iter()
                            .any(|n| t == n || t.starts_with(&format!("{n} (n=")))
                            || t.contains(extra)
                    })
                    .collect();
            assert!(legend.len() > names.len() - 1, "{w}: {legend:?}");
            for name in legend {
                for (x, y) in r.placed(&name) {
                    // Wide: a column at the right; narrow: rows under the plot.
                    let beside = w >= 520 && x >= (w - 200) as i32;
                    let under = w < 520 && y >= (h - 3 * 20 - 6) as i32 - 10;
                    assert!(
                        beside || under,
                        "{w}×{h}: {name} at ({x}, {y}) is inside the plot"
                    );
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn knee_and_failure_labels_never_overlap() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let b = profile(&a, "balanced");
    for (w, y) in [
        (800, charts::CapacityY::Slo),
        (390, charts::CapacityY::Slo),
        (800, charts::CapacityY::Throughput),
        (390, charts::CapacityY::Throughput),
    ] {
        let r = Recorder::sized(w, 300);
        charts::capacity(
            &r.into_drawing_area(),
            &a.profiles[b],
            &view.profiles[b].charts,
            y,
        )
        .unwrap();
        let labels: Vec<(String, (i32, i32, i32, i32))> =
            r.at.borrow()
                .iter()
                .filter(|(t, _)| t.contains(" knee ") || t.starts_with("fails "))
                .map(|(t, at)| (t.clone(), text_box(t, *at)))
                .collect();
        assert!(
            labels.iter().any(|l| l.0.contains(" knee ")),
            "{w}: {labels:?}"
        );
        for (i, (ta, ra)) in labels.iter().enumerate() {
            for (tb, rb) in &labels[i + 1..] {
                assert!(
                    !charts::overlaps(*ra, *rb),
                    "{w}: {ta:?} {ra:?} over {tb:?} {rb:?}"
                );
            }
        }
    }
}

#[wasm_bindgen_test]
fn every_title_fits_a_phone() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let first_text = |draw: &dyn Fn(&DrawingArea<&'static Recorder, plotters::coord::Shift>)| {
        let r = Recorder::sized(330, 260);
        draw(&r.into_drawing_area());
        r.texts.borrow()[0].clone()
    };
    let mut titles = vec![first_text(&|root| {
        charts::tpot_by_concurrency(root, &a).unwrap()
    })];
    for (p, v) in a.profiles.iter().zip(&view.profiles) {
        titles.push(first_text(&|root| {
            charts::tradeoff(root, p, &v.charts).unwrap()
        }));
        titles.push(first_text(&|root| {
            charts::cdf(root, p, charts::Quantity::Tpot).unwrap()
        }));
        if p.capacity.is_some() {
            titles.push(first_text(&|root| {
                charts::capacity(root, p, &v.charts, charts::CapacityY::Slo).unwrap()
            }));
        }
        if charts::baseline_bars(p).is_ok() {
            titles.push(first_text(&|root| {
                charts::baseline_ratios(root, p).unwrap()
            }));
        }
    }
    for t in &titles {
        assert!(
            7 * t.chars().count() <= 330 - 24,
            "{t:?} is wider than a phone's chart"
        );
    }
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("TPOT p95 by concurrency")),
        "{titles:?}"
    );
}
