//! Server-sent events framing: splits a byte stream into `data:` payloads, incrementally and
//! without copying complete events.
//!
//! Hand-written rather than taken from eventsource-stream: that crate allocates a `String` per
//! event, and the collector must keep up with millions of events per second on one core. Only
//! what OpenAI-compatible servers send is needed: `data:` lines (joined by `\n` when an event has
//! several), events ended by a blank line, `\r\n` accepted. Comments, `event:`, `id:` and
//! `retry:` carry nothing sloscope uses; an `error:` line is llama-server's mid-stream error
//! (before its September 2025 change) and is handed on as one, never dropped.

/// Which field an event's payload came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `data:`, the normal payload.
    Data,
    /// `error:`, a server's error outside the `data` field.
    Error,
}

/// Incremental SSE parser.
#[derive(Default)]
pub struct SseParser {
    /// Bytes of an incomplete line carried over from the previous chunk.
    carry: Vec<u8>,
    /// `data` of the event being assembled.
    data: Vec<u8>,
    has_data: bool,
    /// The event being assembled came in an `error:` line.
    error: bool,
}

impl SseParser {
    /// Feeds one chunk; calls `on_event` with the field and data of every event completed in it.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(Field, &[u8])) {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                None => {
                    self.carry.extend_from_slice(rest);
                    return;
                }
                Some(i) => {
                    let mut line = std::mem::take(&mut self.carry);
                    line.extend_from_slice(&rest[..i]);
                    self.line(&line, &mut on_event);
                    rest = &rest[i + 1..];
                }
            }
        }
        while let Some(i) = memchr::memchr(b'\n', rest) {
            let line = &rest[..i];
            rest = &rest[i + 1..];
            self.line(line, &mut on_event);
        }
        self.carry.extend_from_slice(rest);
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(Field, &[u8])) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if self.has_data {
                let field = if self.error {
                    Field::Error
                } else {
                    Field::Data
                };
                on_event(field, &self.data);
                self.data.clear();
                self.has_data = false;
                self.error = false;
            }
            return;
        }
        let (data, error) = match (line.strip_prefix(b"data:"), line.strip_prefix(b"error:")) {
            (Some(v), _) => (Some(v), false),
            (None, Some(v)) => (Some(v), true),
            _ => (None, false),
        };
        self.error |= error;
        if let Some(v) = data {
            let v = v.strip_prefix(b" ").unwrap_or(v);
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(v);
            self.has_data = true;
        }
        // comments (":"), "event:", "id:", "retry:" carry nothing we use
    }

    /// The field and data of an event that was not terminated by a blank line when the stream
    /// ended.
    pub fn finish(&mut self) -> Option<(Field, Vec<u8>)> {
        if !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            let mut last = None;
            self.line(&line, &mut |f: Field, d: &[u8]| {
                last = Some((f, d.to_vec()))
            });
            if last.is_some() {
                return last;
            }
        }
        self.has_data.then(|| {
            self.has_data = false;
            let field = if self.error {
                Field::Error
            } else {
                Field::Data
            };
            (field, std::mem::take(&mut self.data))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, |f, d| {
                let d = String::from_utf8_lossy(d);
                out.push(match f {
                    Field::Data => d.into_owned(),
                    Field::Error => format!("error:{d}"),
                })
            });
        }
        if let Some((_, d)) = p.finish() {
            out.push(format!("unterminated:{}", String::from_utf8_lossy(&d)));
        }
        out
    }

    #[test]
    fn splits_events_across_arbitrary_chunk_boundaries() {
        let text = b"data: {\"a\":1}\n\n: comment\n\ndata:{\"b\":2}\r\n\r\nevent: x\ndata: l1\ndata: l2\n\ndata: [DONE]\n\n";
        let want = vec!["{\"a\":1}", "{\"b\":2}", "l1\nl2", "[DONE]"];
        assert_eq!(events(&[text]), want);
        for cut in 1..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(events(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(events(&bytes), want);
    }

    #[test]
    fn an_error_field_is_an_event_of_its_own() {
        let text =
            b"data: {\"a\":1}\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\ndata: [DONE]\n\n";
        assert_eq!(
            events(&[text]),
            vec![
                "{\"a\":1}",
                "error:{\"code\":500,\"message\":\"boom\"}",
                "[DONE]"
            ]
        );
    }

    #[test]
    fn reports_an_unterminated_last_event() {
        assert_eq!(
            events(&[b"data: {\"x\":1}\n"]),
            vec!["unterminated:{\"x\":1}"]
        );
        assert_eq!(
            events(&[b"data: {\"x\":1}"]),
            vec!["unterminated:{\"x\":1}"]
        );
    }
}
