//! The JSON path at a byte offset of a document: where serde stopped when a typed reading
//! failed. serde_json puts the line and column it had read to on every error (after the bad
//! value, after the key it refused, after the `}` of an object that misses a field); walking
//! the text up to there names the value being read — without a second instance of every
//! `Deserialize` implementation that a path-tracking deserializer would compile in.

/// One open container, innermost last.
enum Frame {
    /// An object: the key being read or whose value is being read (`None` before the first).
    Object(Option<String>),
    /// An array: the index of the element being read (`None` before the first).
    Array(Option<usize>),
}

/// The path (`$`, `$.requests[3].ttft_ms`) of the value being read at byte `offset` of
/// `bytes`. Tolerant of malformed text: it names the innermost container it can.
pub(crate) fn path_at(bytes: &[u8], offset: usize) -> String {
    let end = offset.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        let b = bytes[i];
        i += 1;
        match b {
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(None)),
            b'}' | b']' => {
                stack.pop();
            }
            b'"' => {
                let (text, next) = string_at(bytes, i, end);
                // A string cut by the end of what was read (a truncated file) is the value
                // being read, not a key: the key before it stays the path's last step.
                let closed = next > i && bytes.get(next - 1) == Some(&b'"') && next <= end;
                i = next;
                match stack.last_mut() {
                    Some(Frame::Object(key)) if closed && expects_key(bytes, i, end) => {
                        *key = Some(text)
                    }
                    Some(Frame::Array(index)) => *index = Some(index.map_or(0, |n| n + 1)),
                    _ => {}
                }
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b':' | b',' => continue,
            _ => {}
        }
        if !matches!(b, b'}' | b']') {
            // A value starts here (a container's opening or a scalar's first byte): an array
            // counts it as its next element.
            let parent = if matches!(b, b'{' | b'[') {
                stack.len().checked_sub(2).and_then(|p| stack.get_mut(p))
            } else {
                stack.last_mut()
            };
            if let Some(Frame::Array(index)) = parent {
                *index = Some(index.map_or(0, |n| n + 1));
            }
            if !matches!(b, b'{' | b'[') {
                i = scalar_end(bytes, i, end);
            }
        }
    }
    render(&stack)
}

/// Whether the string that ended before `i` is an object's key (a `:` follows it).
fn expects_key(bytes: &[u8], i: usize, end: usize) -> bool {
    bytes[i..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
        .checked_add(i)
        .and_then(|j| bytes.get(j))
        .map_or(i >= end, |&c| c == b':')
}

/// The text of the string whose opening quote is before `start`, and the offset after its
/// closing quote (or `end`). Escapes other than `\uXXXX` keep their character; `\uXXXX`
/// is decoded where it can be.
fn string_at(bytes: &[u8], start: usize, end: usize) -> (String, usize) {
    let mut out = Vec::new();
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), i + 1),
            b'\\' => {
                let esc = bytes.get(i + 1).copied().unwrap_or(b'\\');
                i += 2;
                match esc {
                    b'u' => {
                        let hex = bytes
                            .get(i..i + 4)
                            .and_then(|h| std::str::from_utf8(h).ok());
                        let c = hex
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .and_then(char::from_u32)
                            .unwrap_or(char::REPLACEMENT_CHARACTER);
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        i += 4;
                    }
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    other => out.push(other),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), end.max(i))
}

/// The offset after the number or literal starting before `start`.
fn scalar_end(bytes: &[u8], start: usize, end: usize) -> usize {
    let n = bytes[start..end]
        .iter()
        .take_while(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':'))
        .count();
    start + n
}

/// Longest key said whole in a path; a longer one is cut (a key is the file's text).
const MAX_KEY: usize = 40;

/// `.key` for a plain key; anything else (long, spaces, control characters, quotes) quoted and
/// escaped, cut at [`MAX_KEY`] characters: `["2.38 I slot print_timing: id  0 | task 92…"]`.
fn step(path: &mut String, k: &str) {
    let plain = !k.is_empty()
        && k.len() <= MAX_KEY
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if plain {
        path.push('.');
        path.push_str(k);
        return;
    }
    let cut: String = k.chars().take(MAX_KEY).collect();
    let more = if cut.len() < k.len() { "…" } else { "" };
    path.push_str(&format!("[\"{}{more}\"]", cut.escape_debug()));
}

fn render(stack: &[Frame]) -> String {
    let mut path = String::from("$");
    for f in stack {
        match f {
            Frame::Object(Some(k)) => step(&mut path, k),
            Frame::Array(Some(i)) => path.push_str(&format!("[{i}]")),
            Frame::Object(None) | Frame::Array(None) => {}
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::path_at;

    /// The path serde_json's error points into, for a type that fails where asked.
    fn at<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
        let e = serde_json::from_str::<T>(text).expect_err("fails");
        let start: usize = text
            .split('\n')
            .take(e.line().saturating_sub(1))
            .map(|l| l.len() + 1)
            .sum();
        path_at(text.as_bytes(), start + e.column())
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Req {
        ttft_ms: Option<f64>,
        tokens: u32,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        requests: Vec<Req>,
        #[serde(default)]
        nested: Vec<Vec<u32>>,
    }

    #[test]
    fn names_the_value_serde_refused() {
        let ok = r#"{"ttft_ms": 1.5, "tokens": 3}"#;
        let bad_type = r#"{"name": "x", "requests": [ {"ttft_ms": 1, "tokens": 2}, {"ttft_ms": "slow", "tokens": 2} ]}"#;
        assert_eq!(at::<Doc>(bad_type), "$.requests[1].ttft_ms");
        let missing = format!(r#"{{"name": "x", "requests": [{ok}, {{"ttft_ms": 2}}]}}"#);
        assert_eq!(at::<Doc>(&missing), "$.requests[1]");
        let unknown =
            format!(r#"{{"name": "x", "requests": [{ok}, {ok}, {{"tokens": 1, "ttfb": 2}}]}}"#);
        assert_eq!(at::<Doc>(&unknown), "$.requests[2].ttfb");
        let duplicate = "{\"name\": \"x\",\n \"requests\": [],\n \"name\": \"y\"}";
        assert_eq!(at::<Doc>(duplicate), "$.name");
        let deep = r#"{"name": "x", "requests": [], "nested": [[1, 2], [3, -4]]}"#;
        assert_eq!(at::<Doc>(deep), "$.nested[1][1]");
        let top = r#"{"requests": []}"#;
        assert_eq!(at::<Doc>(top), "$");
        let escaped = r#"{"name": "a\"b]", "requests": [{"tokens": 1, "t\u00e9": 2}]}"#;
        assert_eq!(at::<Doc>(escaped), "$.requests[0].té");
    }

    /// A file cut inside a string value names the key whose value it is, not the string; a
    /// key that is not a plain name is quoted, escaped and cut (it is the file's own text).
    #[test]
    fn a_truncated_value_and_a_hostile_key_stay_short() {
        let log = format!("line one\\nline two {}", "x".repeat(200));
        let text = format!(r#"{{"server": {{"name": "llama", "log_tail": "{log}"#);
        let e = serde_json::from_str::<serde_json::Value>(&text).expect_err("truncated");
        assert!(e.is_eof());
        assert_eq!(path_at(text.as_bytes(), text.len()), "$.server.log_tail");
        let key = format!("a key\\n{}", "y".repeat(100));
        let text = format!(r#"{{"{key}": 1, "b": 2}}"#);
        let at = text.find(": 1").unwrap();
        let p = path_at(text.as_bytes(), at);
        assert!(p.starts_with(r#"$["a key\n"#) && p.ends_with("…\"]"), "{p}");
        assert!(p.chars().count() < 60, "{p}");
        // Control: a plain key is said as it is.
        assert_eq!(path_at(br#"{"ttft_ms": 1}"#, 12), "$.ttft_ms");
    }

    #[test]
    fn tolerates_text_that_is_not_json() {
        for text in ["", "]]]}}", "{\"a\": [1, {\"b", "\"\\u12", "[[[[", "{:,}"] {
            for offset in 0..=text.len() + 2 {
                assert!(path_at(text.as_bytes(), offset).starts_with('$'));
            }
        }
    }
}
