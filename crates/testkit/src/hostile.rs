//! A misbehaving OpenAI-compatible server: each [`Misbehavior`] is one way a real backend
//! errs, lies or redirects (the shapes read from vLLM's, SGLang's, TGI's and llama-server's
//! sources), written byte for byte on a plain socket so nothing between it and the client
//! tidies the response up. Streams come in chunked SSE as the backends send them; it labels
//! itself a simulation like the scripted server. A second listener, the *elsewhere*, counts
//! every connection made to it: redirects point there, and a client that follows one shows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::server::SIMULATION_HEADER;

/// One way of misbehaving. Every other request (health, models) is answered normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehavior {
    /// Streams well: the control.
    None,
    /// llama-server before September 2025: an `error:` field mid-stream, then `data: [DONE]`.
    LlamaErrorField,
    /// vLLM and SGLang: `data: {"error": {"object": "error", …}}`, then `data: [DONE]`.
    NestedError,
    /// A flat `data: {"object": "error", "message": …}`, then `data: [DONE]`.
    FlatError,
    /// TGI's `data: {"error": "…", "error_type": "…"}`, no `[DONE]`.
    StringError,
    /// SGLang's abort: a choice with `finish_reason: "abort"`, then `[DONE]`.
    Abort,
    /// A `data:` payload that is not JSON, among good events.
    NotJson,
    /// A content event cut short (`{"choices":[{"text":" Paris"`).
    Truncated,
    /// An event sloscope does not understand (`{"foo": 1}`).
    Unknown,
    /// `usage.completion_tokens` of 10⁹ after the streamed tokens.
    UsageHuge,
    /// `usage.completion_tokens` of 1 after several content events.
    UsageBelowEvents,
    /// `/tokenize` answers 0 tokens for anything.
    TokenizeZero,
    /// The completion endpoint answers 307 to the elsewhere.
    RedirectStream,
    /// `/tokenize` answers 307 to the elsewhere.
    RedirectTokenize,
    /// `/metrics` answers 302 to the elsewhere.
    RedirectMetrics,
    /// `/health` answers 302 to the elsewhere (whose `/health` is 200).
    RedirectHealth,
    /// A 200 with a JSON error body instead of an event stream.
    JsonBody,
    /// A gzip-encoded stream nobody asked for.
    Gzip,
    /// Every second request on a connection is read and then the connection closed without an
    /// answer (the client's stale-connection retry).
    CloseAfterRead,
    /// Every streamed response advertises `Keep-Alive: timeout=5, max=100` and the connection
    /// is closed right after it (llama-server's HTTP library does so).
    CloseAfterStream,
    /// `/health` answers 503 (a server still loading its model), and nothing else is served.
    Loading,
    /// `/version` gives another version than the records state (`0.0.1-other`; the fixtures
    /// say `testkit`).
    OtherVersion,
    /// Three tokens, then only SSE keep-alive comments (`: ping`, every 200 ms) for three
    /// seconds, then the end: bytes keep coming, no event does.
    Pings,
}

/// A running hostile server and its elsewhere; both stop when dropped.
pub struct HostileServer {
    /// The endpoint.
    pub addr: std::net::SocketAddr,
    /// The address redirects point to.
    pub elsewhere: std::net::SocketAddr,
    hits: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Misbehavior {
    /// Every misbehavior, by the name the `hostile-server` binary takes.
    pub const ALL: [(&'static str, Misbehavior); 23] = [
        ("none", Misbehavior::None),
        ("llama-error-field", Misbehavior::LlamaErrorField),
        ("nested-error", Misbehavior::NestedError),
        ("flat-error", Misbehavior::FlatError),
        ("string-error", Misbehavior::StringError),
        ("abort", Misbehavior::Abort),
        ("not-json", Misbehavior::NotJson),
        ("truncated", Misbehavior::Truncated),
        ("unknown", Misbehavior::Unknown),
        ("usage-huge", Misbehavior::UsageHuge),
        ("usage-below-events", Misbehavior::UsageBelowEvents),
        ("tokenize-zero", Misbehavior::TokenizeZero),
        ("redirect-stream", Misbehavior::RedirectStream),
        ("redirect-tokenize", Misbehavior::RedirectTokenize),
        ("redirect-metrics", Misbehavior::RedirectMetrics),
        ("redirect-health", Misbehavior::RedirectHealth),
        ("json-body", Misbehavior::JsonBody),
        ("gzip", Misbehavior::Gzip),
        ("close-after-read", Misbehavior::CloseAfterRead),
        ("close-after-stream", Misbehavior::CloseAfterStream),
        ("pings", Misbehavior::Pings),
        ("other-version", Misbehavior::OtherVersion),
        ("loading", Misbehavior::Loading),
    ];

    /// The misbehavior of this name.
    pub fn parse(name: &str) -> Option<Misbehavior> {
        Misbehavior::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }
}

impl HostileServer {
    /// Binds two ephemeral ports on 127.0.0.1 and serves `how` on the current runtime.
    pub async fn start(how: Misbehavior) -> std::io::Result<HostileServer> {
        HostileServer::start_on(how, 0).await
    }

    /// Like [`HostileServer::start`], the endpoint on `port` (0: any).
    pub async fn start_on(how: Misbehavior, port: u16) -> std::io::Result<HostileServer> {
        let main = TcpListener::bind(("127.0.0.1", port)).await?;
        let other = TcpListener::bind("127.0.0.1:0").await?;
        let (addr, elsewhere) = (main.local_addr()?, other.local_addr()?);
        let hits = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let away = tokio::spawn(async move {
            while let Ok((mut s, _)) = other.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let _ = read_request(&mut s).await;
                    let _ = s
                        .write_all(&response(
                            200,
                            "application/json",
                            br#"{"status":"ok","tokens":[1,2,3]}"#,
                            &[],
                        ))
                        .await;
                });
            }
        });
        let r = requests.clone();
        let serve = tokio::spawn(async move {
            while let Ok((s, _)) = main.accept().await {
                let r = r.clone();
                tokio::spawn(connection(s, how, elsewhere, r));
            }
        });
        Ok(HostileServer {
            addr,
            elsewhere,
            hits,
            requests,
            tasks: vec![away, serve],
        })
    }

    /// Base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections made to the elsewhere so far.
    pub fn elsewhere_hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Completion requests read so far (a resent request counts twice).
    pub fn completion_requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::JoinHandle::abort);
    }
}

/// The path and body of one request; `None` when the connection ends first.
async fn read_request(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    Some((path, buf[head_end..head_end + len].to_vec()))
}

fn response(status: u16, ctype: &str, body: &[u8], extra: &[(&str, String)]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n{SIMULATION_HEADER}: hostile\r\n",
        body.len()
    );
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A chunked event-stream response carrying `events` (each a whole SSE event).
fn stream(events: &[String], extra: &str) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n{SIMULATION_HEADER}: hostile\r\n{extra}\r\n"
    )
    .into_bytes();
    for e in events {
        out.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// One chunk of a chunked body.
fn chunk(e: &str) -> Vec<u8> {
    format!("{:x}\r\n{e}\r\n", e.len()).into_bytes()
}

/// Three tokens, then a keep-alive comment every 200 ms for three seconds, then the end.
async fn pings(s: &mut TcpStream) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n{SIMULATION_HEADER}: hostile\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await?;
    for _ in 0..3 {
        s.write_all(&chunk(&token(" tok"))).await?;
    }
    for _ in 0..15 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        s.write_all(&chunk(": ping\n\n")).await?;
    }
    s.write_all(&chunk("data: [DONE]\n\n")).await?;
    s.write_all(b"0\r\n\r\n").await
}

fn token(text: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":null}}]}}\n\n"
    )
}

/// The events of a completion stream that misbehaves as `how` says.
fn completion_events(how: Misbehavior, max_tokens: u32) -> Vec<String> {
    let n = max_tokens.clamp(1, 8);
    let mut ev: Vec<String> = (0..n).map(|_| token(" tok")).collect();
    let usage = |c: u64| {
        format!("data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":8,\"completion_tokens\":{c}}}}}\n\n")
    };
    let done = "data: [DONE]\n\n".to_string();
    let mid = (n / 2) as usize;
    match how {
        Misbehavior::LlamaErrorField => {
            ev.insert(mid, "error: {\"code\":503,\"message\":\"the server is overloaded\",\"type\":\"unavailable_error\"}\n\n".into());
        }
        Misbehavior::NestedError => ev.insert(mid, "data: {\"error\": {\"object\": \"error\", \"message\": \"CUDA out of memory\", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}\n\n".into()),
        Misbehavior::FlatError => ev.insert(mid, "data: {\"object\":\"error\",\"message\":\"generation failed\",\"type\":\"BadRequestError\",\"code\":400}\n\n".into()),
        Misbehavior::StringError => {
            ev.truncate(mid);
            ev.push("data: {\"error\":\"Input validation error: prompt too long\",\"error_type\":\"validation\"}\n\n".into());
            return ev;
        }
        Misbehavior::Abort => ev.push("data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"abort\"}]}\n\n".into()),
        Misbehavior::NotJson => ev.insert(mid, "data: this is not json\n\n".into()),
        Misbehavior::Truncated => ev.insert(mid, "data: {\"choices\":[{\"text\":\" Paris\"\n\n".into()),
        Misbehavior::Unknown => ev.insert(mid, "data: {\"foo\":1}\n\n".into()),
        Misbehavior::UsageHuge => ev.push(usage(1_000_000_000)),
        Misbehavior::UsageBelowEvents => ev.push(usage(1)),
        _ => ev.push(usage(u64::from(n))),
    }
    ev.push(done);
    ev
}

fn redirect(status: u16, to: std::net::SocketAddr, path: &str) -> Vec<u8> {
    response(
        status,
        "text/plain",
        b"",
        &[("location", format!("http://{to}{path}"))],
    )
}

async fn connection(
    mut s: TcpStream,
    how: Misbehavior,
    elsewhere: std::net::SocketAddr,
    requests: Arc<AtomicUsize>,
) {
    let _ = s.set_nodelay(true);
    let mut on_this = 0usize;
    while let Some((path, body)) = read_request(&mut s).await {
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let completion = path.starts_with("/v1/");
        if completion {
            requests.fetch_add(1, Ordering::SeqCst);
            on_this += 1;
        }
        let bytes = match (how, path.as_str()) {
            (Misbehavior::RedirectHealth, "/health") => redirect(302, elsewhere, "/health"),
            (Misbehavior::Loading, "/health") => response(
                503,
                "application/json",
                br#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#,
                &[],
            ),
            (Misbehavior::Loading, _) => response(503, "application/json", b"{}", &[]),
            (_, "/health") => response(200, "application/json", br#"{"status":"ok"}"#, &[]),
            (Misbehavior::OtherVersion, "/version") => response(
                200,
                "application/json",
                br#"{"version":"0.0.1-other"}"#,
                &[],
            ),
            (Misbehavior::RedirectTokenize, "/tokenize") => redirect(307, elsewhere, "/tokenize"),
            (Misbehavior::TokenizeZero, "/tokenize") => {
                response(200, "application/json", br#"{"tokens":[],"count":0}"#, &[])
            }
            (_, "/tokenize") => {
                let text = v["content"].as_str().unwrap_or("");
                let n = text.split_whitespace().count();
                let body = format!("{{\"count\":{n}}}");
                response(200, "application/json", body.as_bytes(), &[])
            }
            (Misbehavior::RedirectMetrics, "/metrics") => redirect(302, elsewhere, "/metrics"),
            (_, "/metrics") => {
                response(200, "text/plain", b"llamacpp:requests_processing 0\n", &[])
            }
            (Misbehavior::RedirectStream, _) if completion => {
                redirect(307, elsewhere, "/v1/completions")
            }
            (Misbehavior::JsonBody, _) if completion => response(
                200,
                "application/json",
                br#"{"error":{"message":"model is loading","type":"unavailable","code":503}}"#,
                &[],
            ),
            (Misbehavior::CloseAfterRead, _) if completion && on_this.is_multiple_of(2) => return,
            (Misbehavior::Gzip, _) if completion => {
                let max = v["max_tokens"].as_u64().unwrap_or(8) as u32;
                stream(&completion_events(how, max), "content-encoding: gzip\r\n")
            }
            (Misbehavior::Pings, _) if completion => {
                if pings(&mut s).await.is_err() {
                    return;
                }
                continue;
            }
            (Misbehavior::CloseAfterStream, _) if completion => {
                let max = v["max_tokens"].as_u64().unwrap_or(8) as u32;
                let events = completion_events(how, max);
                let bytes = stream(&events, "keep-alive: timeout=5, max=100\r\n");
                let _ = s.write_all(&bytes).await;
                // The close comes a moment after the response, as the server's connection
                // handler winds down: a client that reuses the connection at once races it.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                return;
            }
            (_, _) if completion => {
                let max = v["max_tokens"].as_u64().unwrap_or(8) as u32;
                stream(&completion_events(how, max), "")
            }
            _ => response(
                404,
                "application/json",
                br#"{"error":{"message":"not found"}}"#,
                &[],
            ),
        };
        if s.write_all(&bytes).await.is_err() {
            return;
        }
    }
}
