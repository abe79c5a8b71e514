//! One streaming request against an OpenAI-compatible endpoint, timed as bytes arrive.
//!
//! TTFT is taken at the first event with non-empty content (a role-only first chunk, empty
//! content and a final `choices: []` usage chunk are normal and not content). The arrival time
//! of every content event is kept, as µs offsets from the send, so the gaps telescope exactly.
//! Output tokens come from `usage.completion_tokens` when the server sends it, else from the
//! number of content events, and the source is recorded. Every request ends as a record: a
//! success, or a failure with its reason (HTTP error, mid-stream error, timeout, stall, reset,
//! stream without `[DONE]`, cancelled).

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde::Deserialize;
use sloscope_core::schema::TokenSource;

use crate::cancel::Cancel;
use crate::config::Api;
use crate::secret::Secret;
use crate::sse::SseParser;

/// Header identifying a request (`<repeat>-<index>`) so server logs can be matched.
pub const REQUEST_ID_HEADER: &str = "x-sloscope-request";

pub use sloscope_core::schema::RequestRow as RequestRecord;

/// A prepared HTTP client for one endpoint.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    api: Api,
    key: Option<Secret>,
    request_timeout: Duration,
    stall_timeout: Duration,
}

/// What the server said about itself on the way.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The server labelled itself a simulation (the test kit does).
    pub simulation: bool,
}

impl Client {
    /// A client for `base` (e.g. `http://127.0.0.1:8080`) with a connection pool sized for
    /// `concurrency` streams.
    pub fn new(
        base: &str,
        api: Api,
        key: Option<Secret>,
        concurrency: usize,
        request_timeout: Duration,
        stall_timeout: Duration,
    ) -> Result<Client, String> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(concurrency.max(1))
            // Below the common 5 s server keep-alive, so idle connections are dropped by us first.
            .pool_idle_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .no_proxy()
            .http1_only()
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Client {
            http,
            base: base.trim_end_matches('/').to_string(),
            api,
            key,
            request_timeout,
            stall_timeout,
        })
    }

    /// Base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The underlying HTTP client (health, metrics, tokenize).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    fn auth(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.key {
            Some(k) => rb.bearer_auth(k.expose()),
            None => rb,
        }
    }

    /// Opens `n` idle connections so that connection setup is not timed as TTFT.
    pub async fn warm_pool(&self, n: usize, health_path: &str) {
        let url = format!("{}{}", self.base, health_path);
        let futs = (0..n.max(1)).map(|_| {
            let rb = self.auth(self.http.get(&url));
            async move {
                if let Ok(r) = rb.send().await {
                    let _ = r.bytes().await;
                }
            }
        });
        futures_util::future::join_all(futs).await;
    }

    /// Sends one streaming request and times it. `t0` is the repeat start.
    pub async fn stream(
        &self,
        body: Bytes,
        t0: Instant,
        request_id: &str,
        cancel: &Cancel,
        obs: &mut Observed,
    ) -> RequestRecord {
        let url = format!("{}{}", self.base, self.api.path());
        let build = || {
            self.auth(self.http.post(&url))
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .header(REQUEST_ID_HEADER, request_id)
                .body(body.clone())
        };
        let mut sent = Instant::now();
        let mut rec = RequestRecord {
            send_offset_us: us(sent.saturating_duration_since(t0)),
            ..Default::default()
        };
        let mut deadline = sent + self.request_timeout;
        let mut send = tokio::select! {
            r = tokio::time::timeout_at(deadline.into(), build().send()) => r,
            _ = cancel.cancelled() => return fail(rec, sent, cancelled(cancel)),
        };
        // A pooled keep-alive connection that the server closed just as the request went out
        // (llama-server's HTTP library closes idle and long-used connections) never reached
        // the server: send it once more on a fresh connection, and time it from there.
        if let Ok(Err(e)) = &send {
            if is_stale_connection(e) {
                sent = Instant::now();
                rec.send_offset_us = us(sent.saturating_duration_since(t0));
                deadline = sent + self.request_timeout;
                send = tokio::select! {
                    r = tokio::time::timeout_at(deadline.into(), build().send()) => r,
                    _ = cancel.cancelled() => return fail(rec, sent, cancelled(cancel)),
                };
            }
        }
        let resp = match send {
            Err(_) => {
                return fail(
                    rec,
                    sent,
                    format!(
                        "timeout: no response headers within {:?}",
                        self.request_timeout
                    ),
                )
            }
            Ok(Err(e)) => return fail(rec, sent, format!("connection error: {}", error_chain(&e))),
            Ok(Ok(r)) => r,
        };
        if resp.headers().contains_key(sloscope_sim_header()) {
            obs.simulation = true;
        }
        let tgi_queue_ms = resp
            .headers()
            .get("x-queue-time")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<f64>().ok());
        let status = resp.status();
        if !status.is_success() {
            let text = tokio::time::timeout_at(deadline.into(), resp.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return fail(
                rec,
                sent,
                format!(
                    "HTTP {}: {}",
                    status.as_u16(),
                    error_message(text.as_bytes())
                ),
            );
        }
        let mut parser = SseParser::default();
        let mut state = StreamState::new(self.api);
        let mut body = resp.bytes_stream();
        // One timer and one cancellation future for the whole stream: the timer is moved only
        // when it fires early (activity since), so an event costs no timer bookkeeping.
        let mut last_activity = Instant::now();
        let timer =
            tokio::time::sleep_until((last_activity + self.stall_timeout).min(deadline).into());
        tokio::pin!(timer);
        let stop = cancel.cancelled();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                biased;
                next = body.next() => {
                    let now = Instant::now();
                    match next {
                        None => break,
                        Some(Err(e)) => {
                            state.error.get_or_insert(format!("stream error: {}", error_chain(&e)));
                            break;
                        }
                        Some(Ok(chunk)) => {
                            last_activity = now;
                            let at = us(now.saturating_duration_since(sent));
                            parser.feed(&chunk, |data| state.event(data, at));
                            if state.done || state.error.is_some() {
                                break;
                            }
                        }
                    }
                }
                _ = &mut timer => {
                    let now = Instant::now();
                    let due = (last_activity + self.stall_timeout).min(deadline);
                    if now < due {
                        timer.as_mut().reset(due.into());
                        continue;
                    }
                    let why = if now >= deadline {
                        format!("timeout: not finished within {:?}", self.request_timeout)
                    } else {
                        format!("stalled: no bytes for {:?}", self.stall_timeout)
                    };
                    state.error.get_or_insert(why);
                    break;
                }
                _ = &mut stop => {
                    state.error.get_or_insert(cancelled(cancel));
                    break;
                }
            }
        }
        if !state.done && state.error.is_none() {
            if let Some(data) = parser.finish() {
                state.event(&data, us(Instant::now().saturating_duration_since(sent)));
            }
        }
        let end = us(Instant::now().saturating_duration_since(sent));
        state.finish(&mut rec, end, tgi_queue_ms);
        rec
    }
}

/// The request died on a reused connection before any response: the server closed it.
fn is_stale_connection(e: &reqwest::Error) -> bool {
    let chain = error_chain(e);
    e.is_request()
        && (chain.contains("connection closed before message completed")
            || chain.contains("Connection reset by peer")
            || chain.contains("broken pipe"))
}

fn cancelled(cancel: &Cancel) -> String {
    format!(
        "cancelled: {}",
        cancel.reason().unwrap_or_else(|| "interrupted".into())
    )
}

fn sloscope_sim_header() -> &'static str {
    "x-sloscope-simulation"
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

fn fail(mut rec: RequestRecord, sent: Instant, why: String) -> RequestRecord {
    rec.error = Some(why);
    rec.e2e_us = Some(us(Instant::now().saturating_duration_since(sent)));
    rec
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// `error.message` of an OpenAI-style error body, else the first 200 bytes of it.
fn error_message(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct E {
        error: serde_json::Value,
    }
    if let Ok(e) = serde_json::from_slice::<E>(body) {
        if let Some(m) = e.error.get("message").and_then(|m| m.as_str()) {
            return m.to_string();
        }
        if let Some(m) = e.error.as_str() {
            return m.to_string();
        }
    }
    let end = body.len().min(200);
    String::from_utf8_lossy(&body[..end]).trim().to_string()
}

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
struct StreamState {
    api: Api,
    first_us: Option<u64>,
    last_us: u64,
    gaps: Vec<u32>,
    events: u32,
    usage_prompt: Option<u32>,
    usage_completion: Option<u32>,
    prompt_ms: Option<f64>,
    done: bool,
    error: Option<String>,
}

impl StreamState {
    fn new(api: Api) -> Self {
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

    fn event(&mut self, data: &[u8], at_us: u64) {
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

    fn finish(self, rec: &mut RequestRecord, end_us: u64, tgi_queue_ms: Option<f64>) {
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
fn scan_event(data: &[u8], api: Api) -> Scan {
    let finder = |needle: &[u8]| memchr::memmem::find(data, needle);
    if finder(b"\"usage\"").is_some()
        || finder(b"\"error\"").is_some()
        || finder(b"\"timings\"").is_some()
    {
        return Scan {
            content: false,
            needs_parse: true,
        };
    }
    let keys: &[&[u8]] = match api {
        Api::Completions => &[b"\"text\""],
        Api::Chat => &[b"\"content\"", b"\"reasoning_content\""],
    };
    let mut content = false;
    for key in keys {
        let Some(pos) = finder(key) else { continue };
        let mut i = pos + key.len();
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
        if memchr::memmem::find(&data[i..], key).is_some() {
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
