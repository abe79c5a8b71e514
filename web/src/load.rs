//! The page's side of reading: a file read in chunks (a large sloscope run's inter-token gaps
//! parsed as they stream past, so the file is never held whole), the example set, and what a
//! document is called in the file list. Every format decision is the core's
//! ([`sloscope_core::read_document`], [`sloscope_core::schema::GapStream`]); this runs in the
//! reader worker, or on the page where no worker can start.

use sloscope_core::schema::GapStream;
use sloscope_core::{read_document, Document};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Bytes per chunk of a streamed read.
pub const CHUNK_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
/// Smaller files, and files that are not sloscope runs, are read whole.
pub const STREAM_MIN_BYTES: f64 = 1024.0 * 1024.0;
/// Largest file read whole (another tool's file, a plan, a record): one browser `ArrayBuffer`
/// plus its parsed copy must fit in wasm32's 4 GiB. A sloscope run file of any size is streamed
/// instead; it fails only when its parsed data outgrows those 4 GiB (the reader then says so).
pub const MAX_WHOLE_READ_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// Why a read ended without a document.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// The user cancelled it.
    Cancelled,
    /// The file is refused: the specific error.
    Failed(String),
}

/// Parses one file held in memory; the error names the file, the JSON path and what was
/// expected.
pub fn parse(name: &str, bytes: Vec<u8>) -> Result<Document, String> {
    read_document(name, bytes).map_err(|e| e.to_string())
}

/// The refusal message for a file over [`MAX_WHOLE_READ_BYTES`] that cannot be streamed.
pub fn too_big(name: &str, size: f64) -> String {
    format!(
        "{name}: {:.0} MB is over the page's limit of {:.0} MB for a file read whole (only \
         sloscope run files are streamed; the limit is wasm32's 4 GiB of memory, which must hold \
         the file and its parsed copy); analyse it with `sloscope analyze {name}`",
        size / 1e6,
        MAX_WHOLE_READ_BYTES / (1024.0 * 1024.0)
    )
}

async fn slice(blob: &web_sys::Blob, name: &str, from: f64, to: f64) -> Result<Vec<u8>, String> {
    let part = blob
        .slice_with_f64_and_f64(from, to)
        .map_err(|e| format!("{name}: cannot read: {e:?}"))?;
    let buf = JsFuture::from(part.array_buffer())
        .await
        .map_err(|e| format!("{name}: cannot read: {}", js_message(&e)))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// A thrown JS value in words.
pub fn js_message(e: &wasm_bindgen::JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Reads one file: a large sloscope run in [`CHUNK_BYTES`] pieces through a [`GapStream`]
/// (reporting bytes read, size and requests parsed after each, and stopping when `cancelled`
/// says so), anything else whole.
pub async fn read_blob(
    name: &str,
    blob: &web_sys::Blob,
    mut progress: impl FnMut(f64, f64, u64),
    cancelled: impl Fn() -> bool,
) -> Result<Document, ReadError> {
    let size = blob.size();
    if size >= STREAM_MIN_BYTES {
        let head = slice(blob, name, 0.0, 4096f64.min(size))
            .await
            .map_err(ReadError::Failed)?;
        if sloscope_core::read::json::is_run_prefix(&head) {
            let mut s = GapStream::new();
            let mut at = head.len() as f64;
            let mut ok = s.feed(&head).is_ok();
            while ok && at < size {
                if cancelled() {
                    return Err(ReadError::Cancelled);
                }
                let to = (at + CHUNK_BYTES).min(size);
                let chunk = slice(blob, name, at, to).await.map_err(ReadError::Failed)?;
                ok = s.feed(&chunk).is_ok();
                at = to;
                progress(at, size, s.requests() as u64);
            }
            if cancelled() {
                return Err(ReadError::Cancelled);
            }
            // Malformed gap arrays: the whole read below says where, with the JSON path.
            if let (true, Ok((rest, found))) = (ok, s.finish()) {
                return sloscope_core::read::json::assemble_run(name, rest, found)
                    .map_err(|e| ReadError::Failed(e.to_string()));
            }
        }
    }
    if size > MAX_WHOLE_READ_BYTES {
        return Err(ReadError::Failed(too_big(name, size)));
    }
    let bytes = slice(blob, name, 0.0, size)
        .await
        .map_err(ReadError::Failed)?;
    progress(size, size, 0);
    if cancelled() {
        return Err(ReadError::Cancelled);
    }
    parse(name, bytes).map_err(ReadError::Failed)
}

/// What the file list calls a document.
pub fn kind_label(doc: &Document) -> String {
    match doc {
        Document::Imported(runs) => format!(
            "{} result ({} run{})",
            runs.first()
                .and_then(|(_, r)| r.import.as_ref())
                .map_or("imported", |i| i.tool.as_str()),
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        ),
        Document::Aside(what) => format!("set aside: {what}"),
        doc => doc.kind().map_or("", |k| k.as_str()).to_string(),
    }
}
