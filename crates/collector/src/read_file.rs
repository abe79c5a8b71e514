//! Reading a result file from disk for analysis. A large sloscope run file is read in chunks
//! and its inter-token gaps parsed as they stream past ([`GapStream`]), so the whole file is
//! never held in memory; anything else is read whole. Both go through the core's one read path
//! (the same parsing, validation and errors).

use std::io::Read;
use std::path::Path;

use sloscope_core::schema::GapStream;
use sloscope_core::{read_document, Document};

/// Bytes per read.
const CHUNK: usize = 8 << 20;
/// Smaller files are read whole: as fast, and simpler.
const STREAM_MIN_BYTES: u64 = 1 << 20;

/// Reads and parses one file; the error names the file (and, for bad content, the JSON path).
pub fn read_file(path: &Path, name: &str) -> Result<Document, String> {
    let cannot = |e: std::io::Error| format!("{name}: cannot read: {e}");
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    let len = f.metadata().map_err(cannot)?.len();
    if len >= STREAM_MIN_BYTES {
        let mut head = vec![0u8; 4096];
        f.read_exact(&mut head).map_err(cannot)?;
        if sloscope_core::read::json::is_run_prefix(&head) {
            match stream(&mut f, &head, name) {
                Ok(Ok(doc)) => return Ok(doc),
                // The content was read but is not a valid run: the error already names the
                // file and the JSON path.
                Ok(Err(e)) => return Err(e),
                // Malformed gap arrays: read the file whole for an error with its JSON path.
                Err(_) => {}
            }
        }
    }
    let bytes = std::fs::read(path).map_err(cannot)?;
    read_document(name, bytes).map_err(|e| e.to_string())
}

/// `Err` when the chunks could not be split (the plain read then says why, precisely).
fn stream(
    f: &mut std::fs::File,
    head: &[u8],
    name: &str,
) -> Result<Result<Document, String>, String> {
    let mut s = GapStream::new();
    s.feed(head)?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        s.feed(&buf[..n])?;
    }
    let (rest, found) = s.finish()?;
    Ok(sloscope_core::read::json::assemble_run(name, rest, found).map_err(|e| e.to_string()))
}
