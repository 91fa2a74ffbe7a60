//! Reading and parsing an HTTP/1.x request head, strictly and within bounds.
//!
//! The client is a sandboxed program that may be hostile, so the head is
//! read under a size limit and a deadline, and anything a lenient parser
//! might read two ways (bare LF, folded lines, spaces before the colon,
//! control bytes) is a bad request rather than a guess.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// A parsed request head.
#[derive(Debug)]
pub(crate) struct RequestHead {
    pub(crate) method: String,
    pub(crate) target: String,
    /// `HTTP/1.0` or `HTTP/1.1`, as sent.
    pub(crate) version: &'static str,
    /// Names as sent; values as raw bytes (HTTP allows non-UTF-8 values).
    pub(crate) headers: Vec<(String, Vec<u8>)>,
}

impl RequestHead {
    /// All values of a header, compared without regard to case.
    pub(crate) fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

/// Why no head could be read. Each maps to one HTTP status.
#[derive(Debug)]
pub(crate) enum HeadError {
    /// The client closed before sending anything: nothing to answer.
    Closed,
    /// Syntax error (400), with a short explanation for the body.
    Bad(&'static str),
    /// The head exceeds the size limit (431).
    TooLarge,
    /// The head did not arrive in time (408).
    Timeout,
    /// Reading failed; the connection is gone.
    Io,
}

/// Reads up to and including the blank line that ends the head. Returns the
/// parsed head and any bytes the client sent after it (the start of a body
/// or of tunnelled data).
pub(crate) async fn read_head<R: AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
    deadline: Duration,
) -> Result<(RequestHead, Vec<u8>), HeadError> {
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let read_all = async {
        let mut chunk = [0u8; 4096];
        loop {
            // Search only the new bytes (and three before them) for the end.
            let from = buf.len().saturating_sub(3);
            let n = reader.read(&mut chunk).await.map_err(|_| HeadError::Io)?;
            if n == 0 {
                return Err(if buf.is_empty() {
                    HeadError::Closed
                } else {
                    HeadError::Bad("connection closed inside the request head")
                });
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(pos) = find(&buf[from..], b"\r\n\r\n") {
                let end = from + pos + 4;
                if end > limit {
                    return Err(HeadError::TooLarge);
                }
                return Ok(end);
            }
            if buf.len() >= limit {
                return Err(HeadError::TooLarge);
            }
        }
    };
    let end = tokio::time::timeout(deadline, read_all)
        .await
        .map_err(|_| HeadError::Timeout)??;
    let rest = buf.split_off(end);
    Ok((parse_head(&buf[..end - 4])?, rest))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses the head without its final CRLF CRLF.
fn parse_head(bytes: &[u8]) -> Result<RequestHead, HeadError> {
    let mut lines = split_lines(bytes)?.into_iter();
    let request_line = lines.next().ok_or(HeadError::Bad("empty request"))?;
    let (method, target, version) = parse_request_line(request_line)?;
    let mut headers = Vec::new();
    for line in lines {
        headers.push(parse_header(line)?);
    }
    Ok(RequestHead {
        method,
        target,
        version,
        headers,
    })
}

/// Splits on CRLF; a CR or LF anywhere else is an error (no bare LF lines).
fn split_lines(bytes: &[u8]) -> Result<Vec<&[u8]>, HeadError> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                lines.push(&bytes[start..i]);
                i += 2;
                start = i;
            }
            b'\r' | b'\n' => return Err(HeadError::Bad("bare CR or LF in the request head")),
            _ => i += 1,
        }
    }
    lines.push(&bytes[start..]);
    Ok(lines)
}

fn parse_request_line(line: &[u8]) -> Result<(String, String, &'static str), HeadError> {
    let text =
        std::str::from_utf8(line).map_err(|_| HeadError::Bad("request line is not ASCII"))?;
    let mut parts = text.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Bad("request line must be METHOD TARGET VERSION"));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(HeadError::Bad("invalid method"));
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HeadError::Bad("invalid request target"));
    }
    let version = match version {
        "HTTP/1.1" => "HTTP/1.1",
        "HTTP/1.0" => "HTTP/1.0",
        _ => return Err(HeadError::Bad("unsupported HTTP version")),
    };
    Ok((method.to_string(), target.to_string(), version))
}

fn parse_header(line: &[u8]) -> Result<(String, Vec<u8>), HeadError> {
    let colon = line
        .iter()
        .position(|b| *b == b':')
        .ok_or(HeadError::Bad("header line without a colon"))?;
    let name = &line[..colon];
    // Also refuses folded lines (leading space) and "Name :" forms.
    if name.is_empty() || !name.iter().copied().all(is_token_byte) {
        return Err(HeadError::Bad("invalid header name"));
    }
    let value = trim_ows(&line[colon + 1..]);
    if value
        .iter()
        .any(|b| (*b < 0x20 && *b != b'\t') || *b == 0x7f)
    {
        return Err(HeadError::Bad("control character in a header value"));
    }
    // The name is token bytes, hence ASCII.
    let name = String::from_utf8_lossy(name).into_owned();
    Ok((name, value.to_vec()))
}

fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(input: &[u8]) -> Result<(RequestHead, Vec<u8>), HeadError> {
        let mut r = input;
        read_head(&mut r, 256, Duration::from_secs(5)).await
    }

    #[tokio::test]
    async fn parses_a_head_and_keeps_the_rest() {
        let (head, rest) =
            read(b"GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nX-A:  v v \r\n\r\nBODY")
                .await
                .unwrap();
        assert_eq!(head.method, "GET");
        assert_eq!(head.target, "http://a.test/x");
        assert_eq!(head.version, "HTTP/1.1");
        assert_eq!(
            head.values("x-a").collect::<Vec<_>>(),
            vec![b"v v".as_slice()]
        );
        assert_eq!(rest, b"BODY");
    }

    #[tokio::test]
    async fn refuses_ambiguous_syntax() {
        for bad in [
            b"GET / HTTP/1.1\nHost: a\r\n\r\n".as_slice(),
            b"GET / HTTP/1.1\r\n folded\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            b"GET  / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/2\r\n\r\n",
            b"GET / HTTP/1.1\r\nA: b\x00c\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
        ] {
            assert!(
                matches!(read(bad).await, Err(HeadError::Bad(_))),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[tokio::test]
    async fn bounds_size_and_end() {
        let big = format!("GET / HTTP/1.1\r\nA: {}\r\n\r\n", "x".repeat(300));
        assert!(matches!(
            read(big.as_bytes()).await,
            Err(HeadError::TooLarge)
        ));
        assert!(matches!(read(b"").await, Err(HeadError::Closed)));
        assert!(matches!(
            read(b"GET / HTTP/1.1\r\n").await,
            Err(HeadError::Bad(_))
        ));
    }
}
