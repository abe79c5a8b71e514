//! One streaming request against an OpenAI-compatible endpoint, timed as bytes arrive.
//!
//! TTFT is taken at the first event with non-empty content (a role-only first chunk, empty
//! content and a final `choices: []` usage chunk are normal and not content). The arrival time
//! of every content event is kept, as µs offsets from the send, so the gaps telescope exactly.
//! Output tokens come from `usage.completion_tokens` when the server sends it, else from the
//! number of content events, and the source is recorded. Every request ends as a record: a
//! success, or a failure with its reason (HTTP error, mid-stream error, timeout, stall, reset,
//! stream without `[DONE]`, cancelled).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::cancel::Cancel;
use crate::error::CollectError;
use crate::failure::FailureKind;
use crate::wire::api::Api;
use crate::wire::http1::{self, Conn, ExchangeError, Head, Origin, Pool};
use crate::wire::secret::Secret;
use crate::wire::stream::StreamState;

pub use sloscope_core::measure::{REQUEST_ID_HEADER, SIMULATION_HEADER};

pub use sloscope_core::schema::RequestRow as RequestRecord;

mod reading;
use reading::{error_message, fail, not_a_stream, read_body, us, Reading};

/// A prepared HTTP client for one endpoint.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// The timed requests' own keep-alive connections (see `http1`).
    pool: Arc<Pool>,
    base: String,
    api: Api,
    /// `Authorization` header value.
    bearer: Option<Arc<str>>,
    request_timeout: Duration,
    stall_timeout: Duration,
    /// Keep each answer's text (a session's next turn resends it).
    keep_text: bool,
}

/// What the server said about itself on the way.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The server labelled itself a simulation (the test kit does).
    pub simulation: bool,
    /// The answer's text, from a client that keeps it ([`Client::keeping_text`]).
    pub text: Option<String>,
}

/// After `[DONE]`, how long the rest of the body (the chunked terminator) is waited for so
/// that the connection can be reused; past it the connection is closed.
const AFTER_DONE: Duration = Duration::from_millis(100);
/// An error response's body is read up to this size.
const ERROR_BODY: usize = 64 * 1024;

/// One step of reading a stream.
enum Step {
    Read(std::io::Result<(usize, Instant)>),
    Timer,
    Stop,
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
        let origin = Origin::parse(base).map_err(CollectError::Http)?;
        let mut builder = reqwest::Client::builder();
        // The key goes with every request of this client: streams, /tokenize, /metrics, health.
        if let Some(k) = &key {
            builder = builder.default_headers(k.auth_headers());
        }
        // No request of sloscope goes anywhere but the endpoint: a redirect is an answer (an
        // error naming where it pointed), never followed.
        let http = builder
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(4)
            // Below the common 5 s server keep-alive, so idle connections are dropped by us first.
            .pool_idle_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .no_proxy()
            .http1_only()
            .build()
            .map_err(|e| CollectError::Http(e.to_string()))?;
        Ok(Client {
            http,
            pool: Arc::new(Pool::new(origin, concurrency)),
            base: base.trim_end_matches('/').to_string(),
            api,
            bearer: key.map(|k| Arc::from(format!("Bearer {}", k.expose()))),
            request_timeout,
            stall_timeout,
            keep_text: false,
        })
    }

    /// The same client (and connections), keeping each answer's text in [`Observed::text`].
    pub fn keeping_text(&self) -> Client {
        Client {
            keep_text: true,
            ..self.clone()
        }
    }

    /// Base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The underlying HTTP client (health, metrics, tokenize).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    fn auth(&self) -> Vec<(&str, &str)> {
        self.bearer
            .as_deref()
            .map(|b| ("authorization", b))
            .into_iter()
            .collect()
    }

    /// Why connections are no longer reused, once the server has closed kept-alive ones early.
    pub fn reuse_note(&self) -> Option<String> {
        (!self.pool.reusing()).then(|| {
            format!(
                "the server closed {} kept-alive connection(s) just after a response although it \
                 advertised keep-alive: sloscope stopped reusing connections to it, so each later \
                 request opened its own (its connect time is in its TTFT, as for any client)",
                self.pool.closed_early()
            )
        })
    }

    /// Opens `n` idle connections, each checked with a GET of `health_path`, so that
    /// connection setup is not timed as TTFT; bounded by `timeout`.
    pub async fn warm_pool(&self, n: usize, health_path: &str, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.pool.warm(n, health_path, &self.auth())).await;
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
        let mut rec = RequestRecord::default();
        let started = self
            .send(&body, request_id, cancel, &mut sent, &mut rec.resent)
            .await;
        rec.send_offset_us = us(sent.saturating_duration_since(t0));
        let (mut conn, head, first, first_at) = match started {
            Ok(s) => s,
            Err((kind, detail)) => return fail(rec, sent, kind, &detail),
        };
        let deadline = sent + self.request_timeout;
        if head.header(SIMULATION_HEADER).is_some() {
            obs.simulation = true;
        }
        let tgi_queue_ms = head
            .header("x-queue-time")
            .and_then(|v| v.parse::<f64>().ok());
        if let Some((kind, detail)) = not_a_stream(&head) {
            let text = tokio::time::timeout_at(
                deadline.into(),
                read_body(&mut conn, &head, first, ERROR_BODY),
            )
            .await
            .unwrap_or_default();
            let detail = match detail {
                Some(d) => d,
                None if head.status == 200 => format!(
                    "a JSON body instead of an event stream: {}",
                    error_message(&text)
                ),
                None => error_message(&text),
            };
            return fail(rec, sent, kind, &detail);
        }
        let (mut state, kind, end) = self
            .read_events(conn, &head, (first, first_at), sent, deadline, cancel)
            .await;
        obs.text = state.take_text();
        state.finish(
            &mut rec,
            us(end.saturating_duration_since(sent)),
            tgi_queue_ms,
            crate::wire::stream::body_cap(&body),
        );
        let kind = kind.or(rec.error.as_ref().map(|_| FailureKind::Stream));
        (rec, kind)
    }

    /// Sends the request; returns the connection, the response head and the body bytes that
    /// came with it (and when), or why there is none. `sent` is stamped just before the
    /// request is written, and moved when a stale pooled connection makes a second attempt
    /// necessary.
    async fn send(
        &self,
        body: &Bytes,
        request_id: &str,
        cancel: &Cancel,
        sent: &mut Instant,
        resent: &mut bool,
    ) -> Result<(Conn, Head, Vec<u8>, Instant), (FailureKind, String)> {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
            ("accept-encoding", "identity"),
            (REQUEST_ID_HEADER, request_id),
        ];
        headers.extend(self.auth());
        // head and body in one buffer, ready before the send is stamped
        let mut request = self
            .pool
            .origin
            .head("POST", self.api.path(), &headers, body.len());
        request.extend_from_slice(body);
        let cancelled = || (FailureKind::Cancelled, cancel.message());
        let timed_out = || {
            (
                FailureKind::Timeout,
                format!("no response headers within {:?}", self.request_timeout),
            )
        };
        // The first attempt's stamp: a request sent again is timed from it (its reconnect is
        // in its TTFT, as for any client that retries).
        let mut first: Option<Instant> = None;
        for attempt in 0..2 {
            *sent = Instant::now();
            let deadline = first.unwrap_or(*sent) + self.request_timeout;
            let pool = &self.pool;
            let go = async {
                let mut conn = if attempt == 0 {
                    pool.conn().await
                } else {
                    pool.fresh().await
                }
                .map_err(|e| ExchangeError::Failed(format!("connecting to {}: {e}", self.base)))?;
                // The stamp the request is timed from: just before its bytes are written.
                *sent = Instant::now();
                let (head, rest, at) = http1::exchange(&mut conn, &request).await?;
                Ok::<_, ExchangeError>((conn, head, rest, at))
            };
            let r = tokio::select! {
                r = tokio::time::timeout_at(deadline.into(), go) => r,
                _ = cancel.cancelled() => {
                    *sent = first.unwrap_or(*sent);
                    return Err(cancelled());
                }
            };
            match r {
                Err(_) => {
                    *sent = first.unwrap_or(*sent);
                    return Err(timed_out());
                }
                Ok(Ok((conn, head, rest, at))) => {
                    *sent = first.unwrap_or(*sent);
                    return Ok((conn, head, rest, at));
                }
                // A pooled keep-alive connection that the server closed just as the request
                // went out (llama-server's HTTP library closes idle and long-used
                // connections; a close later than that is a failure, `http1::exchange`): sent
                // once more on a fresh connection, still timed from the first attempt, and
                // recorded as resent — the server may have read it, so its extra load is said
                // (invariant `request_resent`), never hidden.
                Ok(Err(ExchangeError::Stale(_))) if attempt == 0 => {
                    first = Some(*sent);
                    *resent = true;
                    pool.saw_stale();
                    continue;
                }
                Ok(Err(e)) => {
                    *sent = first.unwrap_or(*sent);
                    return Err((FailureKind::Connection, e.to_string()));
                }
            }
        }
        *sent = first.unwrap_or(*sent);
        Err((
            FailureKind::Connection,
            "the server closed the connection twice before answering".into(),
        ))
    }

    /// Reads the event stream, each read stamped with when its bytes arrived. One timer and
    /// one cancellation future serve the whole stream: the timer is moved only when it fires
    /// early (activity since), so an event costs no timer bookkeeping. Returns the state, the
    /// failure and the end instant (the arrival of `[DONE]`, else of the last bytes, else now).
    async fn read_events(
        &self,
        mut conn: Conn,
        head: &Head,
        (first, first_at): (Vec<u8>, Instant),
        sent: Instant,
        deadline: Instant,
        cancel: &Cancel,
    ) -> (StreamState, Option<FailureKind>, Instant) {
        let mut r = Reading::new(self.api, head, sent, first_at);
        if self.keep_text {
            r.state.keep_text();
        }
        let mut ended = r.feed(&first, first_at);
        let timer = tokio::time::sleep_until((r.active + self.stall_timeout).min(deadline).into());
        tokio::pin!(timer);
        let stop = cancel.cancelled();
        tokio::pin!(stop);
        while !ended && r.state.error.is_none() {
            if r.done_at.is_some() {
                // only the end of the body is still to come
                let due = (r.active + AFTER_DONE).min(deadline);
                if timer.deadline() > due.into() {
                    timer.as_mut().reset(due.into());
                }
            }
            let step = tokio::select! {
                biased;
                res = conn.read() => Step::Read(res),
                _ = &mut timer => Step::Timer,
                _ = &mut stop => Step::Stop,
            };
            match step {
                Step::Read(Ok((0, at))) => {
                    r.closed(at);
                    break;
                }
                Step::Read(Ok((n, at))) => ended = r.feed(conn.data(n), at),
                Step::Read(Err(e)) => {
                    r.broke(&e.to_string());
                    break;
                }
                Step::Timer => {
                    if r.done_at.is_some() {
                        break; // the terminator did not follow [DONE]: close the connection
                    }
                    let due = (r.active + self.stall_timeout).min(deadline);
                    if Instant::now() < due {
                        timer.as_mut().reset(due.into());
                        continue;
                    }
                    self.timed_out(&mut r, deadline);
                    break;
                }
                Step::Stop => {
                    r.fail(FailureKind::Cancelled, &cancel.message());
                    break;
                }
            }
        }
        if ended && r.state.done && r.state.error.is_none() && r.body.reusable(head) {
            self.pool.put(conn);
        }
        r.finish()
    }

    /// The request timed out, or stalled.
    fn timed_out(&self, r: &mut Reading, deadline: Instant) {
        if Instant::now() >= deadline {
            let why = format!("not finished within {:?}", self.request_timeout);
            r.fail(FailureKind::Timeout, &why);
        } else {
            r.fail(
                FailureKind::Stalled,
                &format!(
                    "no event for {:?} (nothing, or only keep-alive comments)",
                    self.stall_timeout
                ),
            );
        }
    }
}
