//! The timed request's HTTP/1.1 exchange, written for its timing.
//!
//! A general HTTP client puts a connection task and a channel between the socket and the code
//! that stamps an event, and stamps only when a single busy timing thread gets round to it: at
//! 256 streams whose tokens fall due together, the last stream's stamp waits for every other
//! stream's work. Here each stream's task reads its own socket, and on Linux every read returns
//! the kernel's receive timestamp (`SO_TIMESTAMPNS`), taken when the bytes reached this host, so
//! the stamp does not depend on when the task ran. The request's send is stamped just before
//! its `write`. Keep-alive connections are pooled per client. Plain `http://` only: the
//! collector has no TLS. Health, `/metrics` and `/tokenize` still go through reqwest.

use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

mod body;
mod conn;
mod pool;
#[cfg(test)]
mod tests;

pub(crate) use body::Body;
use body::Chunked;
pub(crate) use conn::Conn;
pub(crate) use pool::Pool;

/// How long an idle pooled connection is kept: below the common 5 s server keep-alive, so
/// idle connections are dropped by us first.
const IDLE_FOR: Duration = Duration::from_secs(3);
/// Read buffer per connection.
const READ_BUF: usize = 16 * 1024;
/// A response head larger than this is refused.
const MAX_HEAD: usize = 64 * 1024;

/// Where requests go: `http://host:port[/prefix]`.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    host: String,
    port: u16,
    /// `Host` header value.
    authority: String,
    /// Path prefix of the base URL, without a trailing `/`.
    prefix: String,
}

impl Origin {
    pub(crate) fn parse(base: &str) -> Result<Origin, String> {
        let url = reqwest::Url::parse(base).map_err(|e| format!("endpoint `{base}`: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!(
                "endpoint `{base}`: only http:// endpoints are supported (the collector has no TLS; put a local proxy in front of an https endpoint)"
            ));
        }
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_string(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(format!("endpoint `{base}`: no host")),
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let mut authority = url.host_str().unwrap_or_default().to_string();
        if let Some(p) = url.port() {
            authority.push_str(&format!(":{p}"));
        }
        Ok(Origin {
            host,
            port,
            authority,
            prefix: url.path().trim_end_matches('/').to_string(),
        })
    }

    /// The request head for `path` (below the prefix) with `headers` and a body of `len` bytes.
    pub(crate) fn head(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        len: usize,
    ) -> Vec<u8> {
        let mut h = format!(
            "{method} {}{path} HTTP/1.1\r\nhost: {}\r\n",
            self.prefix, self.authority
        );
        for (k, v) in headers {
            h.push_str(k);
            h.push_str(": ");
            h.push_str(v);
            h.push_str("\r\n");
        }
        if method != "GET" || len > 0 {
            h.push_str(&format!("content-length: {len}\r\n"));
        }
        h.push_str("\r\n");
        h.into_bytes()
    }
}

/// How soon after the request is written a reused connection's close must come to be the
/// keep-alive race (the server closed the idle connection as the request went out, so the
/// request may be sent again): a close later than this is a request the server took and
/// dropped, a failure.
const STALE_WINDOW: Duration = Duration::from_millis(100);

/// Why an exchange failed before a response head.
#[derive(Debug)]
pub(crate) enum ExchangeError {
    /// A reused connection was closed by the server before anything came back: the request
    /// did not reach it, and may be sent again on a fresh connection.
    Stale(String),
    /// Anything else: refused, reset, malformed head.
    Failed(String),
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Stale(s) | ExchangeError::Failed(s) => f.write_str(s),
        }
    }
}

/// What a response head says.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    framing: Framing,
    close: bool,
}

impl Head {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A decoder for the body this head announces.
    pub(crate) fn body(&self) -> Body {
        Body {
            framing: self.framing,
            chunk: Chunked::default(),
            extra: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Chunked,
    Length(u64),
    /// Until the server closes the connection.
    Close,
}

/// A connection that ended before a response head: on a reused connection closed as the
/// request went out (`written` at most [`STALE_WINDOW`] ago), a stale one; else a failure.
fn gone(
    reused: bool,
    written: Option<Instant>,
    what: &str,
    e: &dyn std::fmt::Display,
) -> ExchangeError {
    let msg = format!("{what}: {e}");
    match written.map(|w| w.elapsed()) {
        _ if !reused => ExchangeError::Failed(msg),
        Some(w) if w > STALE_WINDOW => ExchangeError::Failed(format!(
            "{msg}: the server closed the reused keep-alive connection {} ms after the request \
             was sent, without answering (it took the request and dropped it)",
            w.as_millis()
        )),
        _ => ExchangeError::Stale(format!("{msg} (a reused keep-alive connection)")),
    }
}

/// Sends `request` (head and body) on `conn` and reads the response head. Returns the head, the body
/// bytes that came with it and when they arrived.
pub(crate) async fn exchange(
    conn: &mut Conn,
    request: &[u8],
) -> Result<(Head, Vec<u8>, Instant), ExchangeError> {
    let reused = conn.reused;
    conn.io
        .write_all(request)
        .await
        .map_err(|e| gone(reused, None, "sending the request", &e))?;
    let written = Some(Instant::now());
    let gone = |what: &str, e: &dyn std::fmt::Display| gone(reused, written, what, e);
    let mut acc: Vec<u8> = Vec::new();
    loop {
        let (n, at) = match conn.read().await {
            Ok(r) => r,
            Err(e) if acc.is_empty() => return Err(gone("reading the response", &e)),
            Err(e) => return Err(ExchangeError::Failed(format!("reading the response: {e}"))),
        };
        if n == 0 {
            let e = "connection closed before a response head";
            return Err(if acc.is_empty() {
                gone("reading the response", &e)
            } else {
                ExchangeError::Failed(e.into())
            });
        }
        acc.extend_from_slice(conn.data(n));
        while let Some((head, used)) = parse_head(&acc)? {
            acc.drain(..used);
            if (100..200).contains(&head.status) {
                continue; // interim response
            }
            return Ok((head, acc, at));
        }
        if acc.len() > MAX_HEAD {
            return Err(ExchangeError::Failed(format!(
                "response head larger than {MAX_HEAD} bytes"
            )));
        }
    }
}

fn parse_head(acc: &[u8]) -> Result<Option<(Head, usize)>, ExchangeError> {
    let mut raw = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut raw);
    let used = match r.parse(acc) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(ExchangeError::Failed(format!(
                "invalid HTTP response head: {e}"
            )))
        }
    };
    let status = r.code.unwrap_or(0);
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_string(),
                String::from_utf8_lossy(h.value).trim().to_string(),
            )
        })
        .collect();
    let has = |name: &str, token: &str| {
        headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case(name)
                && v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    };
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| {
            v.parse::<u64>().map_err(|_| {
                ExchangeError::Failed(format!("invalid content-length `{v}` in the response"))
            })
        })
        .transpose()?;
    let framing = if status == 204 || status == 304 {
        Framing::Length(0)
    } else if has("transfer-encoding", "chunked") {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::Close
    };
    let close = has("connection", "close") || r.version == Some(0);
    Ok(Some((
        Head {
            status,
            headers,
            framing,
            close,
        },
        used,
    )))
}
