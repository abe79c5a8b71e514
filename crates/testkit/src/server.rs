//! A scripted OpenAI-compatible SSE server: `/v1/completions`, `/v1/chat/completions`
//! (`stream: true`), `/health`, `/metrics` (llama.cpp-style gauges), `/tokenize`.
//!
//! Timing is scripted: after a request is admitted to a slot, the first content event is
//! written `ttft` later and each further event `gap` after the previous one. The server stamps
//! every event just before writing it, so tests can compare the client's measurements with what
//! was really sent.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};

pub use sloscope_core::measure::{REQUEST_ID_HEADER, SIMULATION_HEADER};

mod script;
pub use script::{Fault, PrefixCache, Script};

/// What the server did for one request.
#[derive(Debug, Clone)]
pub struct Served {
    /// Arrival index.
    pub index: u64,
    /// The client's `x-sloscope-request` header, if sent.
    pub request_id: Option<String>,
    /// When the request head was read.
    pub received: Instant,
    /// When each content event was written.
    pub events: Vec<Instant>,
}

struct State {
    script: Script,
    arrivals: AtomicU64,
    waiting: AtomicUsize,
    running: AtomicUsize,
    slots: Semaphore,
    served: Mutex<Vec<Served>>,
    /// Burst bodies, rendered once per (events, chat).
    burst_cache: Mutex<HashMap<(u32, bool), Bytes>>,
    /// The request log and the instant its times count from.
    log: Option<(Mutex<std::fs::File>, Instant)>,
    /// Prompts seen, as words (the prefix cache's contents).
    seen: Mutex<Vec<Vec<String>>>,
}

/// A running scripted server; stops when dropped.
pub struct ScriptedServer {
    /// Bound address (127.0.0.1, ephemeral port).
    pub addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    /// Binds 127.0.0.1:`port` (0 = any) and serves `script` on the current tokio runtime.
    pub async fn start(script: Script, port: u16) -> std::io::Result<ScriptedServer> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let slots = script.slots.min(Semaphore::MAX_PERMITS);
        let log = match &script.log {
            Some(p) => Some((Mutex::new(std::fs::File::create(p)?), Instant::now())),
            None => None,
        };
        let state = Arc::new(State {
            log,
            script,
            arrivals: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            slots: Semaphore::new(slots),
            served: Mutex::new(Vec::new()),
            burst_cache: Mutex::new(HashMap::new()),
            seen: Mutex::new(Vec::new()),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let st = st.clone();
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let svc = hyper::service::service_fn(move |req| handle(st.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
                        .await;
                });
            }
        });
        Ok(ScriptedServer { addr, state, task })
    }

    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request served so far.
    pub fn served(&self) -> Vec<Served> {
        self.state
            .served
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Stops accepting; connections in flight are dropped.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn full(status: u16, ctype: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    if let Ok(v) = ctype.parse() {
        r.headers_mut().insert("content-type", v);
    }
    if let Ok(v) = "testkit".parse() {
        r.headers_mut().insert(SIMULATION_HEADER, v);
    }
    r
}

async fn handle(st: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let received = Instant::now();
    let path = req.uri().path().to_string();
    let request_id = req
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let resp = match path.as_str() {
        "/health" => full(200, "application/json", r#"{"status":"ok"}"#),
        // The fixtures' deployment records state backend version `testkit`.
        "/version" => full(200, "application/json", r#"{"version":"testkit"}"#),
        "/metrics" => {
            let text = format!(
                "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing {}\n\
                 # TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred {}\n",
                st.running.load(Ordering::Relaxed),
                st.waiting.load(Ordering::Relaxed)
            );
            full(200, "text/plain; version=0.0.4", text)
        }
        "/tokenize" => {
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let text = v["content"].as_str().or(v["prompt"].as_str()).unwrap_or("");
            let n = text.split_whitespace().count();
            let tokens: Vec<usize> = (0..n).collect();
            full(
                200,
                "application/json",
                serde_json::json!({"tokens": tokens, "count": n}).to_string(),
            )
        }
        "/v1/models" => full(
            200,
            "application/json",
            r#"{"object":"list","data":[{"id":"scripted","object":"model","owned_by":"sloscope-testkit"}]}"#,
        ),
        "/v1/completions" | "/v1/chat/completions" => {
            stream(
                st,
                &body,
                path.ends_with("chat/completions"),
                received,
                request_id,
            )
            .await
        }
        _ => full(
            404,
            "application/json",
            r#"{"error":{"code":404,"message":"not found"}}"#,
        ),
    };
    Ok(resp)
}

fn chunk(chat: bool, text: &str) -> String {
    let v = if chat {
        serde_json::json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]})
    } else {
        serde_json::json!({"object":"text_completion","choices":[{"index":0,"text":text,"finish_reason":null}]})
    };
    format!("data: {v}\n\n")
}

/// What a request asked for, as the server reads it.
struct Asked {
    /// `max_tokens` (unbounded when absent).
    max_tokens: u32,
    /// One token per word of the prompt, as `/tokenize` counts.
    prompt_tokens: usize,
    /// Prompt tokens served from the prefix cache, when the script reports one.
    cached: Option<usize>,
}

/// The prefix cache's answer for `words`, which it then holds.
fn cached(st: &State, words: Vec<String>) -> Option<usize> {
    let mode = st.script.prefix_cache?;
    let mut seen = st.seen.lock().ok()?;
    let hit = seen
        .iter()
        .map(|p| p.iter().zip(&words).take_while(|(a, b)| a == b).count())
        .max()
        .unwrap_or(0);
    let n = words.len();
    seen.push(words);
    Some(match mode {
        PrefixCache::Honest => hit.min(n.saturating_sub(1)),
        PrefixCache::Lying => n + 5,
    })
}

fn asked(st: &State, body: &[u8], received: Instant, request_id: Option<&str>) -> Asked {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let prompt_text = v["prompt"].as_str().map(str::to_string).unwrap_or_else(|| {
        v["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    });
    let prompt_tokens = prompt_text.split_whitespace().count().max(1);
    if let Some((file, t0)) = &st.log {
        use std::io::Write;
        let line = serde_json::json!({
            "at_us": received.saturating_duration_since(*t0).as_micros() as u64,
            "prompt_tokens": prompt_tokens,
            "max_tokens": v["max_tokens"],
            "prompt_head": prompt_text.chars().take(80).collect::<String>(),
            "prompt": prompt_text,
            "request_id": request_id,
        });
        if let Ok(mut f) = file.lock() {
            let _ = writeln!(f, "{line}");
        }
    }
    let words = prompt_text.split_whitespace().map(str::to_string).collect();
    Asked {
        max_tokens: v["max_tokens"].as_u64().unwrap_or(u64::MAX) as u32,
        prompt_tokens,
        cached: cached(st, words),
    }
}

/// One scripted response: the request's events written on their schedule (or at once in
/// burst mode), faults where the script puts them.
async fn stream(
    st: Arc<State>,
    body: &[u8],
    chat: bool,
    received: Instant,
    request_id: Option<String>,
) -> Response<Body> {
    let index = st.arrivals.fetch_add(1, Ordering::Relaxed);
    let asked = asked(&st, body, received, request_id.as_deref());
    let per_event = st.script.tokens_per_event.max(1);
    let events = st
        .script
        .tokens
        .min(asked.max_tokens.div_ceil(per_event))
        .max(1);
    let fault = st.script.faults.get(&index).copied();
    if fault == Some(Fault::Http500) {
        return full(
            500,
            "application/json",
            r#"{"error":{"code":500,"message":"scripted failure","type":"server_error"}}"#,
        );
    }
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(64);
    let one = One {
        index,
        request_id,
        received,
        events,
        chat,
        fault,
        prompt_tokens: asked.prompt_tokens,
        cached: asked.cached,
        max_tokens: asked.max_tokens,
    };
    tokio::spawn(serve(st, tx, one));
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(ReceiverStream(rx))));
    let h = r.headers_mut();
    for (k, v) in [
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        (SIMULATION_HEADER, "testkit"),
    ] {
        if let Ok(v) = v.parse() {
            h.insert(k, v);
        }
    }
    r
}

/// One response being served.
struct One {
    index: u64,
    request_id: Option<String>,
    received: Instant,
    events: u32,
    chat: bool,
    fault: Option<Fault>,
    prompt_tokens: usize,
    cached: Option<usize>,
    max_tokens: u32,
}

type Tx = mpsc::Sender<Result<Frame<Bytes>, Infallible>>;

/// Writes one response's events after a slot is free, then records what was served.
async fn serve(st: Arc<State>, tx: Tx, one: One) {
    st.waiting.fetch_add(1, Ordering::Relaxed);
    let permit = st.slots.acquire().await;
    st.waiting.fetch_sub(1, Ordering::Relaxed);
    st.running.fetch_add(1, Ordering::Relaxed);
    let admitted = Instant::now();
    let send = |s: String| tx.send(Ok(Frame::data(Bytes::from(s))));
    if one.chat {
        let role = serde_json::json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]});
        let _ = send(format!("data: {role}\n\n")).await;
    }
    let (ok, stamps) = if st.script.burst {
        burst(&st, &tx, one.events, one.chat).await
    } else {
        paced(&st, &tx, &one, admitted).await
    };
    if ok {
        let completion = (one.events * st.script.tokens_per_event.max(1)).min(one.max_tokens);
        let _ = send(closing(
            &st,
            completion,
            one.chat,
            (one.prompt_tokens, one.cached),
        ))
        .await;
    }
    st.running.fetch_sub(1, Ordering::Relaxed);
    drop(permit);
    if let Ok(mut s) = st.served.lock() {
        s.push(Served {
            index: one.index,
            request_id: one.request_id,
            received: one.received,
            events: stamps,
        });
    }
    // Dropping tx without [DONE] ends the chunked body: a client sees no [DONE].
}

/// Every event at once, rendered once and shared, so the server costs next to nothing per
/// event.
async fn burst(st: &State, tx: &Tx, events: u32, chat: bool) -> (bool, Vec<Instant>) {
    let all = match st.burst_cache.lock() {
        Ok(mut cache) => cache
            .entry((events, chat))
            .or_insert_with(|| {
                let mut all = String::with_capacity(events as usize * 120);
                for _ in 0..events {
                    all.push_str(&chunk(chat, " tok"));
                }
                Bytes::from(all)
            })
            .clone(),
        Err(_) => Bytes::new(),
    };
    let stamps = vec![Instant::now()];
    (tx.send(Ok(Frame::data(all))).await.is_ok(), stamps)
}

/// The events on their schedule, with the request's fault where it falls.
async fn paced(st: &State, tx: &Tx, one: &One, admitted: Instant) -> (bool, Vec<Instant>) {
    let send = |s: String| tx.send(Ok(Frame::data(Bytes::from(s))));
    let mut stamps = Vec::with_capacity(one.events as usize);
    let start = admitted + st.script.ttft;
    for e in 0..one.events {
        match one.fault {
            Some(Fault::MidStreamError(n)) if e == n => {
                let _ = send("data: {\"error\":{\"code\":500,\"message\":\"scripted mid-stream error\",\"type\":\"server_error\"}}\n\n".into()).await;
                return (false, stamps);
            }
            Some(Fault::Stall(n)) if e == n => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Some(Fault::Disconnect(n)) if e == n => return (false, stamps),
            _ => {}
        }
        tokio::time::sleep_until((start + st.script.gap * e).into()).await;
        stamps.push(Instant::now());
        // The first event names the request (`a7`), so a client that resends the answer (a
        // session's next turn) can be seen doing it.
        let text = match e {
            0 => format!(" a{}", one.index),
            _ => " tok".to_string(),
        };
        if send(chunk(one.chat, &text)).await.is_err() {
            return (false, stamps);
        }
    }
    (true, stamps)
}

/// The last chunk (usage, llama.cpp-style timings) and `[DONE]`: `completion` tokens, never
/// more than the request's `max_tokens`.
fn closing(st: &State, completion: u32, chat: bool, prompt: (usize, Option<usize>)) -> String {
    let (prompt_tokens, cached) = prompt;
    let prompt_ms = st.script.ttft.as_secs_f64() * 1000.0;
    let mut usage = serde_json::json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens as u64 + completion as u64});
    let mut timings = serde_json::json!({"prompt_ms": prompt_ms, "predicted_n": completion});
    if let Some(c) = cached {
        usage["prompt_tokens_details"] = serde_json::json!({ "cached_tokens": c });
        timings["cache_n"] = c.into();
    }
    let last = if chat {
        serde_json::json!({"object":"chat.completion.chunk","choices":[],"usage":usage,"timings":timings})
    } else {
        serde_json::json!({"object":"text_completion","choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":usage,"timings":timings})
    };
    format!("data: {last}\n\ndata: [DONE]\n\n")
}

/// `mpsc::Receiver` as a `Stream` (tokio-stream would add a dependency for this alone).
struct ReceiverStream(mpsc::Receiver<Result<Frame<Bytes>, Infallible>>);

impl futures_util::Stream for ReceiverStream {
    type Item = Result<Frame<Bytes>, Infallible>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
