//! The one door for every file: a name and its bytes in, a typed, validated [`Document`] or a
//! [`LoadError`] out. The CLI and the page only do I/O (files and directories; the browser's
//! File API) and call [`read_document`]; every format decision is made here.
//!
//! The format is recognised by content, never by file name: a sloscope JSON document (`kind`
//! and `schema_version`), or a collector journal (JSON Lines whose first line is a
//! `run_journal` header), recovered as a partial run. Every run, however it arrived, goes
//! through the same validation. Anything else is refused with what it looks like (a byte-order
//! mark, UTF-16, JSON Lines, CSV, YAML, binary) and what is accepted.

pub mod document;
pub mod error;
pub mod import;
pub mod journal;
pub mod json;
mod json_path;
pub mod normal;
pub mod reader;
pub mod replay;
pub mod strict;

use crate::read::error::{LoadError, LoadErrorKind};
use crate::read::json::parse_document_owned;
pub use crate::read::json::{Document, LoadedFile};
use crate::schema::journal::JOURNAL_KIND;

/// A run passes every refusal-level invariant of the catalogue, or is refused naming the file,
/// the JSON path, what was expected and the invariant's code.
pub fn checked_run(file: &str, run: &crate::schema::Run) -> Result<(), LoadError> {
    crate::check::run::refusals(run).map_err(|v| refused(file, v))
}

/// A broken refusal-level invariant as the read error it is.
pub fn refused(file: &str, v: crate::check::invariant::Violation) -> LoadError {
    LoadError::new(
        file,
        v.path,
        format!("{} [{}]", v.message, v.invariant.code()),
        LoadErrorKind::Invalid,
    )
}

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A single JSON value (sloscope's own documents).
    Json,
    /// A sloscope collector journal.
    Journal,
    /// JSON Lines that are not a sloscope journal.
    JsonLines,
    /// Starts with a UTF-8 byte-order mark.
    Utf8Bom,
    /// UTF-16 or UTF-32 text.
    Utf16,
    /// Comma- or tab-separated values.
    Csv,
    /// YAML.
    Yaml,
    /// Nothing but whitespace.
    Empty,
    /// Not text.
    Binary,
    /// Text that is none of the above.
    Text,
}

impl Shape {
    /// How a refusal names it.
    pub fn described(self) -> &'static str {
        match self {
            Shape::Json => "JSON",
            Shape::Journal | Shape::Text => "text that is not JSON",
            Shape::JsonLines => "JSON Lines (one JSON value per line)",
            Shape::Utf8Bom => "JSON behind a UTF-8 byte-order mark (EF BB BF)",
            Shape::Utf16 => "UTF-16 or UTF-32 text",
            Shape::Csv => "CSV (comma- or tab-separated values)",
            Shape::Yaml => "YAML",
            Shape::Empty => "an empty file",
            Shape::Binary => "binary data",
        }
    }
}

/// What sloscope reads, for refusals.
pub fn accepted() -> String {
    format!(
        "a sloscope JSON file (plan, run, quality_gate, float_baseline or deployment; UTF-8 \
         without a byte-order mark), a collector journal (*.journal.jsonl), or another tool's \
         result file ({})",
        import::registry::tools()
    )
}

/// Bytes the sniff looks at.
const SNIFF_BYTES: usize = 8192;

/// Recognises a file's shape from its first bytes.
pub fn sniff(bytes: &[u8]) -> Shape {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Shape::Utf8Bom;
    }
    if head.starts_with(&[0xFF, 0xFE])
        || head.starts_with(&[0xFE, 0xFF])
        || (head.len() >= 4
            && head.iter().take(64).filter(|&&b| b == 0).count() * 4 >= 64.min(head.len()))
    {
        return Shape::Utf16;
    }
    let Some(first) = head.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Shape::Empty;
    };
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.valid_up_to() + 4 >= head.len() && head.len() == SNIFF_BYTES => {
            // the cut split a character
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Shape::Binary,
    };
    match head[first] {
        b'{' => json_or_lines(&text[first..]),
        b'[' => Shape::Json,
        _ => text_shape(&text[first..]),
    }
}

/// A first line that is a whole JSON object followed by more lines is JSON Lines.
fn json_or_lines(text: &str) -> Shape {
    let Some((line, rest)) = text.split_once('\n') else {
        return Shape::Json;
    };
    if rest.trim().is_empty() {
        return Shape::Json;
    }
    match serde_json::from_str::<serde_json::Value>(line.trim_end_matches('\r')) {
        Ok(v) if v.get("line").and_then(|l| l.as_str()) == Some("header") => {
            if v.get("kind").and_then(|k| k.as_str()) == Some(JOURNAL_KIND) {
                Shape::Journal
            } else {
                Shape::JsonLines
            }
        }
        Ok(v) if v.is_object() => Shape::JsonLines,
        _ => Shape::Json,
    }
}

fn text_shape(text: &str) -> Shape {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .take(3)
        .collect();
    if text.starts_with("---") || text.starts_with("%YAML") {
        return Shape::Yaml;
    }
    let Some(first) = lines.first() else {
        return Shape::Text;
    };
    for sep in [',', '\t'] {
        let n = first.matches(sep).count();
        if n >= 1 && lines.iter().skip(1).all(|l| l.matches(sep).count() == n) {
            return Shape::Csv;
        }
    }
    let yaml_line = |l: &&str| {
        let t = l.trim_start();
        t.starts_with("- ")
            || t.split_once(':').is_some_and(|(k, v)| {
                !k.is_empty() && !k.contains(' ') && (v.is_empty() || v.starts_with(' '))
            })
    };
    if lines.iter().all(yaml_line) {
        return Shape::Yaml;
    }
    Shape::Text
}

/// Another tool's result file: JSON that does not open with sloscope's envelope and has no
/// top-level `kind`, or JSON Lines.
fn foreign_file(shape: Shape, bytes: &[u8]) -> Option<crate::read::import::detect::Foreign> {
    match shape {
        Shape::Json if crate::read::json::envelope_prefix(bytes).is_none() => {
            crate::read::import::detect::identify_bytes(bytes)
        }
        Shape::JsonLines => crate::read::import::detect::identify_bytes(bytes),
        Shape::Csv | Shape::Yaml => crate::read::import::detect::identify_text(bytes),
        _ => None,
    }
}

/// What a file another tool writes beside its results is, when it holds no measurement.
fn aside(shape: Shape, bytes: &[u8]) -> Option<String> {
    match shape {
        Shape::Json if crate::read::json::envelope_prefix(bytes).is_none() => {
            crate::read::import::detect::aside_bytes(bytes)
        }
        _ => None,
    }
}

/// What makes another tool's result file into runs ([`import::standalone_runs`]), and a
/// collector journal into its recovered run. It is passed in, not called by name, so a reader
/// built without it (the page's first reader, which loads the importer on demand) holds none
/// of the importers' or the recovery's code.
pub type Importer = fn(&str, &[u8]) -> Result<Vec<(String, crate::schema::Run)>, LoadError>;

/// The importer of every tool sloscope reads, and the recovery of collector journals.
pub fn importer() -> Importer {
    import_or_recover
}

/// A collector journal's recovered run (named by its file), else another tool's runs.
fn import_or_recover(
    file: &str,
    bytes: &[u8],
) -> Result<Vec<(String, crate::schema::Run)>, LoadError> {
    if sniff(bytes) == Shape::Journal {
        return Ok(vec![(file.to_string(), journal::recover(file, bytes)?)]);
    }
    import::standalone_runs(file, bytes)
}

/// Reads one file: recognises its format by content, parses and validates it. Another tool's
/// result file is imported (one run per benchmark, summaries only until a plan assigns it).
pub fn read_document(file: &str, bytes: Vec<u8>) -> Result<Document, LoadError> {
    read_document_with(file, bytes, Some(importer()))
}

/// [`read_document`] with the importer given: without one, another tool's result file is
/// refused with [`LoadErrorKind::NoImporter`] (the reader's caller then loads the importer).
pub fn read_document_with(
    file: &str,
    bytes: Vec<u8>,
    importer: Option<Importer>,
) -> Result<Document, LoadError> {
    read_any(file, bytes, importer).and_then(|doc| normal::finish(file, doc))
}

fn read_any(file: &str, bytes: Vec<u8>, importer: Option<Importer>) -> Result<Document, LoadError> {
    let shape = sniff(&bytes);
    if let Some(what) = aside(shape, &bytes) {
        return Ok(Document::Aside(what));
    }
    if let Some(f) = foreign_file(shape, &bytes) {
        if crate::read::import::importable_format(f.format) {
            let Some(import) = importer else {
                return Err(LoadError::new(
                    file,
                    "$",
                    format!(
                        "this is {}'s result file, and this reader was built without the \
                         importer of other tools' files",
                        f.tool
                    ),
                    LoadErrorKind::NoImporter,
                ));
            };
            let runs = import(file, &bytes)?;
            for (name, run) in &runs {
                checked_run(name, run)?;
            }
            return Ok(Document::Imported(runs));
        }
        return Err(LoadError::new(
            file,
            "$",
            format!(
                "this is {}'s result file, not a sloscope file: {}. sloscope reads {}",
                f.tool,
                f.how,
                accepted()
            ),
            LoadErrorKind::Syntax,
        ));
    }
    match shape {
        Shape::Json => parse_document_owned(file, bytes),
        Shape::Journal => {
            let Some(recover) = importer else {
                return Err(LoadError::new(
                    file,
                    "$",
                    "this is a collector journal, and this reader was built without the \
                     recovery of journals",
                    LoadErrorKind::NoImporter,
                ));
            };
            let run = recover(file, &bytes)?
                .pop()
                .map(|(_, run)| run)
                .ok_or_else(|| {
                    LoadError::new(file, "$", "no run recovered", LoadErrorKind::Syntax)
                })?;
            checked_run(file, &run)?;
            Ok(Document::Run(Box::new(run)))
        }
        other => Err(LoadError::new(
            file,
            "$",
            format!(
                "this is {}, not a file sloscope reads: expected {}",
                other.described(),
                accepted()
            ),
            LoadErrorKind::Syntax,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_recognised() {
        assert_eq!(sniff(b"{\"kind\": \"run\"}\n"), Shape::Json);
        assert_eq!(sniff(b"{\n  \"kind\": \"run\"\n}\n"), Shape::Json);
        assert_eq!(sniff(b"\xEF\xBB\xBF{\"kind\": 1}"), Shape::Utf8Bom);
        assert_eq!(sniff(b"\xFF\xFE{\0\"\0k\0"), Shape::Utf16);
        assert_eq!(sniff(b"{\0\"\0k\0i\0n\0d\0\"\0:\0"), Shape::Utf16);
        assert_eq!(sniff(b"{\"a\": 1}\n{\"a\": 2}\n"), Shape::JsonLines);
        assert_eq!(
            sniff(b"{\"line\":\"header\",\"kind\":\"run_journal\"}\n{\"line\":\"repeat\"}\n"),
            Shape::Journal
        );
        assert_eq!(sniff(b"ttft_ms,tpot_ms\n1.0,2.0\n"), Shape::Csv);
        assert_eq!(sniff(b"kind: run\nschema_version: '1.0'\n"), Shape::Yaml);
        assert_eq!(sniff(b"---\nkind: run\n"), Shape::Yaml);
        assert_eq!(sniff(b"   \n"), Shape::Empty);
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\xff\xd8"), Shape::Binary);
        assert_eq!(sniff(b"hello there"), Shape::Text);
    }

    #[test]
    fn refusals_name_the_shape() {
        for (bytes, word) in [
            (&b"\xEF\xBB\xBF{}"[..], "byte-order mark"),
            (b"a,b\n1,2\n", "CSV"),
            (b"a: 1\nb: 2\n", "YAML"),
            (b"{\"a\":1}\n{\"a\":2}\n", "JSON Lines"),
            (b"\xFE\xFF\0{", "UTF-16"),
        ] {
            let e = read_document("f.json", bytes.to_vec()).unwrap_err();
            assert!(e.message.contains(word), "{e}");
            assert!(!e.message.contains("NaN"), "{e}");
            assert_eq!(e.file, "f.json");
        }
    }
}
