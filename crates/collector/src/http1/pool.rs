//! The client's keep-alive connections: idle ones reused (checked for the server's close at
//! checkout), warmed before measurement, dropped before the server's own idle timeout.

use std::io;
use std::sync::Mutex;
use std::time::Instant;

use super::{exchange, Conn, Origin, IDLE_FOR};

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
