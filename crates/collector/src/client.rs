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

use crate::cancel::Cancel;
use crate::config::Api;
use crate::error::CollectError;
use crate::failure::FailureKind;
use crate::secret::Secret;
use crate::sse::SseParser;
use crate::stream::StreamState;

pub use sloscope_core::protocol::{REQUEST_ID_HEADER, SIMULATION_HEADER};

pub use sloscope_core::schema::RequestRow as RequestRecord;

/// A prepared HTTP client for one endpoint.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    api: Api,
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
    ) -> Result<Client, CollectError> {
        let mut builder = reqwest::Client::builder();
        // The key goes with every request of this client: streams, /tokenize, /metrics, health.
        if let Some(k) = &key {
            builder = builder.default_headers(k.auth_headers());
        }
        let http = builder
            .pool_max_idle_per_host(concurrency.max(1))
            // Below the common 5 s server keep-alive, so idle connections are dropped by us first.
            .pool_idle_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .no_proxy()
            .http1_only()
            .build()
            .map_err(|e| CollectError::Http(e.to_string()))?;
        Ok(Client {
            http,
            base: base.trim_end_matches('/').to_string(),
            api,
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

    /// Opens `n` idle connections so that connection setup is not timed as TTFT; each
    /// attempt is bounded by `timeout`.
    pub async fn warm_pool(&self, n: usize, health_path: &str, timeout: Duration) {
        let url = format!("{}{}", self.base, health_path);
        let futs = (0..n.max(1)).map(|_| {
            let rb = self.http.get(&url).timeout(timeout);
            async move {
                if let Ok(r) = rb.send().await {
                    let _ = r.bytes().await;
                }
            }
        });
        futures_util::future::join_all(futs).await;
    }

    /// Sends one streaming request and times it. `t0` is the repeat start. A failed request
    /// returns its row (error text set) with the kind of failure.
    pub async fn stream(
        &self,
        body: Bytes,
        t0: Instant,
        request_id: &str,
        cancel: &Cancel,
        obs: &mut Observed,
    ) -> (RequestRecord, Option<FailureKind>) {
        let mut sent = Instant::now();
        let mut rec = RequestRecord {
            send_offset_us: us(sent.saturating_duration_since(t0)),
            ..Default::default()
        };
        let resp = match self.send(&body, request_id, cancel, &mut sent).await {
            Ok(r) => r,
            Err((kind, detail)) => {
                rec.send_offset_us = us(sent.saturating_duration_since(t0));
                return fail(rec, sent, kind, &detail);
            }
        };
        rec.send_offset_us = us(sent.saturating_duration_since(t0));
        let deadline = sent + self.request_timeout;
        if resp.headers().contains_key(SIMULATION_HEADER) {
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
            let detail = error_message(text.as_bytes());
            return fail(rec, sent, FailureKind::Http(status.as_u16()), &detail);
        }
        let (state, kind) = self.read_events(resp, sent, deadline, cancel).await;
        let end = us(Instant::now().saturating_duration_since(sent));
        state.finish(&mut rec, end, tgi_queue_ms);
        let kind = kind.or(rec.error.as_ref().map(|_| FailureKind::Stream));
        (rec, kind)
    }

    /// Sends the request; returns the response headers or why there are none. `sent` is moved
    /// when a stale pooled connection makes a second attempt necessary.
    async fn send(
        &self,
        body: &Bytes,
        request_id: &str,
        cancel: &Cancel,
        sent: &mut Instant,
    ) -> Result<reqwest::Response, (FailureKind, String)> {
        let url = format!("{}{}", self.base, self.api.path());
        let build = || {
            self.http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .header(REQUEST_ID_HEADER, request_id)
                .body(body.clone())
        };
        let cancelled = || (FailureKind::Cancelled, cancel.message());
        let mut deadline = *sent + self.request_timeout;
        let mut send = tokio::select! {
            r = tokio::time::timeout_at(deadline.into(), build().send()) => r,
            _ = cancel.cancelled() => return Err(cancelled()),
        };
        // A pooled keep-alive connection that the server closed just as the request went out
        // (llama-server's HTTP library closes idle and long-used connections) never reached
        // the server: send it once more on a fresh connection, and time it from there.
        if let Ok(Err(e)) = &send {
            if is_stale_connection(e) {
                *sent = Instant::now();
                deadline = *sent + self.request_timeout;
                send = tokio::select! {
                    r = tokio::time::timeout_at(deadline.into(), build().send()) => r,
                    _ = cancel.cancelled() => return Err(cancelled()),
                };
            }
        }
        match send {
            Err(_) => Err((
                FailureKind::Timeout,
                format!("no response headers within {:?}", self.request_timeout),
            )),
            Ok(Err(e)) => Err((FailureKind::Connection, error_chain(&e))),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Reads the event stream, stamping each chunk as it arrives. One timer and one
    /// cancellation future serve the whole stream: the timer is moved only when it fires early
    /// (activity since), so an event costs no timer bookkeeping.
    async fn read_events(
        &self,
        resp: reqwest::Response,
        sent: Instant,
        deadline: Instant,
        cancel: &Cancel,
    ) -> (StreamState, Option<FailureKind>) {
        let mut parser = SseParser::default();
        let mut state = StreamState::new(self.api);
        let mut kind = None;
        let mut body = resp.bytes_stream();
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
                            kind = Some(FailureKind::Stream);
                            state.error.get_or_insert(FailureKind::Stream.message(&error_chain(&e)));
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
                    let (k, why) = if now >= deadline {
                        (FailureKind::Timeout, format!("not finished within {:?}", self.request_timeout))
                    } else {
                        (FailureKind::Stalled, format!("no bytes for {:?}", self.stall_timeout))
                    };
                    kind = Some(k);
                    state.error.get_or_insert(k.message(&why));
                    break;
                }
                _ = &mut stop => {
                    kind = Some(FailureKind::Cancelled);
                    state.error.get_or_insert(FailureKind::Cancelled.message(&cancel.message()));
                    break;
                }
            }
        }
        if !state.done && state.error.is_none() {
            if let Some(data) = parser.finish() {
                state.event(&data, us(Instant::now().saturating_duration_since(sent)));
            }
        }
        (state, kind)
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

fn us(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

fn fail(
    mut rec: RequestRecord,
    sent: Instant,
    kind: FailureKind,
    detail: &str,
) -> (RequestRecord, Option<FailureKind>) {
    rec.error = Some(kind.message(detail));
    rec.e2e_us = Some(us(Instant::now().saturating_duration_since(sent)));
    (rec, Some(kind))
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
