//! Sharing: the self-contained report (one HTML file with the app and the loaded data inlined,
//! which opens offline by double-click), PNG and file downloads.

use base64::Engine;
use sloscope_core::{Document, LoadedFile};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Id of the element that carries the data in a downloaded report.
pub const EMBEDDED_ID: &str = "sloscope-embedded";
/// Id of the inline module script of a downloaded report.
pub const APP_SCRIPT_ID: &str = "sloscope-app";
/// Id of the inline style of a downloaded report.
pub const STYLE_ID: &str = "sloscope-css";

/// Id of the element with files to load at start (the demo's local server puts the results
/// there); unlike a report, the page stays a normal page.
pub const PRELOAD_ID: &str = "sloscope-preload";

/// Files carried by a downloaded report, if this page is one.
pub fn embedded_files() -> Option<Vec<(String, String)>> {
    files_in(EMBEDDED_ID)
}

/// Whether a downloaded report was made with reruns pooled (its reader sees what its author saw).
pub fn embedded_pool_reruns() -> bool {
    let doc = gloo::utils::document();
    doc.get_element_by_id(EMBEDDED_ID)
        .and_then(|el| el.text_content())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["options"]["pool_reruns"] == serde_json::Value::Bool(true))
}

/// Files the server preloaded into the page, if any.
pub fn preloaded_files() -> Option<Vec<(String, String)>> {
    files_in(PRELOAD_ID)
}

fn files_in(id: &str) -> Option<Vec<(String, String)>> {
    let doc = gloo::utils::document();
    let el = doc.get_element_by_id(id)?;
    let text = el.text_content()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(
        v["files"]
            .as_array()?
            .iter()
            .filter_map(|f| {
                Some((
                    f["name"].as_str()?.to_string(),
                    f["text"].as_str()?.to_string(),
                ))
            })
            .collect(),
    )
}

/// The files a report carries: each document as sloscope JSON; another tool's file as the runs
/// imported from it (one entry each), so the report reads back without the original.
fn embedded(f: &LoadedFile) -> Vec<serde_json::Value> {
    match &f.doc {
        Document::Imported(runs) => runs
            .iter()
            .map(|(name, run)| {
                serde_json::json!({"name": name, "text": serde_json::to_string(run).unwrap_or_default()})
            })
            .collect(),
        d => vec![serde_json::json!({"name": f.name, "text": doc_json(d)})],
    }
}

fn doc_json(d: &Document) -> String {
    let r = match d {
        Document::QualityGate(x) => serde_json::to_string(x),
        Document::FloatBaseline(x) => serde_json::to_string(x),
        Document::Deployment(x) => serde_json::to_string(x),
        Document::Plan(x) => serde_json::to_string(x),
        Document::Run(x) => serde_json::to_string(x),
        Document::Imported(runs) => {
            serde_json::to_string(&runs.iter().map(|r| &r.1).collect::<Vec<_>>())
        }
    };
    r.unwrap_or_default()
}

/// JSON text safe inside `<script>`: every `<` (only ever inside a JSON string) is written
/// `\u003c`, the same string in JSON and in JavaScript, so no `</script>` or `<!--` in the data
/// can end the element or change how the HTML parser reads it.
/// (The app's own JavaScript only needs `</` written `<\/`; it holds no data.)
fn script_safe(s: &str) -> String {
    s.replace('<', "\\u003c")
}

async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let w = gloo::utils::window();
    let resp: web_sys::Response = JsFuture::from(w.fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {e:?}"))?
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?)
        .await
        .map_err(|e| format!("{url}: {e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

fn attr_of(selector: &str, attr: &str) -> Option<String> {
    gloo::utils::document()
        .query_selector(selector)
        .ok()??
        .get_attribute(attr)
}

/// The app's script and style for a report: reused from this page when it is itself a report,
/// else read from the files Trunk built (same origin).
async fn assets() -> Result<(String, String), String> {
    let doc = gloo::utils::document();
    let style = match doc
        .get_element_by_id(STYLE_ID)
        .and_then(|e| e.text_content())
    {
        Some(s) => s,
        None => match attr_of("link[rel=stylesheet]", "href") {
            Some(href) => String::from_utf8_lossy(&fetch_bytes(&href).await?).into_owned(),
            None => String::new(),
        },
    };
    if let Some(script) = doc
        .get_element_by_id(APP_SCRIPT_ID)
        .and_then(|e| e.text_content())
    {
        return Ok((script, style));
    }
    let js = attr_of("link[rel=modulepreload]", "href")
        .ok_or("no module preload link: cannot find the app's script")?;
    let wasm = attr_of("link[rel=preload][as=fetch]", "href")
        .ok_or("no wasm preload link: cannot find the app's wasm")?;
    let glue = String::from_utf8_lossy(&fetch_bytes(&js).await?).into_owned();
    let bytes = fetch_bytes(&wasm).await?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let script = format!(
        "{glue}\nconst __sloscope_wasm = Uint8Array.from(atob(\"{b64}\"), c => c.charCodeAt(0));\nawait __wbg_init({{ module_or_path: __sloscope_wasm }});\n"
    );
    Ok((script, style))
}

/// Builds the self-contained report HTML.
pub async fn build(
    files: &[std::rc::Rc<LoadedFile>],
    title: &str,
    pool_reruns: bool,
) -> Result<String, String> {
    let (script, style) = assets().await?;
    let data = serde_json::json!({
        "files": files.iter().flat_map(|f| embedded(f)).collect::<Vec<_>>(),
        "options": {"pool_reruns": pool_reruns},
    });
    let csp = "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'";
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\"><title>{title}</title>\
         <style id=\"{STYLE_ID}\">{}</style></head><body>\
         <script type=\"application/json\" id=\"{EMBEDDED_ID}\">{}</script>\
         <script type=\"module\" id=\"{APP_SCRIPT_ID}\">{}</script></body></html>\n",
        style.replace("</", "<\\/"),
        script_safe(&data.to_string()),
        script.replace("</", "<\\/"),
    ))
}

/// Starts a download of `url` as `name`.
pub fn download_url(url: &str, name: &str) {
    let doc = gloo::utils::document();
    if let Ok(a) = doc.create_element("a") {
        if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
            a.set_href(url);
            a.set_download(name);
            let _ = gloo::utils::body().append_child(&a);
            a.click();
            a.remove();
        }
    }
}

/// Starts a download of `text` as `name`.
pub fn download_text(text: &str, name: &str, mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag)
        .map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    download_url(&url, name);
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}
