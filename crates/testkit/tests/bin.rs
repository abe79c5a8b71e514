//! The `scripted-server` binary starts on 127.0.0.1, answers `/health`, labels itself a
//! simulation, and streams. (Also makes `cargo test --workspace` build the binary, which the CLI's
//! end-to-end tests launch.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn get(port: u16, request: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn scripted_server_binary_serves_health_and_a_labelled_stream() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scripted-server"))
        .args([
            "--port",
            "0",
            "--ttft-ms",
            "1",
            "--gap-ms",
            "1",
            "--tokens",
            "3",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().rsplit(':').next().unwrap().parse().unwrap();
    let health = get(
        port,
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let body = r#"{"prompt":"a b","max_tokens":8,"stream":true}"#;
    let req = format!("POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    let resp = get(port, &req);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(resp.contains("x-sloscope-simulation: testkit"), "{resp}");
    // Three content events: the first names the request (arrival 0), the rest are tokens.
    assert!(resp.contains("\"text\":\" a0\""), "{resp}");
    assert_eq!(resp.matches("\"text\":\" tok\"").count(), 2, "{resp}");
    assert!(resp.contains("\"completion_tokens\":3"));
    assert!(resp.contains("data: [DONE]"));
}
