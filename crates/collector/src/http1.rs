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

use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

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

/// One keep-alive connection and its read buffer.
pub(crate) struct Conn {
    io: TcpStream,
    buf: Box<[u8]>,
    #[cfg(target_os = "linux")]
    cmsg: Vec<u8>,
    reused: bool,
}

impl Conn {
    async fn open(origin: &Origin) -> io::Result<Conn> {
        let io = TcpStream::connect((origin.host.as_str(), origin.port)).await?;
        io.set_nodelay(true)?;
        #[cfg(target_os = "linux")]
        {
            // Without kernel stamps the reads are stamped when they return.
            let _ = nix::sys::socket::setsockopt(
                &io,
                nix::sys::socket::sockopt::ReceiveTimestampns,
                &true,
            );
        }
        Ok(Conn {
            io,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            #[cfg(target_os = "linux")]
            cmsg: nix::cmsg_space!(nix::sys::time::TimeSpec),
            reused: false,
        })
    }

    /// The server has not closed it (nor sent anything unasked).
    fn is_open(&self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.io.try_read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Reads what has arrived into `buf`; returns its length and when it reached this host
    /// (the kernel's receive stamp where there is one, else now). 0 is end of stream.
    pub(crate) async fn read(&mut self) -> io::Result<(usize, Instant)> {
        loop {
            self.io.readable().await?;
            match self.try_read() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn try_read(&mut self) -> io::Result<(usize, Instant)> {
        use std::os::fd::AsRawFd;
        let fd = self.io.as_raw_fd();
        let (buf, cmsg) = (&mut self.buf, &mut self.cmsg);
        self.io.try_io(tokio::io::Interest::READABLE, || {
            recv_stamped(fd, buf, cmsg)
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn try_read(&mut self) -> io::Result<(usize, Instant)> {
        let n = self.io.try_read(&mut self.buf)?;
        Ok((n, Instant::now()))
    }

    /// The bytes of the last read.
    pub(crate) fn data(&self, n: usize) -> &[u8] {
        &self.buf[..n]
    }
}

/// `recvmsg` with the kernel's receive timestamp, converted to an `Instant`.
#[cfg(target_os = "linux")]
fn recv_stamped(
    fd: std::os::fd::RawFd,
    buf: &mut [u8],
    cmsg: &mut Vec<u8>,
) -> io::Result<(usize, Instant)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut iov = [io::IoSliceMut::new(buf)];
    let msg =
        recvmsg::<()>(fd, &mut iov, Some(cmsg), MsgFlags::empty()).map_err(io::Error::from)?;
    let now = Instant::now();
    let mut at = now;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                at = kernel_instant(ts.tv_sec(), ts.tv_nsec(), now);
            }
        }
    }
    Ok((msg.bytes, at))
}

/// A kernel receive stamp (wall clock) as an `Instant`: `now` less the stamp's age on the wall
/// clock read next to it. An age that is negative or over a minute (the wall clock stepped)
/// gives `now`.
#[cfg(target_os = "linux")]
fn kernel_instant(sec: i64, nsec: i64, now: Instant) -> Instant {
    let (Ok(sec), Ok(nsec)) = (u64::try_from(sec), u32::try_from(nsec)) else {
        return now;
    };
    let stamp = std::time::UNIX_EPOCH + Duration::new(sec, nsec);
    match std::time::SystemTime::now().duration_since(stamp) {
        Ok(age) if age < Duration::from_secs(60) => now.checked_sub(age).unwrap_or(now),
        _ => now,
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

/// Sends `request` (head and body) on `conn` and reads the response head. Returns the head, the body
/// bytes that came with it and when they arrived.
pub(crate) async fn exchange(
    conn: &mut Conn,
    request: &[u8],
) -> Result<(Head, Vec<u8>, Instant), ExchangeError> {
    let reused = conn.reused;
    let gone = |what: &str, e: &dyn std::fmt::Display| {
        let msg = format!("{what}: {e}");
        if reused {
            ExchangeError::Stale(format!("{msg} (a reused keep-alive connection)"))
        } else {
            ExchangeError::Failed(msg)
        }
    };
    conn.io
        .write_all(request)
        .await
        .map_err(|e| gone("sending the request", &e))?;
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

/// Decodes a response body as it arrives.
#[derive(Debug)]
pub(crate) struct Body {
    framing: Framing,
    chunk: Chunked,
    /// Bytes followed the end of the body.
    extra: bool,
}

impl Body {
    /// Feeds received bytes; passes the body's bytes to `out`. True once the body has ended.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        out: &mut impl FnMut(&[u8]),
    ) -> Result<bool, String> {
        match &mut self.framing {
            Framing::Close => {
                out(input);
                Ok(false)
            }
            Framing::Length(left) => {
                let n = (*left).min(input.len() as u64) as usize;
                if n > 0 {
                    out(&input[..n]);
                }
                *left -= n as u64;
                self.extra |= n < input.len();
                Ok(*left == 0)
            }
            Framing::Chunked => {
                let used = self.chunk.feed(input, out)?;
                self.extra |= used < input.len();
                Ok(self.chunk.state == ChunkState::Done)
            }
        }
    }

    /// End of stream is the normal end of this body.
    pub(crate) fn ends_at_close(&self) -> bool {
        self.framing == Framing::Close
    }

    /// The connection can carry another request once this body has ended.
    pub(crate) fn reusable(&self, head: &Head) -> bool {
        !head.close && !self.extra && self.framing != Framing::Close
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf,
    Done,
}

/// `Transfer-Encoding: chunked`, byte by byte for the framing and in bulk for the data.
#[derive(Debug, Default)]
struct Chunked {
    state: ChunkState,
    size: u64,
    digits: u8,
}

impl Chunked {
    /// Returns the bytes of `input` used (all of them unless the body ended inside it).
    fn feed(&mut self, input: &[u8], out: &mut impl FnMut(&[u8])) -> Result<usize, String> {
        let mut i = 0;
        while i < input.len() && self.state != ChunkState::Done {
            if self.state == ChunkState::Data {
                let n = self.size.min((input.len() - i) as u64) as usize;
                out(&input[i..i + n]);
                i += n;
                self.size -= n as u64;
                if self.size == 0 {
                    self.state = ChunkState::DataCr;
                }
                continue;
            }
            self.byte(input[i])?;
            i += 1;
        }
        Ok(i)
    }

    fn byte(&mut self, b: u8) -> Result<(), String> {
        use ChunkState::*;
        let bad = |what: &str| Err(format!("malformed chunked body: {what} (byte {b:#04x})"));
        match self.state {
            Size => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if self.digits >= 15 {
                        return bad("chunk size too large");
                    }
                    let v = (b as char).to_digit(16).unwrap_or(0) as u64;
                    self.size = self.size * 16 + v;
                    self.digits += 1;
                }
                b';' | b' ' | b'\t' if self.digits > 0 => self.state = Extension,
                b'\r' if self.digits > 0 => self.state = SizeLf,
                b'\n' if self.digits > 0 => self.size_done(),
                _ => return bad("expected a chunk size"),
            },
            Extension => match b {
                b'\r' => self.state = SizeLf,
                b'\n' => self.size_done(),
                _ => {}
            },
            SizeLf => match b {
                b'\n' => self.size_done(),
                _ => return bad("expected LF after the chunk size"),
            },
            DataCr => match b {
                b'\r' => self.state = DataLf,
                b'\n' => self.state = Size,
                _ => return bad("expected CRLF after chunk data"),
            },
            DataLf => match b {
                b'\n' => self.state = Size,
                _ => return bad("expected LF after chunk data"),
            },
            TrailerStart => match b {
                b'\r' => self.state = TrailerLf,
                b'\n' => self.state = Done,
                _ => self.state = TrailerLine,
            },
            TrailerLine => {
                if b == b'\n' {
                    self.state = TrailerStart;
                }
            }
            TrailerLf => match b {
                b'\n' => self.state = Done,
                _ => return bad("expected LF ending the trailer"),
            },
            Data | Done => {}
        }
        Ok(())
    }

    fn size_done(&mut self) {
        self.digits = 0;
        self.state = if self.size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data
        };
    }
}

/// Keep-alive connections to one origin.
pub(crate) struct Pool {
    pub(crate) origin: Origin,
    idle: Mutex<Vec<(Conn, Instant)>>,
    max_idle: usize,
}

impl Pool {
    pub(crate) fn new(origin: Origin, max_idle: usize) -> Pool {
        Pool {
            origin,
            idle: Mutex::new(Vec::new()),
            max_idle: max_idle.max(1),
        }
    }

    /// An idle connection the server has not closed, else a new one.
    pub(crate) async fn conn(&self) -> io::Result<Conn> {
        if let Some(c) = self.idle_conn() {
            return Ok(c);
        }
        Conn::open(&self.origin).await
    }

    /// A new connection, for the second attempt after a stale one.
    pub(crate) async fn fresh(&self) -> io::Result<Conn> {
        Conn::open(&self.origin).await
    }

    fn idle_conn(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().ok()?;
        while let Some((mut c, since)) = idle.pop() {
            if since.elapsed() < IDLE_FOR && c.is_open() {
                c.reused = true;
                return Some(c);
            }
        }
        None
    }

    /// Returns a connection whose last response ended cleanly.
    pub(crate) fn put(&self, conn: Conn) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.max_idle {
                idle.push((conn, Instant::now()));
            }
        }
    }

    /// Opens `n` connections, each checked with a GET of `path`, and keeps those that answered.
    pub(crate) async fn warm(&self, n: usize, path: &str, headers: &[(&str, &str)]) {
        let head = self.origin.head("GET", path, headers, 0);
        let opened = (0..n.max(1)).map(|_| async {
            let mut c = Conn::open(&self.origin).await.ok()?;
            let (h, rest, _) = exchange(&mut c, &head).await.ok()?;
            let mut body = h.body();
            let mut ended = body.feed(&rest, &mut |_| {}).ok()?;
            while !ended {
                let (n, _) = c.read().await.ok()?;
                if n == 0 {
                    return None;
                }
                let (data, body) = (&c.buf[..n], &mut body);
                ended = body.feed(data, &mut |_| {}).ok()?;
            }
            body.reusable(&h).then_some(c)
        });
        for c in futures_util::future::join_all(opened)
            .await
            .into_iter()
            .flatten()
        {
            self.put(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(parts: &[&[u8]]) -> (Vec<u8>, bool, Result<(), String>) {
        let mut c = Chunked::default();
        let mut out = Vec::new();
        for p in parts {
            if let Err(e) = c.feed(p, &mut |d: &[u8]| out.extend_from_slice(d)) {
                return (out, false, Err(e));
            }
        }
        (out, c.state == ChunkState::Done, Ok(()))
    }

    #[test]
    fn chunked_bodies_decode_across_any_split() {
        let wire: &[u8] =
            b"7\r\ndata: a\r\n1A;ext=1\r\ndata: {\"x\":\"yyyyyyyyyy\"}\n\n\r\n0\r\nx-trailer: 1\r\n\r\n";
        let want: &[u8] = b"data: adata: {\"x\":\"yyyyyyyyyy\"}\n\n";
        assert_eq!(decode(&[wire]), (want.to_vec(), true, Ok(())));
        for cut in 0..wire.len() {
            let (a, b) = wire.split_at(cut);
            assert_eq!(
                decode(&[a, b]),
                (want.to_vec(), true, Ok(())),
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = wire.chunks(1).collect();
        assert_eq!(decode(&bytes), (want.to_vec(), true, Ok(())));
        // bare LF line ends are accepted
        assert_eq!(decode(&[b"3\nabc\n0\n\n"]), (b"abc".to_vec(), true, Ok(())));
    }

    #[test]
    fn malformed_chunked_bodies_are_named() {
        for (wire, what) in [
            (&b"zz\r\n"[..], "expected a chunk size"),
            (b"3\r\nabcX", "expected CRLF after chunk data"),
            (b"3\rX", "expected LF after the chunk size"),
            (b"ffffffffffffffff\r\n", "chunk size too large"),
        ] {
            let (_, _, r) = decode(&[wire]);
            assert!(r.as_ref().is_err_and(|e| e.contains(what)), "{r:?}");
        }
    }

    #[test]
    fn heads_give_their_framing() {
        let h = |s: &str| {
            parse_head(s.as_bytes())
                .ok()
                .flatten()
                .map(|(h, n)| (h.framing, h.close, h.status, n))
        };
        assert_eq!(
            h("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nrest"),
            Some((Framing::Chunked, false, 200, 47))
        );
        assert_eq!(
            h("HTTP/1.1 500 Oops\r\ncontent-length: 12\r\nConnection: close\r\n\r\n"),
            Some((Framing::Length(12), true, 500, 60))
        );
        assert_eq!(
            h("HTTP/1.0 200 OK\r\n\r\n"),
            Some((Framing::Close, true, 200, 19))
        );
        assert_eq!(h("HTTP/1.1 200 OK\r\nx: y\r\n"), None);
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n").is_err());
        assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    }

    #[test]
    fn origins_parse_and_refuse_https() {
        let o = Origin::parse("http://127.0.0.1:8080/").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                o.host.as_str(),
                o.port,
                o.authority.as_str(),
                o.prefix.as_str()
            ),
            ("127.0.0.1", 8080, "127.0.0.1:8080", "")
        );
        let o = Origin::parse("http://[::1]:9000/api").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (o.host.as_str(), o.authority.as_str(), o.prefix.as_str()),
            ("::1", "[::1]:9000", "/api")
        );
        assert_eq!(
            String::from_utf8_lossy(&o.head("POST", "/v1/completions", &[("a", "b")], 3)),
            "POST /api/v1/completions HTTP/1.1\r\nhost: [::1]:9000\r\na: b\r\ncontent-length: 3\r\n\r\n"
        );
        let e = Origin::parse("https://example.invalid")
            .err()
            .unwrap_or_default();
        assert!(e.contains("only http://"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn kernel_stamps_convert_to_instants() {
        let now = Instant::now();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let earlier = wall - Duration::from_millis(5);
        let at = kernel_instant(earlier.as_secs() as i64, earlier.subsec_nanos() as i64, now);
        let age = now.duration_since(at);
        assert!(
            age >= Duration::from_millis(4) && age < Duration::from_millis(50),
            "{age:?}"
        );
        // a stamp in the future or far in the past is not believed
        let later = wall + Duration::from_secs(5);
        assert_eq!(kernel_instant(later.as_secs() as i64, 0, now), now);
        assert_eq!(kernel_instant(1, 0, now), now);
        assert_eq!(kernel_instant(-1, 0, now), now);
    }
}
