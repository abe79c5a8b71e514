//! What a chart draws, recorded by a backend that keeps every text and every circle instead
//! of pixels: the one-point Pareto front is drawn (ringed) and said in the legend, the primary
//! metric's interval bars are drawn where it is an axis, and the TTFT-by-turn chart draws the
//! example's multi-turn profile.
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

/// Texts and circles a chart drew.
#[derive(Default)]
struct Recorder {
    texts: RefCell<Vec<String>>,
    circles: RefCell<Vec<(BackendCoord, u32)>>,
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
        (800, 400)
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
        _: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Never>> {
        self.texts.borrow_mut().push(text.to_string());
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
    let view = sloscope_core::show::view::report_view(&a);
    let i = a
        .profiles
        .iter()
        .position(|p| p.profile == "latency")
        .unwrap();
    let (mut p, cv) = (a.profiles[i].clone(), &view.profiles[i].charts);
    assert_eq!(p.primary_metric.as_deref(), Some("ttft_p95_ms"));
    assert!(p.candidates.iter().all(|c| c.primary_interval.is_some()));
    let r = Recorder::default();
    charts::tradeoff(&(&r).into_drawing_area(), &p, cv).unwrap();
    let texts = r.texts.borrow().join("\n");
    assert!(
        texts.contains("95 % interval of the primary metric"),
        "{texts}"
    );
    // One candidate left: its front is one point, ringed and said.
    p.candidates.truncate(1);
    let one = Recorder::default();
    charts::tradeoff(&(&one).into_drawing_area(), &p, cv).unwrap();
    let texts = one.texts.borrow().join("\n");
    assert!(
        texts.contains("Pareto front: one candidate best on both axes"),
        "{texts}"
    );
    assert!(one.circles.borrow().iter().any(|c| c.1 == 11), "the ring");
}

#[wasm_bindgen_test]
fn the_examples_multi_turn_profile_draws_ttft_by_turn() {
    let a = example_analysis();
    let view = sloscope_core::show::view::report_view(&a);
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
