//! Reading the host's lines as bytes, so that no line can end the session.
//!
//! `AsyncBufReadExt::lines` fails on the first line that is not UTF-8, and
//! a failed read looked like the end of input: the session ended and every
//! later call was lost. Here each line is read as bytes, numbered, and
//! judged on its own; a line that cannot be used becomes an `error` line
//! naming its number, and reading goes on. A line longer than
//! [`MAX_LINE_BYTES`] is skipped to its end without being kept in memory.
//!
//! A long line is kept in pieces of [`PIECE_BYTES`] and joined once at its
//! end, freeing each piece as it is copied. A single buffer grown by
//! doubling held two large copies at each growth (the old buffer and the
//! new one) on allocators that copy on `realloc` instead of remapping, so a
//! line near the limit cost up to three times its size.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest input line accepted (64 MiB). Longer lines are reported and
/// skipped: a host that sends one has a bug, and keeping it would cost as
/// much memory as it is long.
pub(super) const MAX_LINE_BYTES: usize = 64 << 20;

/// Size of the pieces a long line is kept in (see the module's comment).
const PIECE_BYTES: usize = 1 << 20;

/// One line of input, or why it cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    Text { number: u64, text: String },
    Unusable { number: u64, why: String },
}

/// Splits a byte stream into numbered lines.
///
/// [`Lines::next`] is cancel-safe: serve polls it in a `select!` beside the
/// batches' events, so a call to `next` is often dropped half-way through a
/// line. Everything read so far lives in the struct, not in the future, and
/// the next call continues the same line. (It once started afresh, and the
/// first half of a line was lost: an `interrupt` vanished or became "not
/// JSON".)
pub(super) struct Lines<R> {
    reader: R,
    number: u64,
    /// The line read so far.
    buf: Pieces,
    /// The line read so far is over [`MAX_LINE_BYTES`]; its bytes are dropped.
    too_long: bool,
    /// Some byte of the current line has been read.
    seen_any: bool,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    pub(super) fn new(reader: R) -> Self {
        Lines {
            reader,
            number: 0,
            buf: Pieces::default(),
            too_long: false,
            seen_any: false,
        }
    }

    /// The next line; `None` at end of input. A read error ends the input
    /// (stdin is gone; nothing more can come). Cancel-safe.
    pub(super) async fn next(&mut self) -> Option<Line> {
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            if chunk.is_empty() {
                if !self.seen_any {
                    return None;
                }
                break;
            }
            self.seen_any = true;
            let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => (&chunk[..at], Some(at + 1)),
                None => (chunk, None),
            };
            if !self.too_long {
                if self.buf.len + part.len() > MAX_LINE_BYTES {
                    self.too_long = true;
                    self.buf = Pieces::default();
                } else {
                    self.buf.keep(part);
                }
            }
            let used = found.unwrap_or(chunk.len());
            self.reader.consume(used);
            if found.is_some() {
                break;
            }
        }
        self.number += 1;
        let number = self.number;
        self.seen_any = false;
        if std::mem::take(&mut self.too_long) {
            return Some(Line::Unusable {
                number,
                why: format!("line {number} is longer than {MAX_LINE_BYTES} bytes; it was skipped"),
            });
        }
        let mut line = self.buf.take();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        match String::from_utf8(line) {
            Ok(text) => Some(Line::Text { number, text }),
            Err(e) => Some(Line::Unusable {
                number,
                why: format!(
                    "line {number} is not valid UTF-8 (invalid byte at offset {}); it was skipped",
                    e.utf8_error().valid_up_to()
                ),
            }),
        }
    }
}

/// A line kept in pieces (see the module's comment).
#[derive(Default)]
struct Pieces {
    /// The earlier pieces of a long line, full ([`PIECE_BYTES`] each).
    full: Vec<Vec<u8>>,
    /// The last piece (the whole line when it is short).
    last: Vec<u8>,
    /// Bytes kept in all pieces.
    len: usize,
}

impl Pieces {
    /// Appends `part`, starting a new piece whenever the last one is full.
    fn keep(&mut self, mut part: &[u8]) {
        self.len += part.len();
        while !part.is_empty() {
            if self.last.len() >= PIECE_BYTES {
                let full = std::mem::replace(&mut self.last, Vec::with_capacity(PIECE_BYTES));
                self.full.push(full);
            }
            let n = (PIECE_BYTES - self.last.len()).min(part.len());
            self.last.extend_from_slice(&part[..n]);
            part = &part[n..];
        }
    }

    /// The line as one buffer of its exact size; `self` is left empty.
    fn take(&mut self) -> Vec<u8> {
        let Pieces { full, last, len } = std::mem::take(self);
        if full.is_empty() {
            return last;
        }
        let mut line = Vec::with_capacity(len);
        // Each piece is freed once copied: at most one piece more than the
        // line is held at any time.
        for piece in full.into_iter().chain(std::iter::once(last)) {
            line.extend_from_slice(&piece);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(bytes: &[u8]) -> Vec<Line> {
        let mut lines = Lines::new(tokio::io::BufReader::with_capacity(3, bytes));
        let mut out = Vec::new();
        while let Some(line) = lines.next().await {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn invalid_utf8_is_reported_with_its_number_and_reading_goes_on() {
        let lines = all(b"{\"a\":1}\n\xff\xfe\n\r\nlast").await;
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            Line::Text {
                number: 1,
                text: "{\"a\":1}".into()
            }
        );
        assert!(matches!(&lines[1], Line::Unusable { number: 2, why } if why.contains("UTF-8")));
        assert_eq!(
            lines[2],
            Line::Text {
                number: 3,
                text: String::new()
            }
        );
        assert_eq!(
            lines[3],
            Line::Text {
                number: 4,
                text: "last".into()
            }
        );
    }

    /// A reader that hands out one byte per poll and is pending in between,
    /// so a `select!` can drop `next` in the middle of any line.
    struct Trickle {
        bytes: Vec<u8>,
        at: usize,
        ready: bool,
    }

    impl tokio::io::AsyncRead for Trickle {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let this = self.get_mut();
            if !this.ready {
                this.ready = true;
                cx.waker().wake_by_ref();
                return std::task::Poll::Pending;
            }
            this.ready = false;
            if let Some(&b) = this.bytes.get(this.at) {
                buf.put_slice(&[b]);
                this.at += 1;
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_next_dropped_mid_line_loses_nothing() {
        let text = b"{\"type\":\"add\"}\n{\"type\":\"interrupt\"}\nlast";
        let reader = tokio::io::BufReader::with_capacity(
            2,
            Trickle {
                bytes: text.to_vec(),
                at: 0,
                ready: false,
            },
        );
        let mut lines = Lines::new(reader);
        let mut got = Vec::new();
        let mut drops = 0;
        loop {
            // Each attempt is polled once and abandoned if it must wait,
            // as a `select!` does when another branch is ready first.
            let attempt = lines.next();
            tokio::pin!(attempt);
            match futures::poll!(attempt.as_mut()) {
                std::task::Poll::Ready(Some(line)) => got.push(line),
                std::task::Poll::Ready(None) => break,
                std::task::Poll::Pending => drops += 1,
            }
        }
        assert!(drops > 10, "the reader never made `next` wait");
        let texts: Vec<_> = got
            .iter()
            .map(|l| match l {
                Line::Text { text, .. } => text.as_str(),
                Line::Unusable { why, .. } => why.as_str(),
            })
            .collect();
        assert_eq!(
            texts,
            ["{\"type\":\"add\"}", "{\"type\":\"interrupt\"}", "last"]
        );
    }

    #[tokio::test]
    async fn a_line_of_several_pieces_comes_back_whole() {
        // 3.5 pieces of varied bytes, read 8 KiB at a time, then a short line.
        let long: Vec<u8> = (0..PIECE_BYTES * 7 / 2)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let mut input = long.clone();
        input.extend_from_slice(b"\r\nnext\n");
        let mut lines = Lines::new(tokio::io::BufReader::with_capacity(8192, &input[..]));
        let Some(Line::Text { number: 1, text }) = lines.next().await else {
            panic!("the long line is read");
        };
        assert_eq!(text.as_bytes(), &long[..]);
        assert_eq!(
            text.capacity(),
            long.len() + 1,
            "one buffer of the line's size"
        );
        let Some(Line::Text { number: 2, text }) = lines.next().await else {
            panic!("the next line is read");
        };
        assert_eq!(text, "next");
        assert!(lines.next().await.is_none());
    }

    #[tokio::test]
    async fn empty_input_has_no_lines() {
        assert!(all(b"").await.is_empty());
        assert_eq!(all(b"\n").await.len(), 1);
    }
}
