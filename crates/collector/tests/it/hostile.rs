//! The collector against servers that err, lie or redirect (the test kit's hostile server, one
//! misbehavior each, in the backends' own shapes): every request of such a server ends as a
//! failure carrying the server's message or what was wrong, what the stream proves is what is
//! recorded, a measured request is sent once or its resend is recorded, and no request goes to
//! any address but the endpoint.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::load::drive::{self, Arrival, BodyFn, RepeatSpec};
use sloscope_collector::plan::config::Api;
use sloscope_collector::wire::client::Client;
use sloscope_core::schema::RequestRow;
use sloscope_testkit::hostile::{HostileServer, Misbehavior};

/// What the test sees of a hostile server running on its own thread.
struct Running {
    url: String,
    /// (connections to the elsewhere, completion requests read), read when stopped.
    counts: mpsc::Receiver<(usize, usize)>,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Running {
    fn start(how: Misbehavior) -> Running {
        let (tx, rx) = mpsc::channel();
        let (counts_tx, counts) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let s = HostileServer::start(how).await.unwrap();
                tx.send(s.url()).unwrap();
                let _ = stopped.await;
                let _ = counts_tx.send((s.elsewhere_hits(), s.completion_requests()));
            });
        });
        let url = rx.recv().unwrap();
        Running {
            url,
            counts,
            stop,
            thread,
        }
    }

    /// Stops the server: (connections to the elsewhere, completion requests read).
    fn finish(self) -> (usize, usize) {
        let _ = self.stop.send(());
        let counts = self.counts.recv().unwrap();
        self.thread.join().unwrap();
        counts
    }
}

fn body() -> BodyFn {
    std::sync::Arc::new(|i| {
        Bytes::from(format!(
            r#"{{"prompt":"p {i}","max_tokens":6,"stream":true}}"#
        ))
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn client(url: &str) -> Client {
    Client::new(
        url,
        Api::Completions,
        None,
        2,
        Duration::from_secs(5),
        Duration::from_secs(2),
    )
    .unwrap()
}

/// Six requests, two at a time, against `how`: the rows, and the server's counts.
fn repeat(how: Misbehavior) -> (Vec<RequestRow>, (usize, usize)) {
    let server = Running::start(how);
    let rows = runtime().block_on(async {
        let c = client(&server.url);
        c.warm_pool(2, "/health", Duration::from_secs(2)).await;
        let spec = RepeatSpec {
            index: 0,
            requests: 6,
            concurrency: 2,
            rate_rps: None,
            arrival: Arrival::Poisson,
            warmup: 0,
            seed: 1,
            schedule: None,
            sessions: None,
        };
        let mut rows = Vec::new();
        drive::measure(
            &c,
            &spec,
            &body(),
            &Cancel::default(),
            Instant::now(),
            |r, _| rows.push(r),
        )
        .await;
        rows
    });
    (rows, server.finish())
}

/// Every request failed, each with an error containing `want`.
fn all_failed_with(how: Misbehavior, want: &str) {
    let (rows, (elsewhere, _)) = repeat(how);
    assert_eq!(rows.len(), 6, "{how:?}: sent = ok + failed");
    for r in &rows {
        let e = r
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{how:?}: a success: {r:?}"));
        assert!(e.contains(want), "{how:?}: {e}");
    }
    assert_eq!(elsewhere, 0, "{how:?}: a request went elsewhere");
}

#[test]
fn errors_inside_a_stream_fail_the_request_with_the_servers_message() {
    all_failed_with(
        Misbehavior::LlamaErrorField,
        "server error mid-stream: the server is overloaded",
    );
    all_failed_with(
        Misbehavior::NestedError,
        "server error mid-stream: CUDA out of memory",
    );
    all_failed_with(
        Misbehavior::FlatError,
        "server error mid-stream: generation failed",
    );
    all_failed_with(
        Misbehavior::StringError,
        "server error mid-stream: Input validation error: prompt too long (validation)",
    );
    all_failed_with(Misbehavior::Abort, "finish_reason abort");
}

#[test]
fn events_the_reader_cannot_read_fail_the_request_with_their_bytes() {
    all_failed_with(
        Misbehavior::NotJson,
        "not a JSON object (cut short, or not JSON): this is not json",
    );
    all_failed_with(
        Misbehavior::Truncated,
        "not a JSON object (cut short, or not JSON): {\"choices\"",
    );
    all_failed_with(
        Misbehavior::Unknown,
        "does not understand (no choices, usage or timings): {\"foo\":1}",
    );
}

#[test]
fn a_token_count_the_stream_contradicts_is_not_believed() {
    all_failed_with(
        Misbehavior::UsageHuge,
        "usage.completion_tokens 1000000000 exceeds the max_tokens 6",
    );
    let (rows, _) = repeat(Misbehavior::UsageBelowEvents);
    for r in &rows {
        let e = r.error.as_deref().unwrap();
        assert!(
            e.contains("usage.completion_tokens 1 is below the 6 content events"),
            "{e}"
        );
        // What the stream proves is what is kept: six events, five gaps, no fewer tokens.
        assert_eq!(
            (r.output_tokens, r.output_events, r.itl_us.len()),
            (Some(6), Some(6), 5)
        );
        assert_eq!(r.max_output_tokens, Some(6));
    }
}

/// Keep-alive comments are bytes, not progress: a stream that sends only `: ping` after its
/// third token stalls (2 s without an event), as one that sends nothing does.
#[test]
fn keep_alive_comments_do_not_hold_off_the_stall_timeout() {
    all_failed_with(
        Misbehavior::Pings,
        "stalled: no event for 2s (nothing, or only keep-alive comments)",
    );
}

#[test]
fn a_redirect_is_an_error_naming_its_target_and_is_never_followed() {
    all_failed_with(
        Misbehavior::RedirectStream,
        "HTTP 307: a redirect to http://127.0.0.1:",
    );
    for how in [Misbehavior::RedirectTokenize, Misbehavior::RedirectMetrics] {
        let server = Running::start(how);
        let (note, scraped) = runtime().block_on(async {
            let c = client(&server.url);
            let p =
                sloscope_collector::load::prompt::calibrate(&c, None, 16, Duration::from_secs(2))
                    .await;
            let url = format!("{}/metrics", server.url);
            let s = sloscope_collector::server::telemetry::scrape(c.http(), &url).await;
            (p.note, s.is_some())
        });
        let (hits, _) = server.finish();
        assert_eq!(hits, 0, "{how:?}: a request followed the redirect");
        if how == Misbehavior::RedirectTokenize {
            let note = note.unwrap();
            assert!(
                note.contains("HTTP 307 (a redirect to http://127.0.0.1:"),
                "{note}"
            );
        } else {
            assert!(!scraped, "a redirect is no scrape");
        }
    }
}

#[test]
fn a_calibration_no_tokenizer_could_give_is_not_believed() {
    let server = Running::start(Misbehavior::TokenizeZero);
    let p = runtime().block_on(async {
        let c = client(&server.url);
        sloscope_collector::load::prompt::calibrate(&c, None, 16, Duration::from_secs(2)).await
    });
    server.finish();
    assert_eq!(p.calibrated_tokens, None);
    assert_eq!(
        p.words, 16,
        "one word per token, as uncalibrated prompts are"
    );
    assert!(p
        .note
        .unwrap()
        .contains("counted 0 tokens for 200 common English words"));
}

#[test]
fn a_json_body_or_an_unasked_encoding_is_no_stream() {
    all_failed_with(
        Misbehavior::JsonBody,
        "a JSON body instead of an event stream: model is loading",
    );
    all_failed_with(Misbehavior::Gzip, "Content-Encoding: gzip");
}

#[test]
fn a_request_sent_again_on_a_fresh_connection_is_recorded_as_resent() {
    let (rows, (_, read)) = repeat(Misbehavior::CloseAfterRead);
    assert_eq!(rows.len(), 6);
    let resent = rows.iter().filter(|r| r.resent).count();
    assert!(resent > 0, "no resend recorded: {rows:?}");
    assert!(rows.iter().all(|r| r.error.is_none()), "{rows:?}");
    assert_eq!(
        read,
        rows.len() + resent,
        "the server's extra load is the resends"
    );
}

/// llama-server advertises keep-alive and closes the connection after each streamed response:
/// a closed-loop stream that reuses it at once races the close. After two such closes the
/// client stops reusing connections to the server (and says so), so the resends stop.
#[test]
fn a_server_that_closes_what_it_promised_to_keep_stops_being_reused() {
    let server = Running::start(Misbehavior::CloseAfterStream);
    let (rows, note) = runtime().block_on(async {
        let c = client(&server.url);
        let spec = RepeatSpec {
            index: 0,
            requests: 24,
            concurrency: 2,
            rate_rps: None,
            arrival: Arrival::Poisson,
            warmup: 0,
            seed: 1,
            schedule: None,
            sessions: None,
        };
        let mut rows = Vec::new();
        drive::measure(
            &c,
            &spec,
            &body(),
            &Cancel::default(),
            Instant::now(),
            |r, _| rows.push(r),
        )
        .await;
        (rows, c.reuse_note())
    });
    let (_, read) = server.finish();
    assert_eq!(rows.len(), 24);
    assert!(rows.iter().all(|r| r.error.is_none()), "{rows:?}");
    let resent = rows.iter().filter(|r| r.resent).count();
    assert!(
        resent <= 2,
        "{resent} resends: the client kept reusing closed connections"
    );
    // A resent request may or may not have been read before the close.
    assert!(
        (rows.len()..=rows.len() + resent).contains(&read),
        "{read} read"
    );
    let note = note.expect("the client says it stopped reusing connections");
    assert!(note.contains("stopped reusing connections"), "{note}");
}

#[test]
fn the_control_streams_cleanly() {
    let (rows, (hits, read)) = repeat(Misbehavior::None);
    assert!(rows.iter().all(|r| r.error.is_none()), "{rows:?}");
    assert!(rows.iter().all(|r| !r.resent));
    assert_eq!((hits, read), (0, 6));
    assert!(rows
        .iter()
        .all(|r| r.output_tokens == Some(6) && r.output_events == Some(6)));
}
