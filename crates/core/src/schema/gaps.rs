//! Inter-token gaps: nested arrays in JSON (`[[12000, 11800], [..]]`), one flat buffer in memory.
//!
//! A run of a million requests holds tens of millions of gaps; a `Vec<Vec<u32>>` would cost a
//! heap allocation per request. The flat layout also lets the statistics see all gaps at once.

use serde::de;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

mod stream;
pub use stream::GapStream;

/// Per-request gap lists in one buffer: request `i` owns `flat[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gaps {
    flat: Vec<u32>,
    offsets: Vec<usize>,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            flat: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl Gaps {
    /// An empty list of requests.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gap values held, over every request.
    pub(crate) fn values(&self) -> usize {
        self.flat.len()
    }

    /// Room for `factor` times the values and requests held so far, more.
    pub(crate) fn reserve_times(&mut self, factor: f64) {
        self.flat
            .reserve((self.flat.len() as f64 * factor) as usize);
        self.offsets.reserve((self.len() as f64 * factor) as usize);
    }

    /// Gives back room reserved beyond an eighth over what is held.
    pub(crate) fn shrink(&mut self) {
        if self.flat.capacity() > self.flat.len() + self.flat.len() / 8 {
            self.flat.shrink_to_fit();
            self.offsets.shrink_to_fit();
        }
    }

    /// Appends one request's gaps.
    pub fn push(&mut self, gaps: &[u32]) {
        self.flat.extend_from_slice(gaps);
        self.offsets.push(self.flat.len());
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when no request is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gaps of request `i` (empty when out of range).
    pub fn get(&self, i: usize) -> &[u32] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.flat[a..b],
            _ => &[],
        }
    }

    /// Every gap of every request, in request order.
    pub fn all(&self) -> &[u32] {
        &self.flat
    }

    /// Iterates over the requests' gap lists.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.offsets.windows(2).map(|w| &self.flat[w[0]..w[1]])
    }
}

impl Serialize for Gaps {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for gaps in self.iter() {
            seq.serialize_element(gaps)?;
        }
        seq.end()
    }
}

impl Gaps {
    /// Replaces the contents (used when the gaps were parsed out of the text ahead of serde).
    pub(crate) fn fill(&mut self, other: Gaps) {
        *self = other;
    }
}

impl<'de> Deserialize<'de> for Gaps {
    /// Borrows the raw JSON text of the whole array and parses it with [`parse_nested`], several
    /// times faster than element-by-element serde for tens of millions of integers. The input
    /// must be borrowable (`serde_json::from_slice` / `from_str`, which `parse_document` uses).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&'de serde_json::value::RawValue>::deserialize(deserializer)?;
        parse_nested(raw.get().as_bytes()).map_err(de::Error::custom)
    }
}

/// Parses `[[u32, …], …]` (JSON whitespace allowed) into flat gaps; nothing may follow.
pub fn parse_nested(b: &[u8]) -> Result<Gaps, String> {
    let (gaps, used) = parse_nested_prefix(b)?;
    if b[used..]
        .iter()
        .any(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
    {
        return Err(format!(
            "trailing characters after the array at byte {used} of itl_us"
        ));
    }
    Ok(gaps)
}

// The hot loop of reading a large run file (every inter-token gap); kept in one function
// (past 80 lines) so the compiler keeps the parse state in registers.
/// Parses one `[[u32, …], …]` value at the start of `b` (after optional whitespace) and returns
/// it with the number of bytes it took. The hot loop of reading a large run file.
pub fn parse_nested_prefix(b: &[u8]) -> Result<(Gaps, usize), String> {
    let mut gaps = Gaps::new();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return Err(err_at(
            b,
            i,
            "expected an array with one array of gap microseconds per request",
        ));
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Ok((gaps, i + 1));
    }
    gaps.flat.reserve(b.len() / 6);
    loop {
        let request = gaps.offsets.len() - 1;
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'[') {
            return Err(err_at(
                b,
                i,
                &format!("request {request}: expected an array of integer microseconds"),
            ));
        }
        i = skip_ws(b, i + 1);
        if b.get(i) == Some(&b']') {
            i += 1;
        } else {
            let first = gaps.flat.len();
            loop {
                let start = i;
                let (v, digits) = match read_digits8(b, i) {
                    Some((v, n)) if n < 8 => (v, n),
                    _ => read_digits_slow(b, i),
                };
                i += digits;
                if digits == 0
                    || digits > 10
                    || v > u32::MAX as u64
                    || (digits > 1 && b[start] == b'0')
                {
                    let gap = gaps.flat.len() - first;
                    return Err(number_error(b, start, request, gap));
                }
                gaps.flat.push(v as u32);
                match b.get(i) {
                    Some(b',') => i += 1,
                    Some(b']') => {
                        i += 1;
                        break;
                    }
                    _ => {
                        i = skip_ws(b, i);
                        match b.get(i) {
                            Some(b',') => i += 1,
                            Some(b']') => {
                                i += 1;
                                break;
                            }
                            _ => {
                                let gap = gaps.flat.len() - first - 1;
                                return Err(number_error(b, start, request, gap));
                            }
                        }
                    }
                }
                if matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                    i = skip_ws(b, i);
                }
            }
        }
        gaps.offsets.push(gaps.flat.len());
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') => return Ok((gaps, i + 1)),
            _ => return Err(err_at(b, i, "expected `,` or `]` between requests")),
        }
    }
}

/// SWAR: the leading decimal digits among the 8 bytes at `i` and their count (8 means "maybe
/// more"). `None` near the end of the buffer.
#[inline(always)]
fn read_digits8(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let chunk: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    let x = u64::from_le_bytes(chunk);
    let sub = x.wrapping_sub(0x3030_3030_3030_3030);
    let non_digit = (sub.wrapping_add(0x7676_7676_7676_7676) | sub) & 0x8080_8080_8080_8080;
    let n = (non_digit.trailing_zeros() / 8) as usize;
    if n == 0 {
        return Some((0, 0));
    }
    // Right-align the n digits; the zero bytes shifted in read as leading zeros.
    let mut v = (sub & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n as u32 % 8) % 64);
    if n == 8 {
        v = sub & 0x0F0F_0F0F_0F0F_0F0F;
    }
    v = (v.wrapping_mul(10)).wrapping_add(v >> 8) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(100)).wrapping_add(v >> 16) & 0x0000_FFFF_0000_FFFF;
    v = (v.wrapping_mul(10000)).wrapping_add(v >> 32) & 0xFFFF_FFFF;
    Some((v, n))
}

/// Byte-by-byte digits (long numbers and the buffer's tail): value and count, at most 11 read.
fn read_digits_slow(b: &[u8], mut i: usize) -> (u64, usize) {
    let start = i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 || i - start > 10 {
            break;
        }
        v = v * 10 + d as u64;
        i += 1;
    }
    (v, i - start)
}

#[inline(always)]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

fn err_at(b: &[u8], i: usize, msg: &str) -> String {
    let found = match b.get(i) {
        Some(&c) => format!("found {:?}", c as char),
        None => "found the end".to_string(),
    };
    format!("{msg}; {found} at byte {i} of itl_us")
}

fn number_error(b: &[u8], start: usize, request: usize, gap: usize) -> String {
    let end = (start + 12).min(b.len());
    let text = String::from_utf8_lossy(&b[start..end]);
    let token: String = text
        .chars()
        .take_while(|c| !matches!(c, ',' | ']' | ' ' | '\n'))
        .collect();
    format!(
        "request {request}, gap {gap}: {token:?} is not a gap; expected a non-negative integer of \
         microseconds that fits in u32 (no sign, fraction, exponent or leading zero)"
    )
}

/// The numbers of one request's gap array (between its brackets) onto `g`.
// Out of line: called once per request, it is what the page's engine optimizes and swaps in
// early; inlined into the per-chunk loop it ran in baseline code for half the file (see
// `base::blocks`).
#[inline(never)]
fn parse_inner(s: &[u8], g: &mut Gaps, request: usize) -> Result<(), String> {
    // Values go through a small block copied into `flat` when full: one call per 64 values
    // instead of a `push` per value (which a size-optimized build such as the page's reader
    // does not inline: a third of its parse time).
    let (mut block, mut n, mut count) = ([0u32; 64], 0, 0);
    let mut i = skip_ws(s, 0);
    while i < s.len() {
        let start = i;
        let (v, digits) = match read_digits8(s, i) {
            Some((v, n)) if n < 8 => (v, n),
            _ => read_digits_slow(s, i),
        };
        i += digits;
        if digits == 0 || digits > 10 || v > u32::MAX as u64 || (digits > 1 && s[start] == b'0') {
            return Err(number_error(s, start, request, count));
        }
        block[n] = v as u32;
        (n, count) = (n + 1, count + 1);
        if n == block.len() {
            g.flat.extend_from_slice(&block);
            n = 0;
        }
        i = skip_ws(s, i);
        match s.get(i) {
            None => break,
            Some(b',') => i = skip_ws(s, i + 1),
            Some(_) => return Err(number_error(s, start, request, count - 1)),
        }
        if i >= s.len() {
            return Err(format!("request {request}: a `,` before `]` in itl_us"));
        }
    }
    g.flat.extend_from_slice(&block[..n]);
    g.offsets.push(g.flat.len());
    Ok(())
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Gaps {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Gaps".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Per request, the gaps between consecutive content events after the first, in integer microseconds.",
            "type": "array",
            "items": {
                "type": "array",
                "items": { "type": "integer", "minimum": 0, "maximum": 4294967295u64 }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_nested_arrays() {
        let mut g = Gaps::new();
        g.push(&[1, 2, 3]);
        g.push(&[]);
        g.push(&[7]);
        let s = serde_json::to_string(&g).unwrap();
        assert_eq!(s, "[[1,2,3],[],[7]]");
        let back: Gaps = serde_json::from_str(&s).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.get(0), &[1, 2, 3]);
        assert_eq!(back.get(1), &[] as &[u32]);
        assert_eq!(back.get(2), &[7]);
        assert_eq!(back.get(3), &[] as &[u32]);
        assert_eq!(back.all(), &[1, 2, 3, 7]);
    }

    #[test]
    fn rejects_negative_and_fractional_gaps() {
        for bad in [
            "[[1,-2]]",
            "[[1.5]]",
            "[1]",
            "[[1e3]]",
            "[[01]]",
            "[[4294967296]]",
            "[[1,]]",
            "[[1] [2]]",
            "[[null]]",
        ] {
            assert!(serde_json::from_str::<Gaps>(bad).is_err(), "{bad}");
        }
        let e = parse_nested(b"[[1],[2,-3]]").unwrap_err();
        assert!(e.contains("request 1, gap 1: \"-3\" is not a gap"), "{e}");
    }

    #[test]
    fn swar_digits_match_the_slow_path() {
        for v in [
            0u64, 7, 10, 99, 123, 4096, 65535, 1234567, 12345678, 123456789, 4294967295,
        ] {
            for tail in [",", "]", " ,", "]]]]]]]]]]]"] {
                let text = format!("{v}{tail}");
                let b = text.as_bytes();
                let fast = read_digits8(b, 0).filter(|x| x.1 < 8);
                let slow = read_digits_slow(b, 0);
                if let Some(f) = fast {
                    assert_eq!(f, slow, "{text}");
                }
                assert_eq!(slow.0, v);
            }
        }
        let g =
            parse_nested(b"[[1,22,333,4444,55555,666666,7777777,88888888,999999999,4294967295]]")
                .unwrap();
        assert_eq!(
            g.all(),
            &[1, 22, 333, 4444, 55555, 666666, 7777777, 88888888, 999999999, 4294967295]
        );
    }

    #[test]
    fn accepts_whitespace_and_empty() {
        let g: Gaps = serde_json::from_str(" [ [ 1 ,2 ] ,\n [ ] ] ").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g.get(0), &[1, 2]);
        let g: Gaps = serde_json::from_str("[]").unwrap();
        assert!(g.is_empty());
        assert_eq!(
            serde_json::from_str::<Gaps>("[[4294967295]]")
                .unwrap()
                .all(),
            &[u32::MAX]
        );
    }
}
