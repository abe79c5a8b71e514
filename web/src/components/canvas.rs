//! A canvas that a chart function draws on (through a `NodeRef`, never a global id), redrawn
//! when its data or the window width changes, with a PNG download button.

use std::rc::Rc;

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

/// Draws onto the canvas' drawing area.
pub type DrawFn =
    Rc<dyn Fn(&DrawingArea<CanvasBackend, plotters::coord::Shift>) -> Result<(), String>>;

/// Properties of [`Chart`].
#[derive(Properties, Clone)]
pub struct Props {
    /// Stable id for tests and file names.
    pub id: AttrValue,
    /// Accessible label.
    pub label: AttrValue,
    /// The drawing.
    pub draw: DrawFn,
    /// Changes whenever the drawing must be redone (data generation).
    pub generation: usize,
    /// Height in CSS pixels.
    #[prop_or(320)]
    pub height: u32,
}

impl PartialEq for Props {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.generation == other.generation && self.height == other.height
    }
}

fn window_width() -> u32 {
    web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(1024.0) as u32
}

/// A chart on a canvas.
#[function_component(Chart)]
pub fn chart(props: &Props) -> Html {
    let canvas = use_node_ref();
    let width = use_state(window_width);
    {
        let width = width.clone();
        use_effect_with((), move |_| {
            let listener =
                gloo::events::EventListener::new(&gloo::utils::window(), "resize", move |_| {
                    width.set(window_width());
                });
            move || drop(listener)
        });
    }
    {
        let canvas = canvas.clone();
        let draw = props.draw.clone();
        let height = props.height;
        // Each chart draws in its own task (a zero-delay timeout), not in the render pass:
        // a report's twenty charts would otherwise block the main thread as one long task.
        // A newer render cancels a draw not yet made.
        use_effect_with((props.generation, *width), move |(_, w)| {
            let w = *w;
            let pending = gloo::timers::callback::Timeout::new(0, move || {
                draw_into(&canvas, &draw, height, w);
            });
            move || drop(pending)
        });
    }
    let download = {
        let canvas = canvas.clone();
        let id = props.id.clone();
        Callback::from(move |_| {
            if let Some(el) = canvas.cast::<HtmlCanvasElement>() {
                if let Ok(url) = el.to_data_url_with_type("image/png") {
                    crate::report::download_url(&url, &format!("sloscope-{id}.png"));
                }
            }
        })
    };
    html! {
        <figure class="chart">
            <canvas id={props.id.clone()} ref={canvas} role="img" aria-label={props.label.clone()}></canvas>
            <figcaption>
                <span>{ props.label.clone() }</span>
                <button class="small" onclick={download} aria-label={format!("Download {} as PNG", props.label)}>{ "PNG" }</button>
            </figcaption>
        </figure>
    }
}

/// Sizes the canvas to the room it has (its bitmap at the screen's density) and draws, recording the draw time (for the page benchmark,
/// tests/e2e/bench.mjs) and whether it drew.
fn draw_into(canvas: &NodeRef, draw: &DrawFn, height: u32, window_w: u32) {
    let Some(el) = canvas.cast::<HtmlCanvasElement>() else {
        return;
    };
    // The width the canvas may take: its box at 100 % of the figure's content (padding left
    // out), measured before the bitmap is sized.
    let style = el.style();
    let _ = style.set_property("width", "100%");
    let avail = Some(el.client_width())
        .filter(|w| *w > 0)
        .map(|w| w as u32)
        .unwrap_or(window_w.saturating_sub(48));
    let css_w = avail.clamp(280, 1400);
    let scale = device_scale();
    // The bitmap at the screen's density, laid out at CSS size: sharp on phones and in PNGs.
    el.set_width((f64::from(css_w) * scale).round() as u32);
    el.set_height((f64::from(height) * scale).round() as u32);
    // The height follows the bitmap's aspect (CSS `height: auto`): a chart drawn for a wider
    // box than it later gets (folded when drawn) shrinks whole instead of being squeezed.
    let _ = style.set_property("width", &format!("{css_w}px"));
    let _ = el.remove_attribute("data-drawn");
    if let Some(backend) = CanvasBackend::with_canvas_object(el.clone()) {
        // Charts draw in CSS pixels on the top-left CSS-sized area; the context scales them
        // to the bitmap (set after sizing: a new width resets the context).
        scale_context(&el, scale);
        let root = backend.into_drawing_area().shrink((0, 0), (css_w, height));
        let now = || gloo::utils::window().performance().map_or(0.0, |p| p.now());
        let t0 = now();
        match draw(&root) {
            Ok(()) => {
                let _ = el.set_attribute("data-draw-ms", &format!("{:.1}", now() - t0));
                let _ = el.set_attribute("data-drawn", "true");
            }
            Err(e) => {
                let _ = el.set_attribute("data-error", &e);
            }
        }
    }
}

/// The screen's device pixels per CSS pixel, between 1 and 3.
fn device_scale() -> f64 {
    web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .clamp(1.0, 3.0)
}

fn scale_context(el: &HtmlCanvasElement, scale: f64) {
    use wasm_bindgen::JsCast;
    let ctx = el
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok());
    if let Some(ctx) = ctx {
        let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
    }
}

/// Adapts a plotters drawing result to the canvas' error type.
pub fn drawn<E: std::fmt::Debug>(r: Result<(), E>) -> Result<(), String> {
    r.map_err(|e| format!("{e:?}"))
}
