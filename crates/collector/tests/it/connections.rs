//! The collector's connections to a server that closes them: a reused keep-alive connection
//! closed as the request went out is sent once more (recorded as resent, timed from the first
//! attempt); one closed well after the request was delivered is a failed request, never sent
//! again; a fresh connection closed unanswered is a failure.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sloscope_collector::cancel::Cancel;
use sloscope_collector::failure::FailureKind;
use sloscope_collector::plan::config::Api;
use sloscope_collector::wire::client::{Client, Observed};

/// Reads one request's head (and what came with it) from `c`.
fn read_request(c: &mut std::net::TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = c.read(&mut buf).unwrap();
        if n == 0 {
            return got;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
}

/// A client of one connection, warmed: its first request goes on a reused connection.
async fn warm_client(url: &str) -> Client {
    let client = Client::new(
        url,
        Api::Completions,
        None,
        1,
        Duration::from_secs(5),
        Duration::from_secs(5),
    )
    .unwrap();
    client.warm_pool(1, "/health", Duration::from_secs(5)).await;
    client
}

/// Answers the warm-up GET on `a` with keep-alive, then reads the POST that follows on it.
fn warm_up_then_read_post(a: &mut std::net::TcpStream) {
    assert!(read_request(a).starts_with(b"GET /health"));
    a.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        .unwrap();
    assert!(read_request(a).starts_with(b"POST /v1/completions"));
}

/// A reused keep-alive connection that the server closes on receiving the request (it never
/// answered it) is retried once on a fresh connection; a fresh connection closed the same way
/// is a connection failure, not retried.
#[test]
fn a_request_lost_on_a_stale_connection_is_sent_again() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        // 1: the warm-up GET answered with keep-alive, then the POST on it dropped unanswered
        let (mut a, _) = listener.accept().unwrap();
        warm_up_then_read_post(&mut a);
        drop(a);
        // 2: the same request again on a fresh connection, answered as a stream
        let (mut b, _) = listener.accept().unwrap();
        let req = read_request(&mut b);
        assert!(req.starts_with(b"POST /v1/completions"), "{req:?}");
        let events = [
            "data: {\"choices\":[{\"text\":\"a\"}]}\n\n",
            "data: {\"choices\":[{\"text\":\"b\"}]}\n\n",
            "data: [DONE]\n\n",
        ];
        let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        for e in events {
            out.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
        }
        out.extend_from_slice(b"0\r\n\r\n");
        b.write_all(&out).unwrap();
        // 3: a fresh connection dropped unanswered
        let (mut c, _) = listener.accept().unwrap();
        read_request(&mut c);
        drop(c);
        drop(b);
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (first, second) = rt.block_on(async {
        let client = warm_client(&url).await;
        let body = Bytes::from_static(br#"{"prompt":"x","max_tokens":2,"stream":true}"#);
        let mut obs = Observed::default();
        let t0 = Instant::now();
        let first = client
            .stream(body.clone(), t0, "1", &Cancel::default(), &mut obs)
            .await;
        // a new client has no pooled connection: its request goes on a fresh one
        let fresh = Client::new(
            &url,
            Api::Completions,
            None,
            1,
            Duration::from_secs(5),
            Duration::from_secs(5),
        )
        .unwrap();
        let second = fresh
            .stream(body, t0, "2", &Cancel::default(), &mut obs)
            .await;
        (first, second)
    });
    server.join().unwrap();
    let (row, kind) = first;
    assert!(kind.is_none(), "{:?} {:?}", kind, row.error);
    assert!(row.resent, "the request went out twice: recorded");
    assert_eq!((row.output_tokens, row.itl_us.len()), (Some(2), 1));
    let (row, kind) = second;
    assert_eq!(kind, Some(FailureKind::Connection), "{:?}", row.error);
    assert!(
        row.error
            .as_deref()
            .is_some_and(|e| e.contains("connection closed before a response head")),
        "{:?}",
        row.error
    );
}

/// A server that takes a request on a reused connection, holds it 300 ms and then closes the
/// connection without a byte of answer dropped that request: it is a failed request, timed from
/// its send, never sent again (sending it again would hide the failure and its wait).
#[test]
fn a_request_held_then_dropped_on_a_reused_connection_is_a_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut a, _) = listener.accept().unwrap();
        warm_up_then_read_post(&mut a);
        std::thread::sleep(Duration::from_millis(300));
        drop(a);
        // No second attempt: nothing connects again within a second.
        listener.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_secs(1);
        let mut again = 0;
        while Instant::now() < until {
            if listener.accept().is_ok() {
                again += 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        again
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (row, kind) = rt.block_on(async {
        let client = warm_client(&url).await;
        let body = Bytes::from_static(br#"{"prompt":"x","max_tokens":2,"stream":true}"#);
        let t0 = Instant::now();
        client
            .stream(body, t0, "1", &Cancel::default(), &mut Observed::default())
            .await
    });
    assert_eq!(server.join().unwrap(), 0, "the request was sent again");
    assert_eq!(kind, Some(FailureKind::Connection), "{:?}", row.error);
    assert!(!row.resent);
    let error = row.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("ms after the request was sent, without answering"),
        "{error}"
    );
    assert!(row.e2e_us.unwrap_or(0) >= 290_000, "{:?}", row.e2e_us);
}
