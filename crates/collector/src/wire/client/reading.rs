//! Reading one response: the stream's decoders and state as bytes arrive, a non-stream
//! body, and the failure a response amounts to.

use std::time::{Duration, Instant};

use crate::failure::FailureKind;
use crate::wire::api::Api;
use crate::wire::http1::{self, Conn, Head};
use crate::wire::sse::SseParser;
use crate::wire::stream::StreamState;
use sloscope_core::schema::RequestRow as RequestRecord;

/// One stream being read: its decoders, its events' state, and when things happened.
pub(super) struct Reading {
    pub(super) parser: SseParser,
    pub(super) state: StreamState,
    pub(super) body: http1::Body,
    pub(super) kind: Option<FailureKind>,
    pub(super) sent: Instant,
    /// The arrival of `[DONE]`.
    pub(super) done_at: Option<Instant>,
    /// The arrival stamp of the last bytes (kernel stamps never run backwards in a stream).
    pub(super) last_at: Instant,
    /// When an event last came (by the clock: the stall timer's reference). Bytes that carry
    /// no event (SSE comments such as `: ping`, chunk framing) are no progress: a server that
    /// sends only those has stalled all the same.
    pub(super) active: Instant,
}

impl Reading {
    pub(super) fn new(api: Api, head: &Head, sent: Instant, first_at: Instant) -> Reading {
        Reading {
            parser: SseParser::default(),
            state: StreamState::new(api),
            body: head.body(),
            kind: None,
            sent,
            done_at: None,
            last_at: first_at,
            active: Instant::now(),
        }
    }

    /// Feeds received bytes stamped `at`; true once the body has ended (or broke).
    pub(super) fn feed(&mut self, bytes: &[u8], at: Instant) -> bool {
        let at = at.max(self.last_at);
        self.last_at = at;
        let was_done = self.state.done;
        let at_us = us(at.saturating_duration_since(self.sent));
        let (parser, state) = (&mut self.parser, &mut self.state);
        let mut events = 0_usize;
        let fed = self.body.feed(bytes, &mut |data: &[u8]| {
            parser.feed(data, |field, ev| {
                events += 1;
                state.event(field, ev, at_us)
            })
        });
        if events > 0 {
            self.active = Instant::now();
        }
        if self.state.done && !was_done {
            self.done_at = Some(at);
        }
        match fed {
            Ok(ended) => ended,
            Err(e) => {
                self.fail(FailureKind::Stream, &e);
                true
            }
        }
    }

    pub(super) fn fail(&mut self, kind: FailureKind, why: &str) {
        self.kind = Some(kind);
        self.state.error.get_or_insert(kind.message(why));
    }

    /// The server closed the connection.
    pub(super) fn closed(&mut self, at: Instant) {
        self.last_at = at.max(self.last_at);
        if !self.body.ends_at_close() && !self.state.done {
            self.fail(
                FailureKind::Stream,
                "the server closed the connection before the response ended",
            );
        }
    }

    /// The connection broke.
    pub(super) fn broke(&mut self, why: &str) {
        if !self.state.done {
            self.fail(FailureKind::Stream, why);
        }
    }

    /// The state, the failure and the end instant.
    pub(super) fn finish(mut self) -> (StreamState, Option<FailureKind>, Instant) {
        if !self.state.done && self.state.error.is_none() {
            if let Some((field, data)) = self.parser.finish() {
                let at_us = us(self.last_at.saturating_duration_since(self.sent));
                self.state.event(field, &data, at_us);
            }
        }
        let end = match (self.done_at, self.kind) {
            (Some(at), _) => at,
            (None, None) => self.last_at,
            (None, Some(_)) => Instant::now(),
        };
        (self.state, self.kind, end)
    }
}

/// The body of a (non-streaming) response, up to `limit` bytes.
pub(super) async fn read_body(
    conn: &mut Conn,
    head: &Head,
    first: Vec<u8>,
    limit: usize,
) -> Vec<u8> {
    let mut body = head.body();
    let mut text = Vec::new();
    let keep = |text: &mut Vec<u8>, d: &[u8]| {
        let room = limit.saturating_sub(text.len());
        text.extend_from_slice(&d[..d.len().min(room)]);
    };
    let Ok(mut ended) = body.feed(&first, &mut |d| keep(&mut text, d)) else {
        return text;
    };
    while !ended && text.len() < limit {
        match conn.read().await {
            Ok((n, _)) if n > 0 => match body.feed(conn.data(n), &mut |d| keep(&mut text, d)) {
                Ok(e) => ended = e,
                Err(_) => break,
            },
            _ => break,
        }
    }
    text
}

pub(super) fn us(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

pub(super) fn fail(
    mut rec: RequestRecord,
    sent: Instant,
    kind: FailureKind,
    detail: &str,
) -> (RequestRecord, Option<FailureKind>) {
    rec.error = Some(kind.message(detail));
    rec.e2e_us = Some(us(Instant::now().saturating_duration_since(sent)));
    (rec, Some(kind))
}

/// The server's own message in an error body, in any backend's shape (OpenAI's and vLLM's
/// `{"error": {"message"}}`, the flat `{"object": "error", "message"}`, TGI's
/// `{"error": "…", "error_type"}`), else the first bytes of it.
pub(super) fn error_message(body: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) if v.is_object() => crate::wire::stream::error_text(&v),
        _ => crate::wire::stream::shown(body.trim_ascii()),
    }
}

/// Why a response is no event stream to time: a status other than 2xx (a redirect named with
/// its target: sloscope sends no request anywhere but the endpoint), a compressed body that was
/// not asked for, or a 200 whose body is JSON. `None` detail: the body says why.
pub(super) fn not_a_stream(head: &Head) -> Option<(FailureKind, Option<String>)> {
    if (300..400).contains(&head.status) {
        let to = head.header("location").unwrap_or("nowhere stated");
        let detail = format!(
            "a redirect to {to}: sloscope sends its requests to the configured endpoint only \
             and follows no redirect"
        );
        return Some((FailureKind::Http(head.status), Some(detail)));
    }
    if !(200..300).contains(&head.status) {
        return Some((FailureKind::Http(head.status), None));
    }
    if let Some(enc) = head
        .header("content-encoding")
        .filter(|e| !e.eq_ignore_ascii_case("identity"))
    {
        let detail = format!(
            "the server compressed the stream (Content-Encoding: {enc}) though sloscope asked \
             for none: its events cannot be timed as they arrive"
        );
        return Some((FailureKind::Stream, Some(detail)));
    }
    let json = head
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/json"));
    json.then_some((FailureKind::Stream, None))
}
