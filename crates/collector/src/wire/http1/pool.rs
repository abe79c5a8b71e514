//! The client's keep-alive connections: idle ones reused (checked for the server's close at
//! checkout), warmed before measurement, dropped before the server's own idle timeout.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::{exchange, Conn, Origin, IDLE_FOR};

/// After this many connections the server closed although they ended cleanly and were well
/// inside their idle time (llama-server advertises `Keep-Alive: timeout=5, max=100` and closes
/// after each streamed response), connections to it are no longer reused: a closed-loop
/// stream that sends its next request at once would race the server's close every time.
const BROKEN_PROMISES: u32 = 2;

/// Keep-alive connections to one origin.
pub(crate) struct Pool {
    pub(crate) origin: Origin,
    idle: Mutex<Vec<(Conn, Instant)>>,
    max_idle: usize,
    /// Kept connections the server closed early (found closed at checkout, or stale on use).
    closed_early: AtomicU32,
}

impl Pool {
    pub(crate) fn new(origin: Origin, max_idle: usize) -> Pool {
        Pool {
            origin,
            idle: Mutex::new(Vec::new()),
            max_idle: max_idle.max(1),
            closed_early: AtomicU32::new(0),
        }
    }

    /// A reused connection turned out closed by the server as a request went out.
    pub(crate) fn saw_stale(&self) {
        self.closed_early.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether connections are still reused (the server has kept its keep-alive promise).
    pub(crate) fn reusing(&self) -> bool {
        self.closed_early.load(Ordering::Relaxed) < BROKEN_PROMISES
    }

    /// Kept connections the server closed early, so far.
    pub(crate) fn closed_early(&self) -> u32 {
        self.closed_early.load(Ordering::Relaxed)
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
            let fresh = since.elapsed() < IDLE_FOR;
            if fresh && c.is_open() {
                c.reused = true;
                return Some(c);
            }
            if fresh {
                self.saw_stale();
            }
        }
        None
    }

    /// Returns a connection whose last response ended cleanly (dropped, closing it, once the
    /// server has shown it closes kept connections).
    pub(crate) fn put(&self, conn: Conn) {
        if !self.reusing() {
            return;
        }
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
