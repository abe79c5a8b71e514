//! A response body as it arrives: content-length, chunked (decoded across any split) or
//! ended by the connection's close.

use super::{Framing, Head};

/// Decodes a response body as it arrives.
#[derive(Debug)]
pub(crate) struct Body {
    pub(super) framing: Framing,
    pub(super) chunk: Chunked,
    /// Bytes followed the end of the body.
    pub(super) extra: bool,
}

impl Body {
    /// Feeds received bytes; passes the body's bytes to `out`. True once the body has ended.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        out: &mut impl FnMut(&[u8]),
    ) -> Result<bool, String> {
        match &mut self.framing {
            Framing::Close => {
                out(input);
                Ok(false)
            }
            Framing::Length(left) => {
                let n = (*left).min(input.len() as u64) as usize;
                if n > 0 {
                    out(&input[..n]);
                }
                *left -= n as u64;
                self.extra |= n < input.len();
                Ok(*left == 0)
            }
            Framing::Chunked => {
                let used = self.chunk.feed(input, out)?;
                self.extra |= used < input.len();
                Ok(self.chunk.state == ChunkState::Done)
            }
        }
    }

    /// End of stream is the normal end of this body.
    pub(crate) fn ends_at_close(&self) -> bool {
        self.framing == Framing::Close
    }

    /// The connection can carry another request once this body has ended.
    pub(crate) fn reusable(&self, head: &Head) -> bool {
        !head.close && !self.extra && self.framing != Framing::Close
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf,
    Done,
}

/// `Transfer-Encoding: chunked`, byte by byte for the framing and in bulk for the data.
#[derive(Debug, Default)]
pub(super) struct Chunked {
    pub(super) state: ChunkState,
    pub(super) size: u64,
    pub(super) digits: u8,
}

impl Chunked {
    /// Returns the bytes of `input` used (all of them unless the body ended inside it).
    pub(super) fn feed(
        &mut self,
        input: &[u8],
        out: &mut impl FnMut(&[u8]),
    ) -> Result<usize, String> {
        let mut i = 0;
        while i < input.len() && self.state != ChunkState::Done {
            if self.state == ChunkState::Data {
                let n = self.size.min((input.len() - i) as u64) as usize;
                out(&input[i..i + n]);
                i += n;
                self.size -= n as u64;
                if self.size == 0 {
                    self.state = ChunkState::DataCr;
                }
                continue;
            }
            self.byte(input[i])?;
            i += 1;
        }
        Ok(i)
    }

    pub(super) fn byte(&mut self, b: u8) -> Result<(), String> {
        use ChunkState::*;
        let bad = |what: &str| Err(format!("malformed chunked body: {what} (byte {b:#04x})"));
        match self.state {
            Size => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if self.digits >= 15 {
                        return bad("chunk size too large");
                    }
                    let v = (b as char).to_digit(16).unwrap_or(0) as u64;
                    self.size = self.size * 16 + v;
                    self.digits += 1;
                }
                b';' | b' ' | b'\t' if self.digits > 0 => self.state = Extension,
                b'\r' if self.digits > 0 => self.state = SizeLf,
                b'\n' if self.digits > 0 => self.size_done(),
                _ => return bad("expected a chunk size"),
            },
            Extension => match b {
                b'\r' => self.state = SizeLf,
                b'\n' => self.size_done(),
                _ => {}
            },
            SizeLf => match b {
                b'\n' => self.size_done(),
                _ => return bad("expected LF after the chunk size"),
            },
            DataCr => match b {
                b'\r' => self.state = DataLf,
                b'\n' => self.state = Size,
                _ => return bad("expected CRLF after chunk data"),
            },
            DataLf => match b {
                b'\n' => self.state = Size,
                _ => return bad("expected LF after chunk data"),
            },
            TrailerStart => match b {
                b'\r' => self.state = TrailerLf,
                b'\n' => self.state = Done,
                _ => self.state = TrailerLine,
            },
            TrailerLine => {
                if b == b'\n' {
                    self.state = TrailerStart;
                }
            }
            TrailerLf => match b {
                b'\n' => self.state = Done,
                _ => return bad("expected LF ending the trailer"),
            },
            Data | Done => {}
        }
        Ok(())
    }

    pub(super) fn size_done(&mut self) {
        self.digits = 0;
        self.state = if self.size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data
        };
    }
}
