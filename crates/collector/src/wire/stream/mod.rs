//! One stream's events: which carry content (TTFT, gaps), usage and timings, or an error; and
//! the request record they add up to. A fast scanner classifies plain content chunks without
//! parsing them; anything else goes to the JSON parser.
//!
//! Only what the stream proves is recorded. An error in any of the shapes the backends send
//! mid-stream (`data: {"error": …}` of vLLM, SGLang, TGI and OpenAI, the flat
//! `{"object": "error"}`, llama-server's `error:` field, a `finish_reason` of `abort` or
//! `error`) fails the request with the server's message, whatever follows it. An event that is
//! not JSON, is cut short, or carries nothing sloscope understands fails the request with its
//! first bytes — never skipped, never counted as a token. The server's `usage` is believed only
//! where the stream agrees: each content event carries at least one token, and no request may
//! get more tokens than the `max_tokens` it was sent.

use memchr::memmem;
use serde::Deserialize;
use sloscope_core::schema::{RequestRow as RequestRecord, ServerCounts, TokenSource};

use crate::wire::api::Api;
use crate::wire::sse::Field;

mod scan;
use scan::scan_event;

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.prompt_tokens_details` (OpenAI, vLLM with `--enable-prompt-tokens-details`, SGLang).
#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u32>,
}

/// llama-server's `timings`: prompt time, tokens reused from its cache, and a draft model's
/// proposals and acceptances (speculative decoding).
#[derive(Deserialize)]
struct Timings {
    prompt_ms: Option<f64>,
    cache_n: Option<u32>,
    draft_n: Option<u32>,
    draft_n_accepted: Option<u32>,
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
    server: ServerCounts,
    pub(crate) done: bool,
    pub(crate) error: Option<String>,
    /// The answer's text, when kept (every content event is then parsed).
    text: Option<String>,
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
            server: ServerCounts::default(),
            done: false,
            error: None,
            text: None,
        }
    }

    /// Keep the answer's text (content only, as a chat client resends it).
    pub(crate) fn keep_text(&mut self) {
        self.text = Some(String::new());
    }

    /// The answer's text, if kept.
    pub(crate) fn take_text(&mut self) -> Option<String> {
        self.text.take()
    }

    pub(crate) fn event(&mut self, field: Field, data: &[u8], at_us: u64) {
        if self.done || self.error.is_some() {
            return;
        }
        let data = data.trim_ascii();
        if field == Field::Error {
            let v = serde_json::from_slice::<serde_json::Value>(data).ok();
            let msg = v.as_ref().map_or_else(|| shown(data), error_text);
            self.error = Some(format!("server error mid-stream: {msg}"));
            return;
        }
        if data == b"[DONE]" {
            self.done = true;
            return;
        }
        let scan = scan_event(data, self.api);
        if scan.needs_parse || (scan.content && self.text.is_some()) {
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
    /// could not classify. An event that is not a JSON object, or that carries none of
    /// `choices`, `usage`, `timings` or an error, fails the request with its first bytes.
    fn parse_full(&mut self, data: &[u8], at_us: u64) {
        let v: serde_json::Value = match serde_json::from_slice(data) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) | Err(_) => {
                self.error = Some(format!(
                    "an event that is not a JSON object (cut short, or not JSON): {}",
                    shown(data)
                ));
                return;
            }
        };
        if let Some(msg) = stream_error(&v) {
            self.error = Some(format!("server error mid-stream: {msg}"));
            return;
        }
        let choices = v.get("choices");
        let understood = choices.is_some_and(serde_json::Value::is_array)
            || (choices.is_none() && (v.get("usage").is_some() || v.get("timings").is_some()));
        if !understood {
            self.error = Some(format!(
                "an event sloscope does not understand (no choices, usage or timings): {}",
                shown(data)
            ));
            return;
        }
        if let Some(i) = other_choice(&v) {
            self.error = Some(format!(
                "an event for choice {i}, where the request asked for one choice (index 0): {}",
                shown(data)
            ));
            return;
        }
        if self.content(&v) {
            self.content_at(at_us);
            self.append_text(&v);
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            match serde_json::from_value::<Usage>(u.clone()) {
                Ok(u) => {
                    if let Some(why) = self.usage_contradicts(&u) {
                        self.error.get_or_insert(why);
                        return;
                    }
                    self.usage_prompt = u.prompt_tokens.or(self.usage_prompt);
                    self.usage_completion = u.completion_tokens.or(self.usage_completion);
                    let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens);
                    self.server.cached_prompt_tokens = cached.or(self.server.cached_prompt_tokens);
                }
                // Counts that are not counts (negative, fractional, text): the server's usage
                // cannot be believed, and dropping it silently would let the event count stand
                // in for it. The request fails with why, as for a count the stream contradicts.
                Err(e) => {
                    self.error.get_or_insert(format!(
                        "the server's usage is not token counts ({e}): {}",
                        shown(u.to_string().as_bytes())
                    ));
                }
            }
        }
        if let Some(t) = v.get("timings").filter(|t| !t.is_null()) {
            if let Ok(t) = serde_json::from_value::<Timings>(t.clone()) {
                self.prompt_ms = t.prompt_ms;
                let s = &mut self.server;
                s.cached_prompt_tokens = s.cached_prompt_tokens.or(t.cache_n);
                s.draft_tokens = t.draft_n.or(s.draft_tokens);
                s.draft_accepted_tokens = t.draft_n_accepted.or(s.draft_accepted_tokens);
            }
        }
    }

    /// A usage block against the stream's earlier ones: a server that reports usage on every
    /// event (vLLM's continuous usage) keeps the prompt count and never lowers the completion
    /// count; one that does says two counts of one request, and neither is believed.
    fn usage_contradicts(&self, u: &Usage) -> Option<String> {
        if let (Some(before), Some(now)) = (self.usage_prompt, u.prompt_tokens) {
            if before != now {
                return Some(format!(
                    "the server's usage blocks disagree: prompt_tokens {before}, then {now}"
                ));
            }
        }
        match (self.usage_completion, u.completion_tokens) {
            (Some(before), Some(now)) if now < before => Some(format!(
                "the server's usage blocks disagree: completion_tokens {before}, then {now} \
                 (a count that falls)"
            )),
            _ => None,
        }
    }

    fn append_text(&mut self, v: &serde_json::Value) {
        let Some(text) = self.text.as_mut() else {
            return;
        };
        let key = match self.api {
            Api::Completions => &v["choices"][0]["text"],
            Api::Chat => &v["choices"][0]["delta"]["content"],
        };
        text.push_str(key.as_str().unwrap_or(""));
    }

    fn content(&self, v: &serde_json::Value) -> bool {
        v["choices"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                let s = |x: &serde_json::Value| x.as_str().is_some_and(|s| !s.is_empty());
                match self.api {
                    Api::Completions => s(&c["text"]),
                    Api::Chat => s(&c["delta"]["content"]) || s(&c["delta"]["reasoning_content"]),
                }
            })
        })
    }

    /// The request's row: times, token counts (the server's `usage` where the stream agrees
    /// with it, else the content events), the cap it was sent with, and its error. `cap` is
    /// the `max_tokens` the request was sent with.
    pub(crate) fn finish(
        mut self,
        rec: &mut RequestRecord,
        end_us: u64,
        tgi_queue_ms: Option<f64>,
        cap: Option<u32>,
    ) {
        rec.e2e_us = Some(end_us);
        rec.ttft_us = self.first_us;
        rec.itl_us = std::mem::take(&mut self.gaps);
        rec.max_output_tokens = cap;
        rec.output_events = Some(self.events);
        if let Some(p) = self.usage_prompt {
            rec.prompt_tokens = Some(p);
            rec.prompt_tokens_source = Some(TokenSource::Usage);
        }
        // A count the stream contradicts is not believed: the events it proves are kept.
        let mut usage = self.usage_completion;
        if let Some(claim) = self.claims_contradict(cap) {
            self.error.get_or_insert(claim);
            usage = None;
        }
        match (usage, self.events) {
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
        if let Some(claim) = self.counts_contradict() {
            self.error.get_or_insert(claim);
            self.server = ServerCounts::default();
        }
        rec.server = self.server;
        rec.server_queue_us = server_queue_us(tgi_queue_ms, self.prompt_ms, self.first_us);
        rec.error = match (self.error, self.done, self.first_us) {
            (Some(e), _, _) => Some(e),
            (None, false, _) => Some("stream ended without [DONE]".into()),
            (None, true, None) => Some("stream finished without any content".into()),
            (None, true, Some(_)) => None,
        };
    }
}

impl StreamState {
    /// Where the server's cache or draft counts cannot be: more prompt tokens from cache than
    /// the prompt has, more draft tokens accepted than drafted. Such a server's counts are not
    /// believed (the request fails with why, as for a token count the stream contradicts).
    fn counts_contradict(&self) -> Option<String> {
        let s = &self.server;
        if let (Some(c), Some(p)) = (s.cached_prompt_tokens, self.usage_prompt) {
            if c > p {
                return Some(format!(
                    "the server says {c} prompt tokens came from its cache, more than the \
                     {p} prompt tokens it counted: its counts are not believed"
                ));
            }
        }
        match (s.draft_accepted_tokens, s.draft_tokens) {
            (Some(a), Some(d)) if a > d => Some(format!(
                "the server says {a} draft tokens were accepted of {d} drafted: its counts are \
                 not believed"
            )),
            (Some(a), None) => Some(format!(
                "the server says {a} draft tokens were accepted without saying how many were \
                 drafted: its counts are not believed"
            )),
            _ => None,
        }
    }

    /// Where the server's token count contradicts what the stream proves: fewer tokens than
    /// content events (each carries at least one), or more than the cap the request was sent
    /// with (also when counted by events).
    fn claims_contradict(&self, cap: Option<u32>) -> Option<String> {
        let events = self.events;
        if let Some(c) = self.usage_completion.filter(|&c| c < events) {
            return Some(format!(
                "the server's usage.completion_tokens {c} is below the {events} content events \
                 it streamed (each carries at least one token): its count is not believed"
            ));
        }
        let cap = cap?;
        if let Some(c) = self.usage_completion.filter(|&c| c > cap) {
            return Some(format!(
                "the server's usage.completion_tokens {c} exceeds the max_tokens {cap} the request \
                 was sent with ({events} content events streamed): its count is not believed"
            ));
        }
        (events > cap).then(|| {
            format!("{events} content events streamed, more than the max_tokens {cap} the request was sent with")
        })
    }
}

/// The index of a choice other than the request's one (0), if the event carries one.
fn other_choice(v: &serde_json::Value) -> Option<u64> {
    v["choices"]
        .as_array()?
        .iter()
        .find_map(|c| c.get("index")?.as_u64().filter(|&i| i != 0))
}

/// The server's error in a stream event, in any of the backends' shapes: `{"error": {…}}` or
/// `{"error": "…"}` (vLLM, SGLang, TGI, OpenAI, newer llama-server), the flat
/// `{"object": "error", "message": …}`, or a choice that finished with `abort` or `error`.
fn stream_error(v: &serde_json::Value) -> Option<String> {
    if v.get("error").is_some_and(|e| !e.is_null()) || v["object"] == "error" {
        return Some(error_text(v));
    }
    let finish = v["choices"].as_array()?.iter().find_map(|c| {
        let r = c.get("finish_reason")?;
        let kind = r
            .as_str()
            .or_else(|| r.get("type").and_then(|t| t.as_str()))?;
        matches!(kind, "abort" | "error").then(|| {
            let msg = r.get("message").and_then(|m| m.as_str());
            format!(
                "finish_reason {kind}{}",
                msg.map(|m| format!(": {m}")).unwrap_or_default()
            )
        })
    })?;
    Some(format!("the server ended the request ({finish})"))
}

/// The message of an error object in any backend's shape, with its type and code when given.
pub(crate) fn error_text(v: &serde_json::Value) -> String {
    let e = match v.get("error") {
        Some(e) if !e.is_null() => e,
        _ => v,
    };
    if let Some(s) = e.as_str() {
        let kind = v.get("error_type").and_then(|t| t.as_str());
        return match kind {
            Some(k) => format!("{s} ({k})"),
            None => s.to_string(),
        };
    }
    let msg = e.get("message").and_then(|m| m.as_str());
    let kind = e.get("type").and_then(|t| t.as_str());
    let code = e
        .get("code")
        .filter(|c| !c.is_null())
        .map(|c| c.to_string());
    let detail: Vec<String> = kind.map(str::to_string).into_iter().chain(code).collect();
    match (msg, detail.is_empty()) {
        (Some(m), true) => m.to_string(),
        (Some(m), false) => format!("{m} ({})", detail.join(", ")),
        (None, _) => shown(e.to_string().as_bytes()),
    }
}

/// The first bytes of a payload, for a message.
pub(crate) fn shown(data: &[u8]) -> String {
    let cut = data.len().min(160);
    let mut s = String::from_utf8_lossy(&data[..cut]).into_owned();
    if cut < data.len() {
        s.push('…');
    }
    s
}

/// The `max_tokens` a request body (JSON that sloscope built) asks for.
pub(crate) fn body_cap(body: &[u8]) -> Option<u32> {
    const KEY: &[u8] = b"\"max_tokens\"";
    let mut from = 0;
    while let Some(p) = memmem::find(&body[from..], KEY).map(|p| p + from) {
        from = p + KEY.len();
        // Inside a JSON string a quote is escaped: an escaped one is text, not the key.
        if p > 0 && body[p - 1] == b'\\' {
            continue;
        }
        let rest = body[from..]
            .trim_ascii_start()
            .strip_prefix(b":")?
            .trim_ascii_start();
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
    }
    None
}

#[cfg(test)]
mod tests;

/// The server's queue wait of one request, µs: TGI's stated queue time, or llama-server's
/// time to first token less its prompt processing. `None` where the server's figure cannot be
/// true — not a number, negative, past the first token (the request left the queue to make it),
/// or prompt processing longer than the whole wait for the first token — never a 0 standing in
/// for it.
fn server_queue_us(
    tgi_queue_ms: Option<f64>,
    prompt_ms: Option<f64>,
    first_us: Option<u64>,
) -> Option<u64> {
    const SLACK_US: f64 = 1_000.0;
    let max = sloscope_core::checks::MAX_TIME_US as f64;
    let us = |ms: f64| (ms.is_finite() && ms >= 0.0).then_some(ms * 1000.0);
    match (tgi_queue_ms, prompt_ms, first_us) {
        (Some(q), _, first) => us(q)
            .filter(|&q| q <= first.map_or(max, |t| t as f64 + SLACK_US))
            .map(|q| q as u64),
        (None, Some(p), Some(ttft)) => us(p)
            .filter(|&p| p <= ttft as f64 + SLACK_US)
            .map(|p| ttft.saturating_sub(p as u64)),
        _ => None,
    }
}
