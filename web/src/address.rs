//! Result files named by the page's address: `?src=PATH` or `#src=PATH`, once per file (a CI
//! artefact served next to the page opens as `report/?src=results/plan.json&src=…`). Only files
//! of the page's own origin are fetched — the content security policy forbids any other, and
//! the page says so by name rather than failing silently; nothing is uploaded.

use crate::examples::fetch_text;

/// The `src` values of the address's query and fragment, in order.
pub fn sources() -> Vec<String> {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return Vec::new();
    };
    let parts = [location.search(), location.hash()];
    parts
        .into_iter()
        .filter_map(Result::ok)
        .flat_map(|p| src_values(p.trim_start_matches(['?', '#'])))
        .collect()
}

/// The `src` values of one `a=b&c=d` string, each decoded as a form value.
fn src_values(params: &str) -> Vec<String> {
    let Ok(all) = web_sys::UrlSearchParams::new_with_str(params) else {
        return Vec::new();
    };
    all.get_all("src")
        .iter()
        .filter_map(|v| v.as_string())
        .filter(|v| !v.trim().is_empty())
        .collect()
}

/// Every named file as (name, text), fetched from the page's own origin; the first that is of
/// another origin, a folder, or cannot be fetched is named in the error.
pub async fn fetch(sources: &[String]) -> Result<Vec<(String, String)>, String> {
    let location = web_sys::window().ok_or("no window")?.location();
    let (here, origin) = (
        location.href().map_err(|_| "no address")?,
        location.origin().map_err(|_| "no origin")?,
    );
    let mut out = Vec::with_capacity(sources.len());
    for src in sources {
        let shown = sloscope_core::view::Shown::input(src).to_string();
        let url = web_sys::Url::new_with_base(src, &here)
            .map_err(|_| format!("src={shown}: not an address"))?;
        if url.origin() != origin {
            return Err(format!(
                "src={shown}: the page opens only files of its own origin ({origin}); it never \
                 fetches from another site — download the file and drop it here instead"
            ));
        }
        if url.pathname().ends_with('/') {
            return Err(format!(
                "src={shown}: a folder cannot be listed over HTTP — name each file (src=… once per file)"
            ));
        }
        let text = fetch_text(&url.href())
            .await
            .map_err(|e| format!("src={shown}: could not be fetched: {e}"))?;
        out.push((src.clone(), text));
    }
    Ok(out)
}
