//! Why a request failed and why a collection stopped, as enums: control flow matches on these,
//! never on message text. Each has the message written into the run file.

/// How one request failed. The row's `error` text starts with [`FailureKind::label`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// No connection could be made, or it broke before a response.
    Connection,
    /// No response headers, or no end of stream, within the request timeout.
    Timeout,
    /// No bytes for the stall timeout.
    Stalled,
    /// A non-success HTTP status.
    Http(u16),
    /// The response stream broke or carried an error.
    Stream,
    /// The collection was cancelled while the request was in flight.
    Cancelled,
}

impl FailureKind {
    /// The first words of the row's `error` text.
    pub fn label(self) -> String {
        match self {
            FailureKind::Connection => "connection error".into(),
            FailureKind::Timeout => "timeout".into(),
            FailureKind::Stalled => "stalled".into(),
            FailureKind::Http(code) => format!("HTTP {code}"),
            FailureKind::Stream => "stream error".into(),
            FailureKind::Cancelled => "cancelled".into(),
        }
    }

    /// `label: detail`, as written into the run file.
    pub fn message(self, detail: &str) -> String {
        format!("{}: {detail}", self.label())
    }
}

/// A signal that interrupts a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM (`timeout`, a pod's stop).
    Terminate,
    /// SIGHUP (a closed terminal).
    Hangup,
    /// A test's or a caller's own stop.
    Other,
}

impl Signal {
    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
            Signal::Other => "a stop request",
        }
    }

    /// The exit status a process stopped by it gives (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Hangup => 129,
            Signal::Terminate => 143,
            Signal::Interrupt | Signal::Other => 130,
        }
    }
}

/// Why a collection was cancelled. The first reason given wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted(Signal),
    /// The launched server process exited while a run was in flight.
    ServerExited(String),
    /// The endpoint refused every connection for a while.
    EndpointUnreachable(usize),
    /// Every request for a while timed out or stalled: the endpoint takes connections and
    /// answers nothing (a hung server).
    EndpointSilent(usize),
    /// The endpoint answered every request with 401 or 403 for a while: the key is wrong or
    /// missing.
    AuthRejected(u16, usize),
    /// The journal could not be written: requests would be lost.
    JournalWrite(String),
    /// A run file could not be written.
    RunFileWrite(String),
}

impl StopReason {
    /// The run file's `failure` text.
    pub fn message(&self) -> String {
        match self {
            StopReason::Interrupted(how) => format!("interrupted by {}", how.name()),
            StopReason::ServerExited(status) => {
                format!("the server process exited during the run ({status})")
            }
            StopReason::EndpointUnreachable(n) => {
                format!("the endpoint stopped answering ({n} connection errors in a row)")
            }
            StopReason::EndpointSilent(n) => format!(
                "the endpoint stopped responding ({n} requests in a row timed out or stalled)"
            ),
            StopReason::AuthRejected(code, n) => format!(
                "the endpoint rejected the credentials (HTTP {code} on {n} requests in a row): check --api-key-env"
            ),
            StopReason::JournalWrite(e) => format!("journal write failed: {e}"),
            StopReason::RunFileWrite(e) => format!("run file write failed: {e}"),
        }
    }

    /// Whether this reason, given after `earlier`, is its cause and replaces it: a launched
    /// server's exit explains the connection errors that came first (the refusals reach the
    /// client within milliseconds, the exit reaches the collector a moment later).
    pub fn explains(&self, earlier: &StopReason) -> bool {
        matches!(
            (self, earlier),
            (
                StopReason::ServerExited(_),
                StopReason::EndpointUnreachable(_)
            )
        )
    }

    /// Whether it stops the whole collection (an interruption, output that cannot be written)
    /// rather than one target (its server or endpoint failed).
    pub fn stops_everything(&self) -> bool {
        matches!(
            self,
            StopReason::Interrupted(_) | StopReason::JournalWrite(_) | StopReason::RunFileWrite(_)
        )
    }

    /// Whether output could not be written (exit code 4).
    pub fn is_output_failure(&self) -> bool {
        matches!(
            self,
            StopReason::JournalWrite(_) | StopReason::RunFileWrite(_)
        )
    }

    /// Whether the backend, not the client, failed: the run is evidence of a failed backend.
    pub fn is_backend_failure(&self) -> bool {
        matches!(
            self,
            StopReason::ServerExited(_)
                | StopReason::EndpointUnreachable(_)
                | StopReason::EndpointSilent(_)
        )
    }
}
