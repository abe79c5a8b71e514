//! The example result set: a real collection against llama-server (see
//! `scripts/update-examples.sh`). Trunk copies `static/examples/` next to the page; the page
//! fetches the files from there when Load example is pressed, so they cost nothing until then
//! (a downloaded report has no Load example).

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The files, by their path under `examples/`, in name order (written by `build.rs` from the
/// files under `static/examples/`).
pub const FILES: &[&str] = include!(concat!(env!("OUT_DIR"), "/examples.rs"));

/// Every file of the set as (name, text), each named `examples/<path>`; the first that cannot
/// be fetched is named in the error.
pub async fn fetch() -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(FILES.len());
    for path in FILES {
        let name = format!("examples/{path}");
        let text = fetch_text(&name).await.map_err(|e| {
            format!(
                "Could not load the example set: {name}: {e} (the page fetches it from the \
                 examples/ folder beside it, as `trunk build` writes it)"
            )
        })?;
        out.push((name, text));
    }
    Ok(out)
}

pub(crate) async fn fetch_text(url: &str) -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| js_message(&e))?;
    let response: web_sys::Response = response.dyn_into().map_err(|e| js_message(&e))?;
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let text = response.text().map_err(|e| js_message(&e))?;
    let text = JsFuture::from(text).await.map_err(|e| js_message(&e))?;
    text.as_string().ok_or_else(|| "not text".to_string())
}

fn js_message(e: &wasm_bindgen::JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser refused the request".to_string())
}
