//! What the server says it is: its version and the models it serves, asked once per target
//! from the backends' own endpoints — llama-server's `/props` (`build_info`, `model_path`),
//! vLLM's `/version`, SGLang's `/get_server_info`, TGI's `/info` (`version`, `model_id`) — and
//! the OpenAI `/v1/models`. The run records it (`endpoint.reported`) beside the backend and
//! version it states, which come from the deployment record; the analysis holds the two to
//! each other (`backend_version_mismatch`). A server that answers none of them is said to in
//! the run's notes: its identity is then the records' word alone.

use std::time::Duration;

use sloscope_core::schema::ServerReport;

/// How long each question may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest answer read (a server's props are a few kB).
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// Models kept.
const MAX_MODELS: usize = 16;

/// The JSON `path` answers with, if it answers 2xx with JSON.
async fn ask(http: &reqwest::Client, base: &str, path: &str) -> Option<serde_json::Value> {
    let mut resp = http
        .get(format!("{base}{path}"))
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.ok()? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            return None;
        }
    }
    serde_json::from_slice(&body).ok()
}

fn text(v: &serde_json::Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(|s| s.as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A version that names one: a build that does not know its own (llama.cpp built without git
/// metadata says `b0-unknown`) gives none.
fn version(v: &serde_json::Value, key: &str) -> Option<String> {
    text(v, key).filter(|s| !s.to_lowercase().contains("unknown"))
}

/// Asks the server at `base` what it is.
pub async fn probe(http: &reqwest::Client, base: &str) -> ServerReport {
    let mut r = ServerReport::default();
    let mut models: Vec<String> = Vec::new();
    if let Some(v) = ask(http, base, "/props").await {
        r.version = version(&v, "build_info");
        r.version_from = r.version.as_ref().map(|_| "/props build_info".to_string());
        models.extend(text(&v, "model_path"));
    }
    for (path, key, model_key) in [
        ("/version", "version", None),
        ("/get_server_info", "version", Some("model_path")),
        ("/info", "version", Some("model_id")),
    ] {
        if r.version.is_some() {
            break;
        }
        if let Some(v) = ask(http, base, path).await {
            r.version = version(&v, key);
            r.version_from = r.version.as_ref().map(|_| format!("{path} {key}"));
            models.extend(model_key.and_then(|k| text(&v, k)));
        }
    }
    if let Some(v) = ask(http, base, "/v1/models").await {
        let ids = v["data"].as_array().into_iter().flatten();
        models.extend(ids.filter_map(|m| text(m, "id")));
    }
    for m in models {
        if r.models.len() < MAX_MODELS && !r.models.contains(&m) {
            r.models.push(m);
        }
    }
    r
}

/// The run's note when the server said nothing of what it is.
pub fn silence_note(r: &ServerReport) -> Option<String> {
    (r.version.is_none() && r.models.is_empty()).then(|| {
        "the server gave no version and no model (/props, /version, /get_server_info, /info, \
         /v1/models): its backend, version and model are the deployment record's word alone"
            .to_string()
    })
}
