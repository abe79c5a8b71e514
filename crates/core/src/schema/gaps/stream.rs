//! Streaming extraction of the gap arrays from a run file read in chunks.

use super::{parse_inner, skip_ws, Gaps};

/// Pulls every `"itl_us": [[…], …]` value out of a run file fed in chunks (a file read piece by
/// piece, or a browser `Blob` stream), so the whole file is never held: what remains of the
/// document (each gap value replaced by `[]`) collects in [`GapStream::finish`]'s first part,
/// the gap arrays in file order in its second. Pure: the caller does the reading.
#[derive(Debug, Default)]
pub struct GapStream {
    rest: Vec<u8>,
    found: Vec<Gaps>,
    pending: Vec<u8>,
    outer: Option<Outer>,
    /// The file's size, when known ([`GapStream::with_size`]).
    size: Option<u64>,
    /// Bytes consumed: the offset in the file of `pending`'s first byte.
    fed: u64,
}

#[derive(Debug)]
struct Outer {
    cur: Gaps,
    first: bool,
    need_comma: bool,
    /// Where the array starts in the file.
    at: u64,
    /// Room reserved for the rest of it.
    sized: bool,
}

/// Bytes of an array read before its values per byte are taken as its rate.
const RATE_AFTER_BYTES: u64 = 4 << 20;
/// Most gap values reserved ahead (1 GiB): a file with several large repeats over-reserves in
/// its first array (room given back when it ends), never beyond this.
const RESERVE_MAX_VALUES: f64 = (1u64 << 28) as f64;

const ITL_KEY: &[u8] = b"\"itl_us\"";

impl GapStream {
    /// A new stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stream of a file `size` bytes long: once a gap array has run for a few MB, room for
    /// its values to the end of the file (at the rate seen, +5 %) is reserved at once, so tens
    /// of millions of gaps grow without a copy per doubling (the page's wasm memory cannot
    /// remap a buffer in place as the native allocator does).
    pub fn with_size(size: u64) -> Self {
        GapStream {
            size: Some(size),
            ..Self::default()
        }
    }

    /// Takes the next chunk. An error says what is wrong in words (the caller can re-read the
    /// file the plain way for a JSON path).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.pending.extend_from_slice(chunk);
        let b = std::mem::take(&mut self.pending);
        let used = self.process(&b);
        self.pending = b;
        let used = used?;
        self.pending.drain(..used);
        self.fed += used as u64;
        self.reserve_ahead();
        Ok(())
    }

    fn reserve_ahead(&mut self) {
        let (Some(size), Some(o)) = (self.size, self.outer.as_mut()) else {
            return;
        };
        let seen = self.fed.saturating_sub(o.at);
        if o.sized || seen < RATE_AFTER_BYTES || o.cur.is_empty() {
            return;
        }
        o.sized = true;
        let values = o.cur.values() as f64;
        let factor = size.saturating_sub(self.fed) as f64 / seen as f64 * 1.05;
        o.cur
            .reserve_times(factor.min(RESERVE_MAX_VALUES / values.max(1.0)));
    }

    /// Requests whose gap arrays have been read so far (for a progress display).
    pub fn requests(&self) -> usize {
        let done: usize = self.found.iter().map(Gaps::len).sum();
        done + self.outer.as_ref().map_or(0, |o| o.cur.len())
    }

    /// The document without its gap values, and the gap arrays in file order.
    pub fn finish(mut self) -> Result<(Vec<u8>, Vec<Gaps>), String> {
        if self.outer.is_some() {
            return Err("the file ends inside an itl_us array (truncated?)".into());
        }
        self.rest.extend_from_slice(&self.pending);
        Ok((self.rest, self.found))
    }

    /// Backslashes right before `k` (in this chunk, then in what was already copied): an odd
    /// count means the quote at `k` is escaped, inside a string.
    fn escaped(&self, b: &[u8], k: usize) -> bool {
        let here = b[..k].iter().rev().take_while(|&&c| c == b'\\').count();
        let before = if here == k {
            self.rest.iter().rev().take_while(|&&c| c == b'\\').count()
        } else {
            0
        };
        (here + before) % 2 == 1
    }

    /// Consumes what it can of `b`; returns how many bytes.
    fn process(&mut self, b: &[u8]) -> Result<usize, String> {
        let mut i = 0;
        loop {
            let Some(o) = self.outer.as_mut() else {
                let Some(k) = memchr::memmem::find(&b[i..], ITL_KEY).map(|p| p + i) else {
                    // Keep a tail that may hold the start of a key.
                    let keep = b.len().saturating_sub(ITL_KEY.len() - 1).max(i);
                    self.rest.extend_from_slice(&b[i..keep]);
                    return Ok(keep);
                };
                let after = k + ITL_KEY.len();
                let colon = skip_ws(b, after);
                let open = skip_ws(b, colon + 1);
                if colon >= b.len() || (b[colon] == b':' && open >= b.len()) {
                    self.rest.extend_from_slice(&b[i..k]);
                    return Ok(k); // the key's value is in the next chunk
                }
                if self.escaped(b, k) || b[colon] != b':' || b[open] != b'[' {
                    // a string "itl_us", or a value the typed parse will report
                    self.rest.extend_from_slice(&b[i..after]);
                    i = after;
                    continue;
                }
                self.rest.extend_from_slice(&b[i..open]);
                self.rest.extend_from_slice(b"[]");
                i = open + 1;
                self.outer = Some(Outer {
                    cur: Gaps::new(),
                    first: true,
                    need_comma: false,
                    at: self.fed + open as u64,
                    sized: false,
                });
                continue;
            };
            let p = skip_ws(b, i);
            let Some(&c) = b.get(p) else {
                return Ok(i);
            };
            match c {
                b']' if o.need_comma || o.first => {
                    let mut done = std::mem::take(&mut o.cur);
                    done.shrink();
                    self.found.push(done);
                    self.outer = None;
                    i = p + 1;
                }
                b',' if o.need_comma => {
                    o.need_comma = false;
                    i = p + 1;
                }
                b'[' if !o.need_comma => {
                    let Some(end) = memchr::memchr(b']', &b[p..]).map(|e| e + p) else {
                        return Ok(p); // the request's gaps continue in the next chunk
                    };
                    let request = o.cur.offsets.len() - 1;
                    parse_inner(&b[p + 1..end], &mut o.cur, request)?;
                    o.first = false;
                    o.need_comma = true;
                    i = end + 1;
                }
                other => {
                    return Err(format!(
                        "itl_us array {}, request {}: expected `[`, `,` or `]`, found {:?}",
                        self.found.len(),
                        o.cur.offsets.len() - 1,
                        other as char
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two gap arrays, the first of about 6 MB, the second short: the sized stream reserves
    /// room in the first (past 4 MB) for the rest of the file, gives the excess back when it
    /// ends, and reads exactly what the unsized stream reads.
    #[test]
    fn a_stream_told_the_file_size_reserves_ahead_and_reads_the_same() {
        let request = "[12345,23456,34567,45678,56789,67890,78901,89012]";
        let mut text = String::from(r#"{"a":{"itl_us":["#);
        text.push_str(&vec![request; 120_000].join(","));
        text.push_str(r#"]},"b":{"itl_us":[[1,2],[3]]}}"#);
        let bytes = text.as_bytes();
        let read = |mut s: GapStream| {
            for c in bytes.chunks(1 << 20) {
                s.feed(c).unwrap();
            }
            s
        };
        let sized = read(GapStream::with_size(bytes.len() as u64));
        let plain = read(GapStream::new());
        let first = &sized.found[0];
        assert_eq!(first.values(), 960_000);
        assert!(first.flat.capacity() <= first.values() + first.values() / 8);
        assert_eq!(sized.finish().unwrap(), plain.finish().unwrap());
    }
}
