//! Text a reader is shown. Every string of the view-model is a [`Shown`], and the only way to
//! make one is [`Shown::new`], which makes it inert: control, escape and bidirectional
//! characters become visible `\u{…}` escapes (they cannot move a cursor, colour a terminal or
//! reorder a line), a letter carries at most two combining marks (more would draw towers over
//! the page). A new field of the view cannot forget it: it has no other constructors.
//!
//! Length is bounded where text enters, not where sloscope speaks: every name and free text
//! of a file is bounded when it is read (`check::text`), and a string shown on its own (a
//! name, an id, a file name: [`Shown::input`]) is cut to [`MAX_ECHO_CHARS`] with what was left
//! out said. The tool's own sentences ([`Shown::new`]), which embed those bounded strings, are
//! never cut: a reader sees every word sloscope says.

use serde::{Deserialize, Serialize};

/// Longest string of a file a view shows on its own (a name, an id, a file name); longer is
/// cut, with the number of characters left out said.
pub const MAX_ECHO_CHARS: usize = 300;
/// Combining marks kept on one letter.
const MAX_MARKS_PER_LETTER: usize = 2;

/// Text made safe to show.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct Shown(String);

impl Shown {
    /// sloscope's own text `s` (which may quote bounded strings of files) made inert, never cut.
    pub fn new(s: impl AsRef<str>) -> Shown {
        Shown(escaped(s.as_ref()))
    }

    /// A string of a file shown on its own (a name, an id) made inert and cut to
    /// [`MAX_ECHO_CHARS`].
    pub fn input(s: impl AsRef<str>) -> Shown {
        Shown(inert(s.as_ref()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Read back from a view serialized before: made inert again, so no file can smuggle raw text
/// in through a saved report.
impl<'de> Deserialize<'de> for Shown {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Shown::new)
    }
}

impl std::ops::Deref for Shown {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Shown {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A string from a file made inert for every printer (see the module).
pub fn inert(s: &str) -> String {
    escape(s, MAX_ECHO_CHARS)
}

/// [`inert`] without the length cut, for a terminal's error lines (which must say everything):
/// control, escape and bidirectional characters escaped, combining marks capped.
pub fn escaped(s: &str) -> String {
    escape(s, usize::MAX)
}

fn escape(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars.saturating_mul(2)));
    let mut marks = 0usize;
    let mut dropped = 0usize;
    let mut kept = 0usize;
    for (n, ch) in s.chars().enumerate() {
        if unicode_normalization::char::is_combining_mark(ch) {
            marks += 1;
            if marks > MAX_MARKS_PER_LETTER {
                dropped += 1;
                continue;
            }
        } else {
            marks = 0;
        }
        if kept == max_chars {
            let rest = s.chars().count() - n;
            out.push_str(&format!("… ({rest} more characters)"));
            break;
        }
        kept += 1;
        if inert_char(ch) {
            out.push_str(&format!("\\u{{{:04x}}}", ch as u32));
        } else {
            out.push(ch);
        }
    }
    if dropped > 0 {
        out.push_str(&format!(" ({dropped} combining marks dropped)"));
    }
    out
}

fn inert_char(ch: char) -> bool {
    ch.is_control()
        || crate::check::names::is_invisible(ch)
        || matches!(ch, '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_files_is_made_inert() {
        assert_eq!(Shown::new("np4").as_str(), "np4");
        assert_eq!(Shown::new("a\u{202e}b").as_str(), "a\\u{202e}b");
        assert_eq!(Shown::new("\u{1b}[31m").as_str(), "\\u{001b}[31m");
        let tower = format!("x{}", "\u{0301}".repeat(500));
        let shown = Shown::new(&tower);
        assert!(shown.starts_with("x\u{0301}\u{0301} ("), "{shown}");
        assert!(shown.contains("combining marks dropped"), "{shown}");
        let long = "y".repeat(1000);
        assert!(Shown::input(&long).ends_with("(700 more characters)"));
        // sloscope's own words are never cut; only their control characters are escaped.
        let said = format!("{long}\u{7}");
        assert_eq!(Shown::new(&said).as_str(), format!("{long}\\u{{0007}}"));
        let back: Shown = serde_json::from_str("\"a\\u202eb\"").unwrap();
        assert_eq!(back.as_str(), "a\\u{202e}b");
    }
}
