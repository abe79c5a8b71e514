//! `timing-server`: an independent reference server for the collector's timing benchmark. One
//! thread, plain sockets and `ppoll` (no async runtime, nothing shared with the collector), so
//! the truth it logs does not depend on the code under test. It serves OpenAI-compatible
//! completion streams on a fixed schedule: the response head at once, the first content event
//! `--ttft-ms` after the request was read, then one write every `--gap-ms` carrying
//! `--coalesce` content events, `--tokens` events in all, then a usage event, `[DONE]` and the
//! chunked terminator in one write. `GET /health` answers `ok`.
//!
//! `--log FILE` appends one JSON line per finished request, stamped by this process's
//! `CLOCK_MONOTONIC` in µs: `{"id", "recv_us", "events_us": [...], "done_us"}`, where `recv_us`
//! is when the request's last bytes reached the host (the kernel's receive stamp, so a burst of
//! requests read one after another is not stamped late) and each other stamp is when the
//! `write()` that carried the event returned. Lines are written only while no stream is open, so logging
//! never delays an event.
//!
//! Flags: `--port N --ttft-ms X --gap-ms X --tokens N --coalesce K --log FILE`.

use std::collections::{BinaryHeap, HashMap};
use std::io::{ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, ClockId};

fn now_ns() -> i64 {
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() * 1_000_000_000 + t.tv_nsec())
        .unwrap_or(0)
}

struct Opts {
    ttft_ns: i64,
    gap_ns: i64,
    tokens: u32,
    coalesce: u32,
}

/// One connection: a request being read, or a stream being written.
struct Conn {
    io: TcpStream,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// The stream in progress.
    stream: Option<Stream>,
    closed: bool,
}

struct Stream {
    id: String,
    recv_ns: i64,
    sent: u32,
    /// Events in `out` not yet stamped (their write has not completed).
    pending: u32,
    events_ns: Vec<i64>,
    finished: bool,
    done_ns: Option<i64>,
}

const EVENT: &[u8] = b"data: {\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" tok\",\"finish_reason\":null}]}\n\n";

fn chunk(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str| -> Option<String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let num = |name: &str, d: f64| get(name).and_then(|v| v.parse().ok()).unwrap_or(d);
    let opts = Opts {
        ttft_ns: (num("--ttft-ms", 50.0) * 1e6) as i64,
        gap_ns: (num("--gap-ms", 5.0) * 1e6) as i64,
        tokens: num("--tokens", 256.0) as u32,
        coalesce: (num("--coalesce", 1.0) as u32).max(1),
    };
    let port = num("--port", 0.0) as u16;
    let log = get("--log").and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("timing-server: cannot bind 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        }
    };
    if listener.set_nonblocking(true).is_err() {
        std::process::exit(1);
    }
    if let Ok(a) = listener.local_addr() {
        println!("listening on http://{a}");
    }
    let mut server = Server {
        opts,
        listener,
        conns: HashMap::new(),
        next_id: 0,
        due: BinaryHeap::new(),
        finished: Vec::new(),
        log,
    };
    loop {
        server.turn();
    }
}

/// The one thread's state: connections, what is due when, the log.
struct Server {
    opts: Opts,
    listener: TcpListener,
    conns: HashMap<u64, Conn>,
    next_id: u64,
    /// (due, conn) as a min-heap.
    due: BinaryHeap<std::cmp::Reverse<(i64, u64)>>,
    finished: Vec<String>,
    log: Option<std::fs::File>,
}

impl Server {
    /// One turn: wait for readiness or the next due write, serve both, log finished streams.
    fn turn(&mut self) {
        let Some(ready) = self.poll() else {
            return;
        };
        for (k, readable, writable) in ready {
            if k == u64::MAX {
                self.accept_all();
                continue;
            }
            let Some(c) = self.conns.get_mut(&k) else {
                continue;
            };
            if readable {
                read_requests(c, &self.opts, k, &mut self.due);
            }
            if writable && !c.out.is_empty() {
                flush(c, &self.opts, k, &mut self.due);
            }
        }
        self.write_due();
        self.collect_finished();
    }

    /// (connection, readable, writable) of each ready connection; `u64::MAX` for the
    /// listener. `None` when the wait failed.
    fn poll(&self) -> Option<Vec<(u64, bool, bool)>> {
        let now = now_ns();
        let timeout = self
            .due
            .peek()
            .map(|d| TimeSpec::from(Duration::from_nanos((d.0 .0 - now).max(0) as u64)));
        let keys: Vec<u64> = self.conns.keys().copied().collect();
        let mut fds = vec![PollFd::new(self.listener.as_fd(), PollFlags::POLLIN)];
        for k in &keys {
            let c = &self.conns[k];
            let mut f = PollFlags::POLLIN;
            if !c.out.is_empty() {
                f |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(c.io.as_fd(), f));
        }
        nix::poll::ppoll(&mut fds, timeout, None).ok()?;
        let ev = |f: &PollFd| f.revents().unwrap_or(PollFlags::empty());
        let accept = ev(&fds[0]).contains(PollFlags::POLLIN);
        let mut r: Vec<(u64, bool, bool)> = keys
            .iter()
            .zip(&fds[1..])
            .map(|(k, f)| {
                let e = ev(f);
                (
                    *k,
                    e.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR),
                    e.contains(PollFlags::POLLOUT),
                )
            })
            .collect();
        if accept {
            r.push((u64::MAX, true, false));
        }
        Some(r)
    }

    fn accept_all(&mut self) {
        while let Ok((s, _)) = self.listener.accept() {
            let _ = s.set_nodelay(true);
            let _ = nix::sys::socket::setsockopt(
                &s,
                nix::sys::socket::sockopt::ReceiveTimestampns,
                &true,
            );
            let _ = s.set_nonblocking(true);
            let conn = Conn {
                io: s,
                inbuf: Vec::new(),
                out: Vec::new(),
                stream: None,
                closed: false,
            };
            self.conns.insert(self.next_id, conn);
            self.next_id += 1;
        }
    }

    /// Writes every event that is due.
    fn write_due(&mut self) {
        let (opts, now) = (&self.opts, now_ns());
        while let Some(std::cmp::Reverse((at, k))) = self.due.peek().copied() {
            if at > now {
                break;
            }
            self.due.pop();
            let Some(c) = self.conns.get_mut(&k) else {
                continue;
            };
            let Some(s) = c.stream.as_mut() else { continue };
            if s.finished || !c.out.is_empty() {
                continue;
            }
            let n = opts.coalesce.min(opts.tokens - s.sent);
            let mut data = Vec::with_capacity(EVENT.len() * n as usize);
            for _ in 0..n {
                data.extend_from_slice(EVENT);
            }
            s.sent += n;
            s.pending = n;
            if s.sent >= opts.tokens {
                data.extend_from_slice(format!("data: {{\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"choices\":[],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{}}}}}\n\ndata: [DONE]\n\n", opts.tokens).as_bytes());
                s.finished = true;
            }
            chunk(&mut c.out, &data);
            if s.finished {
                c.out.extend_from_slice(b"0\r\n\r\n");
            }
            flush(c, opts, k, &mut self.due);
        }
    }

    /// Logs finished streams (once none is in flight, so logging never delays a write) and
    /// drops closed connections.
    fn collect_finished(&mut self) {
        let finished = &mut self.finished;
        self.conns.retain(|_, c| {
            if let Some(s) = &c.stream {
                if let (Some(done), true) = (s.done_ns, c.out.is_empty()) {
                    let events: Vec<String> =
                        s.events_ns.iter().map(|e| (e / 1000).to_string()).collect();
                    finished.push(format!(
                        "{{\"id\":{},\"recv_us\":{},\"events_us\":[{}],\"done_us\":{}}}\n",
                        serde_json::Value::String(s.id.clone()),
                        s.recv_ns / 1000,
                        events.join(","),
                        done / 1000
                    ));
                    c.stream = None;
                }
            }
            !c.closed
        });
        if self.conns.values().all(|c| c.stream.is_none()) && !self.finished.is_empty() {
            if let Some(f) = self.log.as_mut() {
                let _ = f.write_all(self.finished.concat().as_bytes());
                let _ = f.flush();
            }
            self.finished.clear();
        }
    }
}

/// Reads what arrived; answers each complete request.
fn read_requests(
    c: &mut Conn,
    opts: &Opts,
    k: u64,
    due: &mut BinaryHeap<std::cmp::Reverse<(i64, u64)>>,
) {
    let mut buf = [0u8; 16384];
    // the request counts as read when its last bytes reached this host (the kernel's receive
    // stamp), not when this thread got round to it among many connections
    let mut recv_ns = None;
    loop {
        match recv_stamped(&c.io, &mut buf) {
            Ok((0, _)) => {
                c.closed = true;
                return;
            }
            Ok((n, at)) => {
                c.inbuf.extend_from_slice(&buf[..n]);
                recv_ns = Some(at);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(_) => {
                c.closed = true;
                return;
            }
        }
    }
    let recv_ns = recv_ns.unwrap_or_else(now_ns);
    while let Some(end) = c.inbuf.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&c.inbuf[..end]).to_string();
        let header = |name: &str| {
            head.lines()
                .skip(1)
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_string())
        };
        let len: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if c.inbuf.len() < end + 4 + len {
            return;
        }
        c.inbuf.drain(..end + 4 + len);
        if head.starts_with("GET") {
            c.out
                .extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
            flush(c, opts, k, due);
            continue;
        }
        c.out.extend_from_slice(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        c.stream = Some(Stream {
            id: header("x-sloscope-request").unwrap_or_default(),
            recv_ns,
            sent: 0,
            pending: 0,
            events_ns: Vec::with_capacity(opts.tokens as usize),
            finished: false,
            done_ns: None,
        });
        flush(c, opts, k, due);
        due.push(std::cmp::Reverse((recv_ns + opts.ttft_ns, k)));
    }
}

/// Reads with the kernel's receive stamp (`SO_TIMESTAMPNS`, wall clock) converted to
/// `CLOCK_MONOTONIC` ns; now where there is none.
fn recv_stamped(io: &TcpStream, buf: &mut [u8]) -> std::io::Result<(usize, i64)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    use std::os::fd::AsRawFd;
    let mut cmsg = nix::cmsg_space!(TimeSpec);
    let mut iov = [std::io::IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(io.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::empty())
        .map_err(std::io::Error::from)?;
    let mono = now_ns();
    let mut at = mono;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                let wall = clock_gettime(ClockId::CLOCK_REALTIME)
                    .map(|t| t.tv_sec() * 1_000_000_000 + t.tv_nsec())
                    .unwrap_or(0);
                let age = wall - (ts.tv_sec() * 1_000_000_000 + ts.tv_nsec());
                if (0..1_000_000_000).contains(&age) {
                    at = mono - age;
                }
            }
        }
    }
    Ok((msg.bytes, at))
}

/// Writes what is buffered; once a write empties the buffer, stamps the events it carried and
/// schedules the next write.
fn flush(c: &mut Conn, opts: &Opts, k: u64, due: &mut BinaryHeap<std::cmp::Reverse<(i64, u64)>>) {
    while !c.out.is_empty() {
        match c.io.write(&c.out) {
            Ok(n) => {
                c.out.drain(..n);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(_) => {
                c.closed = true;
                c.out.clear();
                return;
            }
        }
    }
    let at = now_ns();
    if let Some(s) = c.stream.as_mut() {
        for _ in 0..s.pending {
            s.events_ns.push(at);
        }
        s.pending = 0;
        if s.finished {
            s.done_ns = Some(at);
        } else if s.sent > 0 {
            // write w (from 0) is due at recv + ttft + w × gap, however late the last one was
            let writes = s.sent.div_ceil(opts.coalesce) as i64;
            due.push(std::cmp::Reverse((
                s.recv_ns + opts.ttft_ns + writes * opts.gap_ns,
                k,
            )));
        }
    }
}
