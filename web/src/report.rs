//! Sharing: the self-contained report (one HTML file with the app and the loaded data inlined,
//! which opens offline by double-click), PNG and file downloads.

use base64::Engine as _;
use sloscope_core::view::ReportView;
use sloscope_core::Analysis;

use crate::engine::Source;
use crate::protocol::{Compared, Side};
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

/// What a downloaded report carries: by default the analysis (summaries, intervals, the chart
/// curves) and the list of files it came from; when its author asked, the raw files instead,
/// analysed again when it opens.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// Whether its author pooled reruns (its reader sees what its author saw).
    pub pool_reruns: bool,
    /// The raw files (name, text), when carried.
    pub files: Vec<(String, String)>,
    /// The analysis and the files it was computed from, when carried instead.
    pub analysis: Option<Carried>,
    /// The reader worker's script with its wasm inlined, when the raw files are carried (the
    /// report reads them again when opened).
    pub worker: Option<String>,
    /// A comparison of two collections, when that is what it carries.
    pub comparison: Option<CarriedComparison>,
}

/// What a report made in Compare mode carries: the comparison its author's page showed, as its
/// reader made it, and the files of each side.
#[derive(Debug, Clone)]
pub struct CarriedComparison {
    /// The files it was computed from (name, kind, side).
    pub listing: Vec<(String, String, Side)>,
    /// The comparison, its view and Markdown.
    pub compared: Compared,
    /// The same as the JS object read (what a report downloaded from this one carries).
    pub posted: JsValue,
}

impl Embedded {
    /// A `blob:` URL of the inlined reader worker (the report's policy allows `worker-src
    /// blob:` and nothing else).
    pub fn worker_url(&self) -> Option<String> {
        let js = self.worker.as_ref()?;
        let parts = js_sys::Array::of1(&JsValue::from_str(js));
        let bag = web_sys::BlobPropertyBag::new();
        bag.set_type("text/javascript");
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).ok()?;
        web_sys::Url::create_object_url_with_blob(&blob).ok()
    }
}

impl Embedded {
    /// What the report carries, in words.
    pub fn describe(&self) -> String {
        if let Some(c) = &self.comparison {
            let n = |s: Side| c.listing.iter().filter(|f| f.2 == s).count();
            return format!(
                "This report carries the comparison sloscope {} computed from these {} files \
                 ({} before, {} after) when it was made (cells, intervals, distributions), not \
                 their per-request data.",
                c.compared.comparison.sloscope_version,
                c.listing.len(),
                n(Side::Before),
                n(Side::After)
            );
        }
        match &self.analysis {
            Some(Carried {
                listing, analysis, ..
            }) => format!(
                "This report carries the analysis sloscope {} computed from these {} files when                  it was made (summaries, intervals, chart curves), not their per-request data; a                  report downloaded with \"raw files\" recomputes everything when opened.",
                analysis.sloscope_version,
                listing.len()
            ),
            None => format!(
                "This report carries its {} raw files; every number was recomputed when it opened.",
                self.files.len()
            ),
        }
    }
}

/// What a report made from an analysis carries: what its author's page showed, as its reader
/// made it.
#[derive(Debug, Clone)]
pub struct Carried {
    /// The files it was computed from (name, kind).
    pub listing: Vec<(String, String)>,
    /// The analysis.
    pub analysis: Analysis,
    /// Its view-model.
    pub view: ReportView,
    /// Its Markdown summary.
    pub markdown: String,
    /// The three as the JS object read (what a report downloaded from this one carries).
    pub posted: JsValue,
}

/// What this page carries, if it is a downloaded report.
pub fn embedded() -> Option<Embedded> {
    let doc = gloo::utils::document();
    let text = doc.get_element_by_id(EMBEDDED_ID)?.text_content()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    // The analysis through the browser's own JSON parser (exact decimal to binary), not
    // serde_json's faster one: the report shows the numbers its author's page computed.
    let exact = js_sys::JSON::parse(&text).ok()?;
    let posted = js_sys::Reflect::get(&exact, &JsValue::from_str("carried")).ok()?;
    let carried = |key: &str| js_sys::Reflect::get(&posted, &JsValue::from_str(key)).ok();
    let analysis = match (v.get("carried"), v["listing"].as_array()) {
        (Some(_), Some(listing)) => Some(Carried {
            listing: listing
                .iter()
                .filter_map(|f| {
                    Some((
                        f["name"].as_str()?.to_string(),
                        f["kind"].as_str()?.to_string(),
                    ))
                })
                .collect(),
            analysis: serde_wasm_bindgen::from_value::<Analysis>(carried("analysis")?).ok()?,
            view: serde_wasm_bindgen::from_value::<ReportView>(carried("view")?).ok()?,
            markdown: v["carried"]["markdown"].as_str()?.to_string(),
            posted: posted.clone(),
        }),
        _ => None,
    };
    let comparison = v.get("compared").and_then(|_| {
        let posted = js_sys::Reflect::get(&exact, &JsValue::from_str("compared")).ok()?;
        Some(CarriedComparison {
            listing: v["listing"]
                .as_array()?
                .iter()
                .filter_map(|f| {
                    let side = serde_json::from_value::<Side>(f["side"].clone()).ok()?;
                    Some((
                        f["name"].as_str()?.to_string(),
                        f["kind"].as_str()?.to_string(),
                        side,
                    ))
                })
                .collect(),
            compared: serde_wasm_bindgen::from_value::<Compared>(posted.clone()).ok()?,
            posted,
        })
    });
    Some(Embedded {
        pool_reruns: v["options"]["pool_reruns"] == serde_json::Value::Bool(true),
        files: files_of(&v),
        analysis,
        worker: v["worker"].as_str().map(str::to_string),
        comparison,
    })
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
    v["files"].is_array().then(|| files_of(&v))
}

fn files_of(v: &serde_json::Value) -> Vec<(String, String)> {
    v["files"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .filter_map(|f| {
                    Some((
                        f["name"].as_str()?.to_string(),
                        f["text"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
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

/// The reader worker as one script with its wasm inlined: reused from this page when it is a
/// report that carries one, else read from the files Trunk built beside the page.
async fn worker_script() -> Result<String, String> {
    if let Some(w) = embedded().and_then(|e| e.worker) {
        return Ok(w);
    }
    let glue = String::from_utf8_lossy(&fetch_bytes("./sloscope-worker.js").await?).into_owned();
    let wasm = fetch_bytes("./sloscope-worker_bg.wasm").await?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(wasm);
    Ok(format!(
        "{glue}\nwasm_bindgen({{ module_or_path: Uint8Array.from(atob(\"{b64}\"), c => c.charCodeAt(0)) }});\n"
    ))
}

/// Builds the self-contained report HTML: the analysis and the list of files it came from, or
/// (`sources` given) the raw files, which the report analyses again when opened.
pub async fn build(
    posted: &JsValue,
    listing: &[(String, String)],
    sources: Option<Vec<(String, Source)>>,
    title: &str,
    pool_reruns: bool,
) -> Result<String, String> {
    let (script, style) = assets().await?;
    let options = serde_json::json!({"pool_reruns": pool_reruns});
    let data = match sources {
        Some(sources) => {
            let mut files = Vec::new();
            for (name, s) in sources {
                let text = s.text().await.map_err(|e| format!("{name}: {e}"))?;
                files.push(serde_json::json!({"name": name, "text": text}));
            }
            serde_json::json!({"files": files, "options": options, "worker": worker_script().await?})
                .to_string()
        }
        None => {
            // Written out by the browser, as the reader posted it: every number as the
            // shortest text that reads back to it.
            let carried = js_sys::JSON::stringify(posted)
                .ok()
                .and_then(|s| s.as_string())
                .ok_or("the analysis could not be written out")?;
            let listing: Vec<serde_json::Value> = listing
                .iter()
                .map(|(n, k)| serde_json::json!({"name": n, "kind": k}))
                .collect();
            format!(
                "{{\"carried\":{carried},\"listing\":{},\"options\":{options}}}",
                serde_json::Value::Array(listing)
            )
        }
    };
    Ok(page(&data, &script, &style, title))
}

/// Builds the self-contained report of a comparison: the comparison as the reader posted it
/// and the files of each side it came from.
pub async fn build_compared(
    posted: &JsValue,
    listing: &[(String, String, Side)],
    title: &str,
    pool_reruns: bool,
) -> Result<String, String> {
    let (script, style) = assets().await?;
    let carried = js_sys::JSON::stringify(posted)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or("the comparison could not be written out")?;
    let listing: Vec<serde_json::Value> = listing
        .iter()
        .map(|(n, k, s)| serde_json::json!({"name": n, "kind": k, "side": s}))
        .collect();
    let data = format!(
        "{{\"compared\":{carried},\"listing\":{},\"options\":{}}}",
        serde_json::Value::Array(listing),
        serde_json::json!({"pool_reruns": pool_reruns})
    );
    Ok(page(&data, &script, &style, title))
}

/// The report's HTML around its data, the app's script and its style.
fn page(data: &str, script: &str, style: &str, title: &str) -> String {
    let csp = "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'";
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\"><title>{title}</title>\
         <style id=\"{STYLE_ID}\">{}</style></head><body>\
         <script type=\"application/json\" id=\"{EMBEDDED_ID}\">{}</script>\
         <script type=\"module\" id=\"{APP_SCRIPT_ID}\">{}</script></body></html>\n",
        style.replace("</", "<\\/"),
        script_safe(data),
        script.replace("</", "<\\/"),
    )
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
