//! A canvas that a chart function draws on (through a `NodeRef`, never a global id), redrawn
//! when its data or the window width changes, with a PNG download button. Each value the chart
//! draws is shown in words beside its point on hover, and on keyboard focus (the arrow keys go
//! from one to the next; an `aria-live` output reads it out). A series' legend entry shows or
//! hides it (a click, or Enter or Space on the entry read with the keyboard).

use std::cell::RefCell;
use std::rc::Rc;

use sloscope_charts::marks::Mark;

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

/// What the last draw said at its points, and the CSS width it drew at.
type Drawn = Rc<RefCell<(Vec<Mark>, u32)>>;

/// How far from a point (in the chart's pixels) the pointer still reads it.
const NEAR_PX: f64 = 28.0;

/// Canvas pixels per chart pixel as the canvas is laid out now.
fn shown_scale(el: &HtmlCanvasElement, css_w: u32) -> f64 {
    match (el.client_width(), css_w) {
        (w, c) if w > 0 && c > 0 => f64::from(w) / f64::from(c),
        _ => 1.0,
    }
}

/// The mark nearest the pointer, within [`NEAR_PX`].
fn nearest(drawn: &Drawn, el: &HtmlCanvasElement, e: &MouseEvent) -> Option<usize> {
    let d = drawn.borrow();
    let scale = shown_scale(el, d.1);
    let (x, y) = (
        f64::from(e.offset_x()) / scale,
        f64::from(e.offset_y()) / scale,
    );
    // A legend entry anywhere on its box, swatch or words.
    let inside = |a: &[i32; 4]| {
        x >= f64::from(a[0]) && x <= f64::from(a[2]) && y >= f64::from(a[1]) && y <= f64::from(a[3])
    };
    if let Some(i) = d.0.iter().position(|m| m.area.as_ref().is_some_and(inside)) {
        return Some(i);
    }
    d.0.iter()
        .enumerate()
        .map(|(i, m)| (i, (f64::from(m.x) - x).hypot(f64::from(m.y) - y)))
        .filter(|(_, dist)| *dist <= NEAR_PX)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Where a chart's hidden series are kept for this tab (`sessionStorage`): a reload shows the
/// chart as it was left; Clear forgets every chart's ([`forget_hidden`]).
const HIDDEN_KEY: &str = "sloscope-hidden:";

fn session() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

/// The series hidden on chart `id` when the page was last left (none if never, or unreadable).
fn kept_hidden(id: &str) -> Vec<String> {
    session()
        .and_then(|s| s.get_item(&format!("{HIDDEN_KEY}{id}")).ok()?)
        .and_then(|v| serde_json::from_str(&v).ok())
        .unwrap_or_default()
}

fn keep_hidden(id: &str, hidden: &[String]) {
    let Some(s) = session() else { return };
    let key = format!("{HIDDEN_KEY}{id}");
    let _ = match hidden {
        [] => s.remove_item(&key),
        h => s.set_item(&key, &serde_json::to_string(h).unwrap_or_default()),
    };
}

/// Forgets every chart's hidden series (the loaded set was cleared).
pub fn forget_hidden() {
    let Some(s) = session() else { return };
    let keys: Vec<String> = (0..s.length().unwrap_or(0))
        .filter_map(|i| s.key(i).ok().flatten())
        .filter(|k| k.starts_with(HIDDEN_KEY))
        .collect();
    for k in keys {
        let _ = s.remove_item(&k);
    }
}

/// Hides `name` if shown, shows it if hidden.
fn toggled(hidden: &[String], name: &str) -> Vec<String> {
    let mut out: Vec<String> = hidden.iter().filter(|n| *n != name).cloned().collect();
    if out.len() == hidden.len() {
        out.push(name.to_string());
    }
    out
}

/// The selected mark after a key: the arrows step, Home and End jump, Escape clears.
fn stepped(key: &str, at: Option<usize>, n: usize) -> Option<Option<usize>> {
    if n == 0 {
        return None;
    }
    Some(match key {
        "ArrowRight" | "ArrowDown" => Some(at.map_or(0, |i| (i + 1) % n)),
        "ArrowLeft" | "ArrowUp" => Some(at.map_or(n - 1, |i| (i + n - 1) % n)),
        "Home" => Some(0),
        "End" => Some(n - 1),
        "Escape" => None,
        _ => return None,
    })
}

/// The selected value at its point: a ring on the point and its words above it (below, near
/// the top), centred on it but kept inside the figure, whatever its width.
fn value_at(drawn: &Drawn, canvas: &NodeRef, at: Option<usize>, id: &str) -> Html {
    let d = drawn.borrow();
    let (Some(m), Some(el)) = (
        at.and_then(|i| d.0.get(i)),
        canvas.cast::<HtmlCanvasElement>(),
    ) else {
        return html! { <output class="chart-value" id={format!("{id}-value")} aria-live="polite"></output> };
    };
    let scale = shown_scale(&el, d.1);
    let (x, y) = (
        f64::from(el.offset_left()) + f64::from(m.x) * scale,
        f64::from(el.offset_top()) + f64::from(m.y) * scale,
    );
    let fig = el
        .parent_element()
        .map_or(f64::from(el.client_width()), |p| {
            f64::from(p.client_width())
        });
    let w = (fig - 12.0).clamp(0.0, 360.0);
    // Centred on the point where the widest box fits; else held by its edge near the point.
    let place = if x - w / 2.0 < 6.0 {
        format!("left:{:.0}px", (x - 24.0).max(6.0))
    } else if x + w / 2.0 > fig - 6.0 {
        format!("right:{:.0}px", (fig - x - 24.0).max(6.0))
    } else {
        format!("left:{x:.0}px;--centre:-50%")
    };
    let below = y < 90.0;
    html! {
        <>
            <span class="chart-ring" style={format!("left:{x:.0}px;top:{y:.0}px")}></span>
            <output class={classes!("chart-value", "shown", below.then_some("below"))} id={format!("{id}-value")} aria-live="polite"
                style={format!("{place};top:{y:.0}px;max-width:{w:.0}px")}>{ m.text.clone() }</output>
        </>
    }
}

/// What a chart's canvas keeps between renders: what the last draw said, the value read, the
/// series hidden from the legend and the legend entry to read again after the redraw.
#[derive(Clone)]
struct Looking {
    canvas: NodeRef,
    drawn: Drawn,
    at: UseStateHandle<Option<usize>>,
    hidden: UseStateHandle<Vec<String>>,
    refocus: Rc<RefCell<Option<String>>>,
    /// The chart's id, the key its hidden series are kept under.
    id: AttrValue,
}

impl Looking {
    /// The legend entry's series the mark `i` toggles, if it is one.
    fn toggles(&self, i: Option<usize>) -> Option<String> {
        i.and_then(|i| self.drawn.borrow().0.get(i).and_then(|m| m.toggles.clone()))
    }

    /// Hides the series if shown, shows it if hidden; its entry is read again after the redraw.
    fn toggle(&self, name: String) {
        let hidden = toggled(&self.hidden, &name);
        keep_hidden(&self.id, &hidden);
        self.hidden.set(hidden);
        *self.refocus.borrow_mut() = Some(name);
    }

    /// The pointer over the canvas: the value near it shown, a hand over a legend entry.
    fn moved(&self, e: &PointerEvent) {
        let Some(el) = self.canvas.cast::<HtmlCanvasElement>() else {
            return;
        };
        let near = nearest(&self.drawn, &el, e);
        let hand = self.toggles(near).is_some();
        let _ = el
            .style()
            .set_property("cursor", if hand { "pointer" } else { "" });
        if near != *self.at {
            self.at.set(near);
        }
    }

    /// A click (a tap on a phone, which moves no pointer first): on a legend entry it toggles
    /// its series; on a point it shows the point's value.
    fn clicked(&self, e: &MouseEvent) {
        let Some(el) = self.canvas.cast::<HtmlCanvasElement>() else {
            return;
        };
        let near = nearest(&self.drawn, &el, e);
        match self.toggles(near) {
            Some(name) => self.toggle(name),
            None => self.at.set(near),
        }
    }

    /// A key: Enter or Space on a legend entry toggles it; the others step ([`stepped`]).
    fn key(&self, e: &KeyboardEvent) {
        let entry = self
            .toggles(*self.at)
            .filter(|_| matches!(e.key().as_str(), "Enter" | " "));
        if let Some(name) = entry {
            e.prevent_default();
            self.toggle(name);
            return;
        }
        if let Some(next) = stepped(&e.key(), *self.at, self.drawn.borrow().0.len()) {
            e.prevent_default();
            self.at.set(next);
        }
    }
}

/// The window's width, kept current.
#[hook]
fn use_window_width() -> u32 {
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
    *width
}

/// Draws the chart whenever its data, the window's width or the hidden series change. Each
/// chart draws in its own task (a zero-delay timeout), not in the render pass: a report's
/// twenty charts would otherwise block the main thread as one long task. A newer render cancels
/// a draw not yet made.
#[hook]
fn use_draw(props: &Props, l: &Looking, width: u32) {
    let (draw, height, l) = (props.draw.clone(), props.height, l.clone());
    let key = (props.generation, width, (*l.hidden).clone());
    use_effect_with(key, move |(_, w, hid)| {
        let (w, hid) = (*w, hid.clone());
        let pending = gloo::timers::callback::Timeout::new(0, move || {
            sloscope_charts::marks::set_hidden(&hid);
            draw_into(&l.canvas, &draw, height, w, &l.drawn);
            let again = l.refocus.borrow_mut().take();
            let d = l.drawn.borrow();
            l.at.set(again.and_then(|n| d.0.iter().position(|m| m.toggles.as_ref() == Some(&n))));
        });
        move || drop(pending)
    });
}

fn png_download(canvas: &NodeRef, id: &AttrValue) -> Callback<MouseEvent> {
    let (canvas, id) = (canvas.clone(), id.clone());
    Callback::from(move |_| {
        if let Some(el) = canvas.cast::<HtmlCanvasElement>() {
            if let Ok(url) = el.to_data_url_with_type("image/png") {
                crate::report::download_url(&url, &format!("sloscope-{id}.png"));
            }
        }
    })
}

/// A chart on a canvas.
#[function_component(Chart)]
pub fn chart(props: &Props) -> Html {
    let l = Looking {
        canvas: use_node_ref(),
        drawn: use_mut_ref(Default::default).clone(),
        at: use_state(|| None::<usize>),
        hidden: {
            let id = props.id.clone();
            use_state(move || kept_hidden(&id))
        },
        refocus: use_mut_ref(|| None).clone(),
        id: props.id.clone(),
    };
    let width = use_window_width();
    use_draw(props, &l, width);
    let onpointermove = {
        let l = l.clone();
        Callback::from(move |e: PointerEvent| l.moved(&e))
    };
    let onpointerleave = {
        let at = l.at.clone();
        Callback::from(move |_: PointerEvent| at.set(None))
    };
    let onclick = {
        let l = l.clone();
        Callback::from(move |e: MouseEvent| l.clicked(&e))
    };
    let onkeydown = {
        let l = l.clone();
        Callback::from(move |e: KeyboardEvent| l.key(&e))
    };
    let onblur = {
        let at = l.at.clone();
        Callback::from(move |_: FocusEvent| at.set(None))
    };
    let value = value_at(&l.drawn, &l.canvas, *l.at, &props.id);
    html! {
        <figure class="chart">
            <canvas id={props.id.clone()} ref={l.canvas.clone()} role="application" aria-roledescription="chart" tabindex="0"
                aria-label={format!("{} (arrow keys read its values)", props.label)}
                aria-describedby={format!("{}-value", props.id)}
                {onpointermove} {onpointerleave} {onkeydown} {onblur} {onclick}></canvas>
            { value }
            <figcaption>
                <span>{ props.label.clone() }</span>
                <button class="small" onclick={png_download(&l.canvas, &props.id)} aria-label={format!("Download {} as PNG", props.label)}>{ "PNG" }</button>
            </figcaption>
        </figure>
    }
}

/// Sizes the canvas to the room it has (its bitmap at the screen's density) and draws, recording the draw time (for the page benchmark,
/// tests/e2e/bench.mjs) and whether it drew.
fn draw_into(canvas: &NodeRef, draw: &DrawFn, height: u32, window_w: u32, drawn: &Drawn) {
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
                *drawn.borrow_mut() = (sloscope_charts::marks::take(), css_w);
                let _ = el.set_attribute("data-marks", &drawn.borrow().0.len().to_string());
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
