//! The fast scanner: a plain content chunk is recognised by its content key followed by a
//! non-empty string, without parsing; events with `usage`, `timings`, `error` or a
//! `finish_reason`, and anything unusual, go to the full parser.

use memchr::memmem;

use crate::wire::api::Api;

/// What the fast scanner learned about an event.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Scan {
    pub(super) content: bool,
    pub(super) needs_parse: bool,
}

/// Searchers built once: building one per event cost more than the search itself.
struct Finders {
    choices: memmem::Finder<'static>,
    finish: memmem::Finder<'static>,
    usage: memmem::Finder<'static>,
    error: memmem::Finder<'static>,
    timings: memmem::Finder<'static>,
    text: memmem::Finder<'static>,
    content: memmem::Finder<'static>,
    reasoning: memmem::Finder<'static>,
    index: memmem::Finder<'static>,
}

static FINDERS: std::sync::LazyLock<Finders> = std::sync::LazyLock::new(|| Finders {
    choices: memmem::Finder::new(b"\"choices\""),
    finish: memmem::Finder::new(b"\"finish_reason\""),
    usage: memmem::Finder::new(b"\"usage\""),
    error: memmem::Finder::new(b"\"error\""),
    timings: memmem::Finder::new(b"\"timings\""),
    text: memmem::Finder::new(b"\"text\""),
    content: memmem::Finder::new(b"\"content\""),
    reasoning: memmem::Finder::new(b"\"reasoning_content\""),
    index: memmem::Finder::new(b"\"index\""),
});

/// Classifies an event without parsing it: a plain content chunk is recognised by its content
/// key followed by a non-empty string. Events with `usage`, `timings` or `error`, and anything
/// unusual, go to the full parser.
pub(super) fn scan_event(data: &[u8], api: Api) -> Scan {
    let f = &*FINDERS;
    // Only a whole object with choices is classified here: anything cut short or of another
    // shape goes to the parser, which fails what it cannot read.
    let whole = data.first() == Some(&b'{') && data.last() == Some(&b'}');
    if !whole
        || f.choices.find(data).is_none()
        || f.usage.find(data).is_some()
        || f.error.find(data).is_some()
        || f.timings.find(data).is_some()
        || finishes(data)
        || !index_zero(data)
    {
        return Scan {
            content: false,
            needs_parse: true,
        };
    }
    let keys: &[&memmem::Finder<'static>] = match api {
        Api::Completions => &[&f.text],
        Api::Chat => &[&f.content, &f.reasoning],
    };
    let mut content = false;
    for key in keys {
        let Some(pos) = key.find(data) else { continue };
        let mut i = pos + key.needle().len();
        while data.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        if data.get(i) != Some(&b':') {
            return Scan {
                content: false,
                needs_parse: true,
            };
        }
        i += 1;
        while data.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        match data.get(i) {
            Some(b'"') if data.get(i + 1) == Some(&b'"') => {}
            Some(b'"') => content = true,
            Some(b'n') => {} // null
            _ => {
                return Scan {
                    content: false,
                    needs_parse: true,
                }
            }
        }
        // a second occurrence of the key (several choices) needs the parser
        if key.find(&data[i..]).is_some() {
            return Scan {
                content: false,
                needs_parse: true,
            };
        }
    }
    Scan {
        content,
        needs_parse: false,
    }
}

/// Whether an event's `index` keys, if any, all say 0 (the one choice a request asks for); any
/// other index (another choice, or a tool call's) goes to the parser.
fn index_zero(data: &[u8]) -> bool {
    let f = &FINDERS.index;
    let mut at = 0;
    while let Some(p) = f.find(&data[at..]) {
        at += p + f.needle().len();
        let rest = data[at..].trim_ascii_start();
        let rest = rest.strip_prefix(b":").unwrap_or(rest).trim_ascii_start();
        let zero = rest.first() == Some(&b'0') && !rest.get(1).is_some_and(u8::is_ascii_digit);
        if !zero {
            return false;
        }
    }
    true
}

/// Whether an event has a `finish_reason` other than `null` (the parser reads it: `abort` and
/// `error` fail the request).
fn finishes(data: &[u8]) -> bool {
    let Some(p) = FINDERS.finish.find(data) else {
        return false;
    };
    let rest = data[p + 15..].trim_ascii_start();
    let rest = rest.strip_prefix(b":").unwrap_or(rest).trim_ascii_start();
    !rest.starts_with(b"null")
}
