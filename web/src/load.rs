//! The page's side of reading: a file's bytes moved from the browser into the core's one
//! reader ([`sloscope_core::read::reader`], which decides how a file is read, as it does for the
//! CLI), the example set, and what a document is called in the file list. This runs in the
//! reader worker, or on the page where no worker can start.

use sloscope_core::read::error::LoadError;
use sloscope_core::read::reader::{Next, Reader};
use sloscope_core::{read_document, Document};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Bytes per chunk read.
pub const CHUNK_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
/// Chunks the browser reads ahead of the one being parsed.
const READ_AHEAD: usize = 3;
/// Largest file read whole (another tool's file, a plan, a record): one browser `ArrayBuffer`
/// plus its parsed copy must fit in wasm32's 4 GiB. A sloscope run file of any size is streamed
/// instead; it fails only when its parsed data outgrows those 4 GiB (the reader then says so).
pub const MAX_WHOLE_READ_BYTES: u64 = 1 << 30;

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

/// Starts reading bytes `from..to` of `blob`: the browser reads while the reader parses what
/// it already has; [`bytes`] waits for them.
fn request(blob: &web_sys::Blob, name: &str, from: f64, to: f64) -> Result<JsFuture, String> {
    let part = blob
        .slice_with_f64_and_f64(from, to)
        .map_err(|e| format!("{name}: cannot read: {e:?}"))?;
    Ok(JsFuture::from(part.array_buffer()))
}

/// The bytes of a [`request`], in wasm memory.
async fn bytes(read: JsFuture, name: &str) -> Result<Vec<u8>, String> {
    let buf = read
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

/// Reads one file through the core's [`Reader`], which decides how (a large sloscope run in
/// chunks, its gaps parsed as they stream past; anything else whole, up to
/// [`MAX_WHOLE_READ_BYTES`]): [`CHUNK_BYTES`] at a time, the next [`READ_AHEAD`] chunks read
/// by the browser while this one is parsed, bytes read, size and requests parsed reported after each, stopping
/// when `cancelled` says so.
pub async fn read_blob(
    name: &str,
    blob: &web_sys::Blob,
    mut progress: impl FnMut(f64, f64, u64),
    cancelled: impl Fn() -> bool,
) -> Result<Document, ReadError> {
    let size = blob.size();
    let failed = |e: LoadError| ReadError::Failed(e.to_string());
    let mut reader = Reader::new(name, size as u64, Some(MAX_WHOLE_READ_BYTES));
    // At most two passes: the reader asks for the bytes again, whole, only from a stream.
    loop {
        let (mut at, mut queued) = (0.0, 0.0);
        let mut reads = std::collections::VecDeque::new();
        let mut again = false;
        while at < size && !again {
            if cancelled() {
                return Err(ReadError::Cancelled);
            }
            while reads.len() <= READ_AHEAD && queued < size {
                let to = (queued + CHUNK_BYTES).min(size);
                reads.push_back(request(blob, name, queued, to).map_err(ReadError::Failed)?);
                queued = to;
            }
            let Some(read) = reads.pop_front() else {
                break;
            };
            let chunk = bytes(read, name).await.map_err(ReadError::Failed)?;
            at += chunk.len() as f64;
            again = reader.feed(&chunk).map_err(failed)? == Next::Restart;
            progress(at, size, reader.requests() as u64);
        }
        if cancelled() {
            return Err(ReadError::Cancelled);
        }
        if again {
            continue;
        }
        if let Some(doc) = reader.end().map_err(failed)? {
            return Ok(doc);
        }
    }
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
