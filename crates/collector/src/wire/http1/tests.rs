//! The exchange's unit tests: chunked bodies split anywhere, framing, origins, stamps.

use super::body::{ChunkState, Chunked};
use super::conn::kernel_instant;

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
