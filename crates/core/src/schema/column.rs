//! The plain columns of a run's requests (integers, token sources, errors), read straight
//! from their JSON text.
//!
//! serde reads a column element by element through its generic machinery: a call or more per
//! value that the page's size-optimized build does not inline, and a `Vec` grown by doubling
//! (a copy and fresh memory at every step). These read the column's raw text instead (counted,
//! then parsed in one loop into a `Vec` of the right size), and accept exactly what serde
//! accepts for the plain forms a run is written in: `[`, integers without sign, fraction,
//! exponent or leading zero, strings without escapes, `null` where the column allows it, `,`
//! and JSON whitespace, `]`. Anything else fails here, and the document is read again by serde
//! itself, element by element, for its exact error and JSON path (see [`exact`]), or for the
//! rare form serde also accepts (`-0`). Measured in node on a 1,000,000-request run's columns
//! (the page's build, first run): 0.52-0.58 s -> 0.36-0.39 s.

use std::cell::Cell as Flag;

use serde::de::{self, Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::TokenSource;
use crate::base::blocks::BLOCK;

thread_local! {
    /// Set while a document is read again for the exact error.
    static EXACT: Flag<bool> = const { Flag::new(false) };
}

/// Runs `read` with the columns read by serde itself, element by element (the reading that
/// names the JSON path of a bad value).
pub(crate) fn exact<R>(read: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            EXACT.with(|e| e.set(self.0));
        }
    }
    let _reset = Reset(EXACT.with(|e| e.replace(true)));
    read()
}

/// One JSON value of a column, in the plain forms read here.
#[derive(Clone, Copy)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// An integer without sign, fraction, exponent or leading zero, under 20 digits.
    Int(u64),
    /// A string without escapes.
    Str(&'a str),
}

/// A value a column holds.
pub trait Value: Sized + Clone {
    /// The value of `v`, where this type holds it (else serde reads the document again).
    fn from_json(v: Json<'_>) -> Option<Self>;
}

impl Value for u64 {
    fn from_json(v: Json<'_>) -> Option<u64> {
        match v {
            Json::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl Value for Option<u64> {
    fn from_json(v: Json<'_>) -> Option<Option<u64>> {
        match v {
            Json::Null => Some(None),
            v => u64::from_json(v).map(Some),
        }
    }
}

impl Value for Option<u32> {
    fn from_json(v: Json<'_>) -> Option<Option<u32>> {
        match v {
            Json::Null => Some(None),
            v => u64::from_json(v)
                .and_then(|v| u32::try_from(v).ok())
                .map(Some),
        }
    }
}

impl Value for Option<String> {
    fn from_json(v: Json<'_>) -> Option<Option<String>> {
        match v {
            Json::Null => Some(None),
            Json::Str(s) => Some(Some(s.to_string())),
            Json::Int(_) => None,
        }
    }
}

impl Value for Option<TokenSource> {
    fn from_json(v: Json<'_>) -> Option<Option<TokenSource>> {
        match v {
            Json::Null => Some(None),
            Json::Str(s) => TokenSource::ALL
                .into_iter()
                .find(|t| t.as_str() == s)
                .map(Some),
            Json::Int(_) => None,
        }
    }
}

/// `#[serde(deserialize_with = "column::read")]`: the column from its raw text, or, while
/// [`exact`] runs, as serde reads a `Vec`. The input must be borrowable (`from_slice`,
/// `from_str`), as for the gaps.
pub fn read<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Value + Deserialize<'de>,
{
    if EXACT.with(Flag::get) {
        return Vec::<T>::deserialize(d);
    }
    let raw = <&'de RawValue>::deserialize(d)?;
    parse(raw.get())
        .ok_or_else(|| de::Error::custom("not a plain column; read again for the exact error"))
}

/// `[v, v, …]` with JSON whitespace; `None` at the first thing outside the plain form.
fn parse<T: Value>(text: &str) -> Option<Vec<T>> {
    let b = text.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return (ws(b, i + 1) == b.len()).then(Vec::new);
    }
    // Sized first, then written by index: `push` is a call per value in the page's
    // size-optimized build. A `,` inside a string only adds room, and the room is bounded by
    // the most any plain column can hold: a value per two bytes of text (`0,`), at most 8 bytes
    // of memory per byte (`Option<u64>`), so commas in a hostile string cannot ask for more.
    let size = std::mem::size_of::<T>().max(1);
    let room = (memchr::memchr_iter(b',', b).count() + 1).min(8 * b.len() / size + 1);
    let mut out = vec![T::from_json(Json::Int(0)).or_else(|| T::from_json(Json::Null))?; room];
    let mut at = (i, 0);
    loop {
        match values(text, at, out.as_mut_slice())? {
            Step::More(next) => at = next,
            Step::End(n) => {
                out.truncate(n);
                return Some(out);
            }
        }
    }
}

/// Where [`values`] stopped.
enum Step {
    /// At a value (byte offset, values written so far).
    More((usize, usize)),
    /// At the closing `]`, after this many values.
    End(usize),
}

/// Up to [`BLOCK`] values from byte `i` into `slots[n..]`, out of line (see `base::blocks`).
#[inline(never)]
fn values<T: Value>(text: &str, (mut i, mut n): (usize, usize), slots: &mut [T]) -> Option<Step> {
    let b = text.as_bytes();
    for _ in 0..BLOCK {
        let (v, next) = value(text, i)?;
        *slots.get_mut(n)? = T::from_json(v)?;
        n += 1;
        i = ws(b, next);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b']') if ws(b, i + 1) == b.len() => return Some(Step::End(n)),
            _ => return None,
        }
    }
    Some(Step::More((i, n)))
}

/// The value at `i` in a plain form, and where it ends.
#[inline(always)]
fn value(text: &str, i: usize) -> Option<(Json<'_>, usize)> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'n' => (b.get(i..i + 4) == Some(b"null")).then_some((Json::Null, i + 4)),
        b'"' => {
            let len = memchr::memchr(b'"', &b[i + 1..])?;
            let s = &b[i + 1..i + 1 + len];
            // An escape or a raw control character: serde's to read (or refuse).
            if s.iter().any(|&c| c == b'\\' || c < 0x20) {
                return None;
            }
            Some((Json::Str(text.get(i + 1..i + 1 + len)?), i + len + 2))
        }
        _ => integer(b, i).map(|(v, j)| (Json::Int(v), j)),
    }
}

/// An integer at `i`; 20 digits or more (past any time or count a run holds) are serde's.
#[inline(always)]
fn integer(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let (mut v, mut j) = (0u64, i);
    while let Some(d) = b.get(j).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        j += 1;
    }
    let digits = j - i;
    if digits == 0 || digits >= 20 || (digits > 1 && b[i] == b'0') {
        return None;
    }
    // A fraction or an exponent right after the digits is not an integer.
    if matches!(b.get(j), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((v, j))
}

#[inline(always)]
fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use proptest::prelude::Strategy;
    use serde::Deserialize;

    use crate::schema::TokenSource;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Ours {
        #[serde(deserialize_with = "super::read")]
        a: Vec<u64>,
        #[serde(deserialize_with = "super::read")]
        b: Vec<Option<u64>>,
        #[serde(deserialize_with = "super::read")]
        c: Vec<Option<u32>>,
        #[serde(deserialize_with = "super::read")]
        d: Vec<Option<String>>,
        #[serde(deserialize_with = "super::read")]
        e: Vec<Option<TokenSource>>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Serdes {
        a: Vec<u64>,
        b: Vec<Option<u64>>,
        c: Vec<Option<u32>>,
        d: Vec<Option<String>>,
        e: Vec<Option<TokenSource>>,
    }

    fn same(doc: &str) {
        let theirs = serde_json::from_str::<Serdes>(doc).map_err(|e| e.to_string());
        let fast = serde_json::from_str::<Ours>(doc);
        let exact = super::exact(|| serde_json::from_str::<Ours>(doc)).map_err(|e| e.to_string());
        let all = |o: Ours| (o.a, o.b, o.c, o.d, o.e);
        let all_t = |t: &Serdes| {
            (
                t.a.clone(),
                t.b.clone(),
                t.c.clone(),
                t.d.clone(),
                t.e.clone(),
            )
        };
        match (fast, &theirs) {
            // what the fast read accepts, serde accepts, with the same values
            (Ok(o), Ok(t)) => assert_eq!(all(o), all_t(t), "{doc}"),
            (Ok(o), Err(t)) => panic!("{doc}: read {o:?}, serde refuses: {t}"),
            (Err(_), _) => {}
        }
        // the exact read is serde's, value for value and word for word
        match (exact, theirs) {
            (Ok(o), Ok(t)) => assert_eq!(all(o), all_t(&t), "{doc}"),
            (Err(o), Err(t)) => assert_eq!(o, t, "{doc}"),
            (o, t) => panic!("{doc}: exact {o:?} against serde {t:?}"),
        }
    }

    /// A document with column `field` set to `value`, the others plain.
    fn with(field: char, value: &str) -> String {
        let mut cols = ["[1]", "[1]", "[1]", r#"["x"]"#, r#"["usage"]"#].map(String::from);
        cols[(field as u8 - b'a') as usize] = value.to_string();
        let cols: Vec<String> = ('a'..='e')
            .zip(cols)
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", cols.join(","))
    }

    #[test]
    fn reads_what_serde_reads() {
        let long: Vec<String> = (0..(super::BLOCK as u64 + 5))
            .map(|i| (i * 7919).to_string())
            .collect();
        let long = long.join(",");
        let names = [
            "\"usage\"",
            "\"events\"",
            "\"tokenizer\"",
            "\"requested\"",
            "null",
        ];
        let sources = names.repeat(1000).join(",");
        same(&format!(
            r#"{{"a":[{long}],"b":[{long},null],"c":[null,{long}],"d":[null,"a,b","",null],"e":[{sources}]}}"#
        ));
        same(r#"{"a":[],"b":[ ],"c":[ null , 1 ,2 ],"d":[],"e":[]}"#);
        same("{\"a\":[\n0,\t9999999999999999999\r],\"b\":[null],\"c\":[4294967295],\"d\":[\"é ✓\"],\"e\":[null]}");
        let fast = serde_json::from_str::<Ours>(&with('b', "[null,2]")).unwrap();
        assert_eq!(fast.b, vec![None, Some(2)]);
    }

    /// The sources' names are serde's, and `ALL` is in declaration order (the summary counts
    /// them by discriminant).
    #[test]
    fn token_source_names_are_serdes() {
        for (i, t) in TokenSource::ALL.into_iter().enumerate() {
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
            assert_eq!(t as usize, i);
        }
    }

    /// Every malformed, escaped or out-of-range form: the fast read refuses it or agrees with
    /// serde, and the exact read says what serde says.
    #[test]
    fn fails_where_serde_fails_and_as_it_fails() {
        for bad in [
            "[1,-2]",
            "[-0]",
            "[1.5]",
            "[1e3]",
            "[1E3]",
            "[01]",
            "[10000000000000000000]",
            "[18446744073709551616]",
            "[4294967296]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[\"1\"]",
            "[true]",
            "[nul]",
            "[nullx]",
            "[1",
            "{}",
            "null",
            "[[1]]",
            "[1]]",
            r#"["a\"b"]"#,
            r#"["a\u0041"]"#,
            "[\"a\tb\"]",
            r#"["usage ","USAGE","unknown"]"#,
            r#"["x"]"#,
            r#"["x""]"#,
            r#"["x"#,
            r#"[{"usage":null}]"#,
        ] {
            for field in 'a'..='e' {
                same(&with(field, bad));
            }
        }
    }

    proptest::proptest! {
        /// Columns of random tokens, valid or not: the fast read agrees with serde or leaves
        /// the column to it, and the exact read is serde's.
        #[test]
        fn random_columns_read_as_serde_reads(
            tokens in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::any::<u64>().prop_map(|v| v.to_string()),
                    proptest::prelude::any::<u32>().prop_map(|v| v.to_string()),
                    proptest::prelude::Just("null".to_string()),
                    proptest::prelude::Just("-0".to_string()),
                    proptest::prelude::Just("\"usage\"".to_string()),
                    proptest::prelude::Just("\"tokenizer\"".to_string()),
                    "[ -~]{0,6}".prop_map(|s| format!("{s:?}")),
                    "[0-9a-z.,:\\[\\]\" -]{0,4}",
                    proptest::prelude::Just(" ".to_string()),
                ],
                0..12,
            ),
            seps in proptest::collection::vec("[, \n]{0,2}", 12),
            field in proptest::sample::select(vec!['a', 'b', 'c', 'd', 'e']),
        ) {
            let mut text = String::from("[");
            for (t, s) in tokens.iter().zip(&seps) {
                text.push_str(t);
                text.push_str(s);
            }
            text.push(']');
            same(&with(field, &text));
        }
    }
}
