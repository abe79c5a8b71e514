//! What the scripted server is told to do: its timing, slots, faults and prefix cache.

use std::collections::HashMap;
use std::time::Duration;

/// A fault injected into one request (by arrival index, 0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer HTTP 500 with an OpenAI-style error body.
    Http500,
    /// After this many content events, send `data: {"error": …}` and end without `[DONE]`.
    MidStreamError(u32),
    /// After this many content events, stop sending but keep the connection open.
    Stall(u32),
    /// After this many content events, close the connection without `[DONE]`.
    Disconnect(u32),
}

/// What the server does.
#[derive(Debug, Clone)]
pub struct Script {
    /// Admission → first content event.
    pub ttft: Duration,
    /// Between content events.
    pub gap: Duration,
    /// Content events per request (capped by the request's `max_tokens`).
    pub tokens: u32,
    /// Tokens carried by each content event (the usage count is `events × tokens_per_event`).
    pub tokens_per_event: u32,
    /// Concurrent requests served; the rest wait (and show as deferred in `/metrics`).
    pub slots: usize,
    /// Faults by arrival index.
    pub faults: HashMap<u64, Fault>,
    /// Write every event of a request at once, without delays (throughput benchmark).
    pub burst: bool,
    /// Append one JSON line per request to this file as it arrives, timed by this process's
    /// clock: `{"at_us", "prompt_tokens", "max_tokens", "prompt_head", "prompt", "request_id"}`
    /// (`at_us` from start; a chat request's prompt is its messages' contents joined by spaces).
    pub log: Option<std::path::PathBuf>,
    /// Report a prefix cache: `usage.prompt_tokens_details.cached_tokens` and `timings.cache_n`.
    pub prefix_cache: Option<PrefixCache>,
}

/// What the scripted server says of its prefix cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixCache {
    /// The longest word prefix the prompt shares with any earlier prompt (one token per word).
    Honest,
    /// More cached tokens than the prompt has: a server whose counts cannot be.
    Lying,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            ttft: Duration::from_millis(20),
            gap: Duration::from_millis(5),
            tokens: 16,
            tokens_per_event: 1,
            slots: usize::MAX >> 4,
            faults: HashMap::new(),
            burst: false,
            log: None,
            prefix_cache: None,
        }
    }
}
