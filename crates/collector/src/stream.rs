//! One stream's events: which carry content (TTFT, gaps), usage and timings, or an error; and
//! the request record they add up to. A fast scanner classifies plain content chunks without
//! parsing them; anything else goes to the JSON parser.

use memchr::memmem;
use serde::Deserialize;
use sloscope_core::schema::{RequestRow as RequestRecord, TokenSource};

use crate::config::Api;

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct Timings {
    prompt_ms: Option<f64>,
}

/// Per-stream state: content offsets, usage, errors.
pub(crate) struct StreamState {
    api: Api,
    first_us: Option<u64>,
    last_us: u64,
    gaps: Vec<u32>,
    events: u32,
    usage_prompt: Option<u32>,
    usage_completion: Option<u32>,
    prompt_ms: Option<f64>,
    pub(crate) done: bool,
    pub(crate) error: Option<String>,
}

impl StreamState {
    pub(crate) fn new(api: Api) -> Self {
        StreamState {
            api,
            first_us: None,
            last_us: 0,
            gaps: Vec::new(),
            events: 0,
            usage_prompt: None,
            usage_completion: None,
            prompt_ms: None,
            done: false,
            error: None,
        }
    }

    pub(crate) fn event(&mut self, data: &[u8], at_us: u64) {
        if self.done || self.error.is_some() {
            return;
        }
        let data = data.trim_ascii();
        if data == b"[DONE]" {
            self.done = true;
            return;
        }
        let scan = scan_event(data, self.api);
        if scan.needs_parse {
            self.parse_full(data, at_us);
            return;
        }
        if scan.content {
            self.content_at(at_us);
        }
    }

    fn content_at(&mut self, at_us: u64) {
        self.events += 1;
        match self.first_us {
            None => self.first_us = Some(at_us),
            Some(_) => {
                let gap = at_us.saturating_sub(self.last_us).min(u32::MAX as u64) as u32;
                self.gaps.push(gap);
            }
        }
        self.last_us = at_us;
    }

    /// The slow path for events that carry usage, timings or an error, or that the scanner
    /// could not classify.
    fn parse_full(&mut self, data: &[u8], at_us: u64) {
        let v: serde_json::Value = match serde_json::from_slice(data) {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(format!("malformed event: {e}"));
                return;
            }
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let msg = err
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            self.error = Some(format!("server error mid-stream: {msg}"));
            return;
        }
        let content = v["choices"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                let s = |x: &serde_json::Value| x.as_str().is_some_and(|s| !s.is_empty());
                match self.api {
                    Api::Completions => s(&c["text"]),
                    Api::Chat => s(&c["delta"]["content"]) || s(&c["delta"]["reasoning_content"]),
                }
            })
        });
        if content {
            self.content_at(at_us);
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            if let Ok(u) = serde_json::from_value::<Usage>(u.clone()) {
                self.usage_prompt = u.prompt_tokens.or(self.usage_prompt);
                self.usage_completion = u.completion_tokens.or(self.usage_completion);
            }
        }
        if let Some(t) = v.get("timings").filter(|t| !t.is_null()) {
            if let Ok(t) = serde_json::from_value::<Timings>(t.clone()) {
                self.prompt_ms = t.prompt_ms;
            }
        }
    }

    pub(crate) fn finish(self, rec: &mut RequestRecord, end_us: u64, tgi_queue_ms: Option<f64>) {
        rec.e2e_us = Some(end_us);
        rec.ttft_us = self.first_us;
        rec.itl_us = self.gaps;
        if let Some(p) = self.usage_prompt {
            rec.prompt_tokens = Some(p);
            rec.prompt_tokens_source = Some(TokenSource::Usage);
        }
        match (self.usage_completion, self.events) {
            (Some(c), _) => {
                rec.output_tokens = Some(c);
                rec.output_tokens_source = Some(TokenSource::Usage);
            }
            (None, n) if self.first_us.is_some() => {
                rec.output_tokens = Some(n);
                rec.output_tokens_source = Some(TokenSource::Events);
            }
            _ => {}
        }
        rec.server_queue_us = match (tgi_queue_ms, self.prompt_ms, self.first_us) {
            (Some(q), _, _) => Some((q * 1000.0).max(0.0) as u64),
            (None, Some(p), Some(ttft)) => Some(ttft.saturating_sub((p * 1000.0).max(0.0) as u64)),
            _ => None,
        };
        rec.error = match (self.error, self.done, self.first_us) {
            (Some(e), _, _) => Some(e),
            (None, false, _) => Some("stream ended without [DONE]".into()),
            (None, true, None) => Some("stream finished without any content".into()),
            (None, true, Some(_)) => None,
        };
    }
}

/// What the fast scanner learned about an event.
#[derive(Debug, PartialEq, Eq)]
struct Scan {
    content: bool,
    needs_parse: bool,
}

/// Classifies an event without parsing it: a plain content chunk is recognised by its content
/// key followed by a non-empty string. Events with `usage`, `timings` or `error`, and anything
/// unusual, go to the full parser.
/// Searchers built once: building one per event cost more than the search itself.
struct Finders {
    usage: memmem::Finder<'static>,
    error: memmem::Finder<'static>,
    timings: memmem::Finder<'static>,
    text: memmem::Finder<'static>,
    content: memmem::Finder<'static>,
    reasoning: memmem::Finder<'static>,
}

static FINDERS: std::sync::LazyLock<Finders> = std::sync::LazyLock::new(|| Finders {
    usage: memmem::Finder::new(b"\"usage\""),
    error: memmem::Finder::new(b"\"error\""),
    timings: memmem::Finder::new(b"\"timings\""),
    text: memmem::Finder::new(b"\"text\""),
    content: memmem::Finder::new(b"\"content\""),
    reasoning: memmem::Finder::new(b"\"reasoning_content\""),
});

fn scan_event(data: &[u8], api: Api) -> Scan {
    let f = &*FINDERS;
    if f.usage.find(data).is_some()
        || f.error.find(data).is_some()
        || f.timings.find(data).is_some()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_classifies_common_chunks() {
        let c = |s: &str, api| scan_event(s.as_bytes(), api);
        assert_eq!(
            c(
                r#"{"choices":[{"text":" Paris","index":0}]}"#,
                Api::Completions
            ),
            Scan {
                content: true,
                needs_parse: false
            }
        );
        assert_eq!(
            c(r#"{"choices":[{"text":"","index":0}]}"#, Api::Completions),
            Scan {
                content: false,
                needs_parse: false
            }
        );
        assert_eq!(
            c(
                r#"{"choices":[{"delta":{"role":"assistant","content":null}}]}"#,
                Api::Chat
            ),
            Scan {
                content: false,
                needs_parse: false
            }
        );
        assert_eq!(
            c(r#"{"choices":[{"delta": {"content": "hi"}}]}"#, Api::Chat),
            Scan {
                content: true,
                needs_parse: false
            }
        );
        assert!(
            c(
                r#"{"choices":[],"usage":{"completion_tokens":3}}"#,
                Api::Chat
            )
            .needs_parse
        );
        assert!(c(r#"{"error":{"message":"boom"}}"#, Api::Chat).needs_parse);
    }

    #[test]
    fn usage_beats_event_count_and_done_is_required() {
        let mut s = StreamState::new(Api::Chat);
        s.event(
            br#"{"choices":[{"delta":{"role":"assistant","content":null}}]}"#,
            5,
        );
        s.event(br#"{"choices":[{"delta":{"content":"a"}}]}"#, 100);
        s.event(br#"{"choices":[{"delta":{"content":"bc"}}]}"#, 150);
        s.event(
            br#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
            160,
        );
        s.event(
            br#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#,
            170,
        );
        s.event(b"[DONE]", 171);
        let mut rec = RequestRecord::default();
        s.finish(&mut rec, 180, None);
        assert_eq!(rec.ttft_us, Some(100));
        assert_eq!(rec.itl_us, vec![50]);
        assert_eq!(
            (rec.output_tokens, rec.output_tokens_source),
            (Some(3), Some(TokenSource::Usage))
        );
        assert_eq!(rec.prompt_tokens, Some(7));
        assert_eq!(rec.error, None);

        let mut s = StreamState::new(Api::Completions);
        s.event(br#"{"choices":[{"text":"a"}]}"#, 10);
        let mut rec = RequestRecord::default();
        s.finish(&mut rec, 20, None);
        assert_eq!(rec.error.as_deref(), Some("stream ended without [DONE]"));
        assert_eq!(
            (rec.output_tokens, rec.output_tokens_source),
            (Some(1), Some(TokenSource::Events))
        );
    }

    #[test]
    fn mid_stream_error_and_llama_timings() {
        let mut s = StreamState::new(Api::Completions);
        s.event(br#"{"choices":[{"text":"a"}]}"#, 30_000);
        s.event(br#"{"error":{"code":500,"message":"boom"}}"#, 40_000);
        let mut rec = RequestRecord::default();
        s.finish(&mut rec, 41_000, None);
        assert_eq!(rec.error.as_deref(), Some("server error mid-stream: boom"));

        let mut s = StreamState::new(Api::Completions);
        s.event(br#"{"choices":[{"text":"a"}]}"#, 30_000);
        s.event(br#"{"choices":[{"text":"","finish_reason":"length"}],"usage":{"completion_tokens":1},"timings":{"prompt_ms":12.5}}"#, 31_000);
        s.event(b"[DONE]", 31_100);
        let mut rec = RequestRecord::default();
        s.finish(&mut rec, 31_200, None);
        assert_eq!(rec.server_queue_us, Some(17_500));
    }
}
