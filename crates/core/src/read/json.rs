//! Parsing sloscope's own JSON documents: envelope (`kind`, `schema_version`), typed parse and
//! the run checks serde cannot do. Callers go through [`crate::read::read_document`], which
//! also recognises journals and other formats.
//!
//! Every failure is a [`LoadError`] naming the file, the JSON path and what was expected. A file
//! is parsed once with its columns read in bulk (fast); only when that fails is it parsed again
//! value by value, and the path named from where serde stopped ([`crate::read::json_path`]).

use serde::de::{DeserializeOwned, IgnoredAny};

use crate::read::checked_run;
pub use crate::read::document::{Document, LoadedFile};
use crate::read::error::{LoadError, LoadErrorKind};
use crate::schema::{Kind, Plan, Run, SCHEMA_MAJOR};

pub(crate) struct Envelope {
    kind: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
}

/// Like [`parse_document`], but takes the buffer so a large run file can be parsed in less
/// memory: the inter-token gaps are parsed out of the text first, the buffer is compacted in
/// place (each gap array replaced by `[]`) and shrunk, and serde reads what remains.
pub fn parse_document_owned(file: &str, mut bytes: Vec<u8>) -> Result<Document, LoadError> {
    let (kind, _minor) = envelope(file, &bytes)?;
    if kind != Kind::Run || bytes.len() < FAST_PATH_MIN_BYTES {
        return parse_document(file, &bytes);
    }
    let Some(extracted) = extract_gaps(&mut bytes) else {
        return parse_document(file, &bytes);
    };
    bytes.shrink_to_fit();
    assemble_run(file, bytes, extracted)
}

/// Whether a file that starts with `head` is a sloscope run file (its envelope first, as
/// sloscope writes it): such a file can be read in chunks through a [`crate::schema::GapStream`].
pub fn is_run_prefix(head: &[u8]) -> bool {
    envelope_prefix(head).is_some_and(|e| {
        e.kind
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .is_some_and(|k| k == Kind::Run.as_str())
    })
}

/// A run from a document whose gap values were taken out (`[]` left in their place) and the
/// gap arrays, in file order: typed, the gaps put back, validated.
pub fn assemble_run(
    file: &str,
    bytes: Vec<u8>,
    extracted: Vec<crate::schema::Gaps>,
) -> Result<Document, LoadError> {
    let (kind, _minor) = envelope(file, &bytes)?;
    if kind != Kind::Run {
        return Err(LoadError::new(
            file,
            "$.kind",
            format!("expected a run, found {}", kind.as_str()),
            LoadErrorKind::Kind,
        ));
    }
    let mut run: Run = typed(file, &bytes)?;
    drop(bytes);
    if run.repeats.len() != extracted.len() {
        return Err(LoadError::new(
            file,
            "$.repeats",
            format!(
                "{} `itl_us` arrays in the file for {} repeats: expected one per \
                 repeats[].requests and no `itl_us` key anywhere else",
                extracted.len(),
                run.repeats.len()
            ),
            LoadErrorKind::Invalid,
        ));
    }
    for (rep, gaps) in run.repeats.iter_mut().zip(extracted) {
        rep.requests.itl_us.fill(gaps);
    }
    checked_run(file, &run)?;
    crate::read::normal::finish(file, Document::Run(Box::new(run)))
}

/// Below this size the plain path is as fast and simpler.
const FAST_PATH_MIN_BYTES: usize = 1 << 20;

/// Finds every `"itl_us": [[…]]` value, parses it, and compacts `bytes` in place with `[]` in
/// its stead. `None` (bytes untouched) when a value does not parse, so the plain path can
/// report the error with its JSON path.
fn extract_gaps(bytes: &mut Vec<u8>) -> Option<Vec<crate::schema::Gaps>> {
    const KEY: &[u8] = b"\"itl_us\"";
    let mut ranges = Vec::new();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = memchr::memmem::find(&bytes[from..], KEY).map(|p| p + from) {
        from = pos + KEY.len();
        // An escaped quote (odd run of backslashes before it) is inside a string, not a key.
        let backslashes = bytes[..pos]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        if backslashes % 2 == 1 {
            continue;
        }
        let mut i = from;
        while matches!(bytes.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            i += 1;
        }
        if bytes.get(i) != Some(&b':') {
            continue; // a string value "itl_us", not a key
        }
        i += 1;
        while matches!(bytes.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            i += 1;
        }
        let (gaps, used) = crate::schema::gaps_parse_prefix(&bytes[i..]).ok()?;
        ranges.push((i, i + used));
        found.push(gaps);
        from = i + used;
    }
    if ranges.is_empty() {
        return None;
    }
    let mut write = 0;
    let mut read = 0;
    for (a, b) in ranges {
        bytes.copy_within(read..a, write);
        write += a - read;
        bytes[write..write + 2].copy_from_slice(b"[]");
        write += 2;
        read = b;
    }
    let len = bytes.len();
    bytes.copy_within(read..len, write);
    write += len - read;
    bytes.truncate(write);
    Some(found)
}

/// Parses `bytes` (the contents of `file`) into a checked document.
pub fn parse_document(file: &str, bytes: &[u8]) -> Result<Document, LoadError> {
    let (kind, _minor) = envelope(file, bytes)?;
    let doc = match kind {
        Kind::QualityGate => Document::QualityGate(typed(file, bytes)?),
        Kind::FloatBaseline => Document::FloatBaseline(typed(file, bytes)?),
        Kind::Deployment => Document::Deployment(typed(file, bytes)?),
        Kind::Plan => {
            let mut plan: Plan = typed(file, bytes)?;
            crate::check::plan::refusals(&plan).map_err(|v| crate::read::refused(file, v))?;
            plan.file_sha256 =
                crate::schema::FileStamp(Some(crate::read::import::sha256_hex(bytes)));
            Document::Plan(plan)
        }
        Kind::Run => {
            let run: Run = typed(file, bytes)?;
            checked_run(file, &run)?;
            Document::Run(Box::new(run))
        }
        Kind::Shard => Document::Shard(Box::new(typed(file, bytes)?)),
        Kind::ShardDone => Document::ShardDone(typed(file, bytes)?),
    };
    Ok(doc)
}

/// Reads `kind` and `schema_version` and checks the major version.
fn envelope(file: &str, bytes: &[u8]) -> Result<(Kind, u32), LoadError> {
    let env = envelope_fields(file, bytes)?;
    let kinds = Kind::ALL.map(|k| k.as_str()).join(", ");
    let kind = match env.kind {
        None => {
            return Err(LoadError::new(
                file,
                "$.kind",
                format!(
                    "missing field `kind`: expected one of {kinds} (is this a sloscope file?), \
                     or a result file of {}",
                    crate::read::import::registry::importable()
                ),
                LoadErrorKind::Kind,
            ))
        }
        Some(serde_json::Value::String(s)) => Kind::parse(&s).ok_or_else(|| {
            LoadError::new(
                file,
                "$.kind",
                format!("unknown kind {s:?}: expected one of {kinds}"),
                LoadErrorKind::Kind,
            )
        })?,
        Some(other) => {
            return Err(LoadError::new(
                file,
                "$.kind",
                format!("expected a string, one of {kinds}; found {other}"),
                LoadErrorKind::Kind,
            ))
        }
    };
    let version = match env.schema_version {
        Some(serde_json::Value::String(s)) => s,
        Some(other) => {
            return Err(LoadError::new(
                file,
                "$.schema_version",
                format!("expected a string \"MAJOR.MINOR\"; found {other}"),
                LoadErrorKind::Version,
            ))
        }
        None => {
            return Err(LoadError::new(
                file,
                "$.schema_version",
                "missing field `schema_version`: expected \"MAJOR.MINOR\", e.g. \"1.0\"",
                LoadErrorKind::Version,
            ))
        }
    };
    let (major, minor) = parse_version(&version).ok_or_else(|| {
        LoadError::new(
            file,
            "$.schema_version",
            format!("{version:?} is not \"MAJOR.MINOR\""),
            LoadErrorKind::Version,
        )
    })?;
    if major > SCHEMA_MAJOR {
        return Err(LoadError::new(
            file,
            "$.schema_version",
            format!(
                "schema version {version} is newer than this sloscope reads ({SCHEMA_MAJOR}.x); \
                 upgrade sloscope"
            ),
            LoadErrorKind::Version,
        ));
    }
    if major < SCHEMA_MAJOR {
        return Err(LoadError::new(
            file,
            "$.schema_version",
            format!("schema version {version} predates {SCHEMA_MAJOR}.x and is not supported"),
            LoadErrorKind::Version,
        ));
    }
    Ok((kind, minor))
}

/// Fast path: files written by sloscope start with `{"kind": "…", "schema_version": "…"`; read
/// those two strings without scanning the rest. Anything else takes the full scan.
pub(crate) fn envelope_prefix(bytes: &[u8]) -> Option<Envelope> {
    let head = &bytes[..bytes.len().min(256)];
    let text = std::str::from_utf8(head).ok().or_else(|| {
        // the cut may split a UTF-8 sequence; fall back to the longest valid prefix
        let valid = std::str::from_utf8(head).err()?.valid_up_to();
        std::str::from_utf8(&head[..valid]).ok()
    })?;
    let rest = text.trim_start().strip_prefix('{')?;
    let (kind, rest) = key_string(rest, "kind")?;
    let rest = rest.trim_start().strip_prefix(',')?;
    let (version, _) = key_string(rest, "schema_version")?;
    Some(Envelope {
        kind: Some(serde_json::Value::String(kind.to_string())),
        schema_version: Some(serde_json::Value::String(version.to_string())),
    })
}

/// Parses `"key": "value"` with a plain (escape-free) value.
fn key_string<'a>(s: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
    let s = s
        .trim_start()
        .strip_prefix('"')?
        .strip_prefix(key)?
        .strip_prefix('"')?;
    let s = s
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let end = s.find(['"', '\\'])?;
    if s.as_bytes()[end] != b'"' {
        return None;
    }
    Some((&s[..end], &s[end + 1..]))
}

fn envelope_fields(file: &str, bytes: &[u8]) -> Result<Envelope, LoadError> {
    if let Some(env) = envelope_prefix(bytes) {
        return Ok(env);
    }
    // Skims the top level: only `kind` and `schema_version` are kept, the rest is skipped.
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Envelope;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
            let mut env = Envelope {
                kind: None,
                schema_version: None,
            };
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "kind" => env.kind = Some(map.next_value()?),
                    "schema_version" => env.schema_version = Some(map.next_value()?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(env)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let env = serde::Deserializer::deserialize_map(&mut de, V)
        .and_then(|env| de.end().map(|()| env))
        .map_err(|e| syntax_error(file, &e, bytes))?;
    Ok(env)
}

fn syntax_error(file: &str, e: &serde_json::Error, bytes: &[u8]) -> LoadError {
    use serde_json::error::Category;
    let message = match e.classify() {
        Category::Eof => format!(
            "truncated JSON: the file ends after {} bytes, inside the document ({e})",
            bytes.len()
        ),
        Category::Syntax if non_finite_at(bytes, e.line(), e.column()) => {
            format!("malformed JSON (NaN and Infinity are not JSON numbers; write null): {e}")
        }
        Category::Syntax => format!("malformed JSON: {e}"),
        Category::Io => format!("could not read: {e}"),
        Category::Data => format!("expected a JSON object at the top level: {e}"),
    };
    LoadError::new(file, "$", message, LoadErrorKind::Syntax)
}

/// Whether the token serde stopped at (1-based line and column) is `NaN` or `Infinity`.
fn non_finite_at(bytes: &[u8], line: usize, column: usize) -> bool {
    let Some(start) = bytes
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .try_fold(0usize, |acc, l| acc.checked_add(l.len() + 1))
    else {
        return false;
    };
    // serde reports the column of the offending character; look a few bytes either side.
    let at = start.saturating_add(column.saturating_sub(1));
    let from = at.saturating_sub(9).min(bytes.len());
    let to = at.saturating_add(9).min(bytes.len());
    let window = &bytes[from..to];
    memchr::memmem::find(window, b"NaN").is_some()
        || memchr::memmem::find(window, b"Infinity").is_some()
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn typed<T: DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<T, LoadError> {
    match serde_json::from_slice::<T>(bytes) {
        Ok(v) => Ok(v),
        Err(_) => crate::schema::column::exact(|| typed_exact(file, bytes)),
    }
}

/// [`typed`]'s second reading, after the first failed: serde reading every value itself, and
/// the JSON path of the value it refused named from the position it stopped at.
fn typed_exact<T: DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<T, LoadError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let inner = match T::deserialize(&mut de) {
        Ok(v) => match de.end() {
            Ok(()) => return Ok(v),
            Err(e) => {
                return Err(LoadError::new(
                    file,
                    "$",
                    format!(
                        "{}: expected nothing after the document [unique_keys]",
                        strip_position(&e.to_string())
                    ),
                    LoadErrorKind::Syntax,
                ))
            }
        },
        Err(e) => e,
    };
    let path =
        crate::read::json_path::path_at(bytes, offset_of(bytes, inner.line(), inner.column()));
    if matches!(inner.classify(), serde_json::error::Category::Data) {
        let mut msg = strip_position(&inner.to_string());
        let duplicate = msg.starts_with("duplicate field") || msg.starts_with("duplicate key");
        if duplicate && !msg.contains("[unique_keys]") {
            msg.push_str(": expected each key once, never first- or last-wins [unique_keys]");
        }
        Err(LoadError::new(file, path, msg, LoadErrorKind::Field))
    } else {
        let mut err = syntax_error(file, &inner, bytes);
        err.path = path;
        Err(err)
    }
}

/// The byte offset of serde_json's 1-based line and byte column (the bytes read on that line).
fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let start: usize = bytes
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    start.saturating_add(column)
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => format!("{} ({})", &msg[..i], &msg[i + 1..]),
        None => msg.to_string(),
    }
}
