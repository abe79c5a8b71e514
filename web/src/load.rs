//! The page's side of reading: its size limit and the example set. Every format decision is the
//! core's ([`sloscope_core::read_document`]).

use sloscope_core::{read_document, Document};

/// Largest file the page reads. Larger runs (a million requests is ~420 MB) are refused with
/// this figure named; `sloscope analyze` reads them natively.
pub const MAX_FILE_BYTES: usize = 256 * 1024 * 1024;

/// Parses one file; the error names the file, the JSON path and what was expected.
pub fn parse(name: &str, bytes: Vec<u8>) -> Result<Document, String> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_big(name, bytes.len()));
    }
    read_document(name, bytes).map_err(|e| e.to_string())
}

/// The refusal message for a file over the limit.
pub fn too_big(name: &str, size: usize) -> String {
    format!(
        "{name}: {:.0} MB is over the page's limit of {} MB per file; analyse it with `sloscope analyze {name}`",
        size as f64 / 1e6,
        MAX_FILE_BYTES / (1024 * 1024)
    )
}

/// The example result set: a real collection against llama-server (see
/// `scripts/update-examples.sh`), compiled in so it loads offline; the list is written by
/// `build.rs` from the files under `static/examples/`.
pub const EXAMPLES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/examples.rs"));
