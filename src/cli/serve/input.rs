//! Reading the host's lines as bytes, so that no line can end the session.
//!
//! `AsyncBufReadExt::lines` fails on the first line that is not UTF-8, and
//! a failed read looked like the end of input: the session ended and every
//! later call was lost. Here each line is read as bytes, numbered, and
//! judged on its own; a line that cannot be used becomes an `error` line
//! naming its number, and reading goes on. A line longer than
//! [`MAX_LINE_BYTES`] is skipped to its end without being kept in memory.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest input line accepted (64 MiB). Longer lines are reported and
/// skipped: a host that sends one has a bug, and keeping it would cost as
/// much memory as it is long.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// One line of input, or why it cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text { number: u64, text: String },
    Unusable { number: u64, why: String },
}

/// Splits a byte stream into numbered lines.
pub struct Lines<R> {
    reader: R,
    number: u64,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    pub fn new(reader: R) -> Self {
        Lines {
            reader,
            number: 0,
            buf: Vec::new(),
        }
    }

    /// The next line; `None` at end of input. A read error ends the input
    /// (stdin is gone; nothing more can come).
    pub async fn next(&mut self) -> Option<Line> {
        self.buf.clear();
        let mut too_long = false;
        let mut seen_any = false;
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            if chunk.is_empty() {
                if !seen_any {
                    return None;
                }
                break;
            }
            seen_any = true;
            let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => (&chunk[..at], Some(at + 1)),
                None => (chunk, None),
            };
            if !too_long {
                if self.buf.len() + part.len() > MAX_LINE_BYTES {
                    too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(part);
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
        if too_long {
            return Some(Line::Unusable {
                number,
                why: format!("line {number} is longer than {MAX_LINE_BYTES} bytes; it was skipped"),
            });
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
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

    #[tokio::test]
    async fn empty_input_has_no_lines() {
        assert!(all(b"").await.is_empty());
        assert_eq!(all(b"\n").await.len(), 1);
    }
}
