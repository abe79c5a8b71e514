//! The page's side of reading: a file's bytes moved from the browser into the core's one
//! reader ([`sloscope_core::input`], which decides how a file is read, as it does for the
//! CLI), the example set, and what a document is called in the file list. This runs in the
//! reader worker, or on the page where no worker can start.

use sloscope_core::input::{read_document_with, Importer, LoadError, LoadErrorKind};
use sloscope_core::input::{Next, Reader};
use sloscope_core::Document;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Bytes per chunk read from a file's byte stream: small enough that the copy into the reader
/// and its parse work in the processor's cache (1M-request run, drop → verdict: 1.85-2.31 s
/// against 2.23-2.67 s with 8 MB chunks, alternating runs).
pub const CHUNK_BYTES: f64 = 1024.0 * 1024.0;
/// Bytes per slice where a file has no byte stream (each slice is a new browser buffer).
pub const SLICE_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
/// Slices the browser reads ahead of the one being parsed.
const READ_AHEAD: usize = 3;
/// Bytes read between two progress reports.
const PROGRESS_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
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
    /// Another tool's result file, and this reader has no importer: the one that has must
    /// read it.
    NoImporter(String),
}

impl From<LoadError> for ReadError {
    fn from(e: LoadError) -> Self {
        match e.kind {
            LoadErrorKind::NoImporter => ReadError::NoImporter(e.to_string()),
            _ => ReadError::Failed(e.to_string()),
        }
    }
}

/// Parses one file held in memory; the error names the file, the JSON path and what was
/// expected.
pub fn parse(
    name: &str,
    bytes: Vec<u8>,
    importer: Option<Importer>,
) -> Result<Document, ReadError> {
    Ok(read_document_with(name, bytes, importer)?)
}

/// Where a read's bytes come from, one chunk at a time.
///
/// The file's byte stream read into one buffer that is filled again and again is the quickest
/// way a browser hands a file over (Chromium, 1M-request run of 423 MB, a fresh page, the bytes
/// only: 0.45-0.70 s against 0.73-1.10 s for 8 MB slices read three ahead — each slice is a new
/// `ArrayBuffer` whose memory the worker must fault in). Where a blob's stream is no byte stream
/// (`ReadableStreamBYOBReader` missing or refusing it), slices are read ahead instead.
enum Chunks {
    Stream {
        reader: web_sys::ReadableStreamByobReader,
        /// The buffer the stream fills; each read hands it back (it is transferred).
        buf: Option<js_sys::ArrayBuffer>,
        done: bool,
    },
    Slices {
        blob: web_sys::Blob,
        /// Bytes requested so far.
        queued: f64,
        reads: std::collections::VecDeque<JsFuture>,
    },
}

impl Chunks {
    fn open(blob: &web_sys::Blob) -> Self {
        match web_sys::ReadableStreamByobReader::new(&blob.stream()) {
            Ok(reader) => Self::Stream {
                reader,
                buf: Some(js_sys::ArrayBuffer::new(CHUNK_BYTES as u32)),
                done: false,
            },
            Err(_) => Self::Slices {
                blob: blob.clone(),
                queued: 0.0,
                reads: std::collections::VecDeque::new(),
            },
        }
    }

    /// The next chunk, copied into `into` (its memory used again); `false` at the end.
    async fn next(&mut self, name: &str, into: &mut Vec<u8>) -> Result<bool, String> {
        let cannot = |e: wasm_bindgen::JsValue| format!("{name}: cannot read: {}", js_message(&e));
        let (buf, len) = match self {
            Self::Stream { reader, buf, done } => fill(reader, buf, done).await.map_err(cannot)?,
            Self::Slices {
                blob,
                queued,
                reads,
            } => {
                let size = blob.size();
                while reads.len() <= READ_AHEAD && *queued < size {
                    let to = (*queued + SLICE_BYTES).min(size);
                    let part = blob.slice_with_f64_and_f64(*queued, to).map_err(cannot)?;
                    reads.push_back(JsFuture::from(part.array_buffer()));
                    *queued = to;
                }
                let Some(read) = reads.pop_front() else {
                    return Ok(false);
                };
                let buf: js_sys::ArrayBuffer = read.await.map_err(cannot)?.unchecked_into();
                let len = buf.byte_length();
                (buf, len)
            }
        };
        into.resize(len as usize, 0);
        js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, 0, len).copy_to(into);
        Ok(len > 0)
    }
}

impl Drop for Chunks {
    /// A read left early (cancelled, refused) tells the browser to stop reading.
    fn drop(&mut self) {
        if let Self::Stream {
            reader,
            done: false,
            ..
        } = self
        {
            let _ = reader.cancel();
        }
    }
}

/// Fills the stream's buffer as far as the stream goes: the buffer, back from the stream, and
/// how many bytes it holds.
async fn fill(
    reader: &web_sys::ReadableStreamByobReader,
    slot: &mut Option<js_sys::ArrayBuffer>,
    done: &mut bool,
) -> Result<(js_sys::ArrayBuffer, u32), wasm_bindgen::JsValue> {
    let mut buf = slot.take().ok_or("the read buffer was lost")?;
    let (cap, mut len) = (buf.byte_length(), 0);
    while len < cap && !*done {
        let view = js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, len, cap - len);
        let read = JsFuture::from(reader.read_with_array_buffer_view(&view)).await?;
        *done = js_sys::Reflect::get(&read, &"done".into())?.is_truthy();
        let value = js_sys::Reflect::get(&read, &"value".into())?;
        if let Some(got) = value.dyn_ref::<js_sys::Uint8Array>() {
            buf = got.buffer();
            len += got.byte_length();
        }
    }
    *slot = Some(buf.clone());
    Ok((buf, len))
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
/// [`MAX_WHOLE_READ_BYTES`]): a chunk at a time (see [`Chunks`]), bytes read, size and
/// requests parsed reported every [`PROGRESS_BYTES`] and at the end, stopping when `cancelled`
/// says so (asked before each chunk).
pub async fn read_blob(
    (name, importer): (&str, Option<Importer>),
    blob: &web_sys::Blob,
    mut progress: impl FnMut(f64, f64, u64),
    cancelled: impl Fn() -> bool,
) -> Result<Document, ReadError> {
    let size = blob.size();
    let failed = ReadError::from;
    let mut reader = Reader::with_importer(name, size as u64, Some(MAX_WHOLE_READ_BYTES), importer);
    // At most two passes: the reader asks for the bytes again, whole, only from a stream.
    let mut chunk = Vec::new();
    loop {
        let mut chunks = Chunks::open(blob);
        let (mut at, mut told, mut again) = (0.0, 0.0, false);
        while !again {
            if cancelled() {
                return Err(ReadError::Cancelled);
            }
            if !chunks
                .next(name, &mut chunk)
                .await
                .map_err(ReadError::Failed)?
            {
                break;
            }
            at += chunk.len() as f64;
            again = reader.feed(&chunk).map_err(failed)? == Next::Restart;
            if at - told >= PROGRESS_BYTES || at >= size {
                told = at;
                progress(at, size, reader.requests() as u64);
            }
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
