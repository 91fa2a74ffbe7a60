//! Read's text view: `cat -n`-style numbered lines, streamed.
//!
//! The file is read once, in fixed-size chunks, so memory stays bounded
//! whatever its size or line length: only lines inside the requested window
//! are kept, each at most a few KB, and the output stops growing at a byte
//! cap. The pass still runs to the end of the file, because the read-state
//! snapshot needs the hash of the whole content and the notes need the total
//! line count.

use std::io::{self, Read};

use super::read_state;

/// Bounds of one text view.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// First line shown, 1-based.
    pub start: u64,
    /// How many lines at most.
    pub limit: u64,
    /// Longer lines are cut to this many characters.
    pub max_line_chars: usize,
    /// The numbered text stops before exceeding this many bytes.
    pub max_output_bytes: usize,
}

/// The view, plus what the notes and the read state need.
#[derive(Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub total_lines: u64,
    /// Last line included in `text` (0 when none).
    pub last_shown: u64,
    /// Lines cut at `max_line_chars`.
    pub cut_lines: u64,
    /// Some shown line held bytes that are not UTF-8.
    pub invalid_utf8: bool,
    /// The first window line left out because of the byte cap.
    pub capped_at: Option<u64>,
    pub hash: [u8; 32],
    pub size: u64,
}

const CHUNK: usize = 64 * 1024;

/// Streams `reader` and renders the lines of `window`.
pub fn render(mut reader: impl Read, window: Window) -> io::Result<Rendered> {
    let keep_bytes = window.max_line_chars.saturating_mul(4).saturating_add(4);
    let end = window.start.saturating_add(window.limit);
    let mut out = Rendered::default();
    let mut hasher = read_state::hasher();
    let mut buf = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    let mut line_len: u64 = 0;
    let mut line_no: u64 = 1;
    let mut pending = false;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        sha2::Digest::update(&mut hasher, chunk);
        out.size += n as u64;
        let mut rest = chunk;
        while !rest.is_empty() {
            let wanted = line_no >= window.start && line_no < end && out.capped_at.is_none();
            let (segment, newline) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            if wanted && line.len() < keep_bytes {
                let room = keep_bytes - line.len();
                line.extend_from_slice(&segment[..segment.len().min(room)]);
            }
            line_len += segment.len() as u64;
            pending = true;
            rest = &rest[segment.len() + usize::from(newline)..];
            if newline {
                if wanted {
                    emit(&mut out, line_no, &line, line_len, &window);
                }
                line.clear();
                line_len = 0;
                line_no += 1;
                pending = false;
            }
        }
    }
    if pending {
        if line_no >= window.start && line_no < end && out.capped_at.is_none() {
            emit(&mut out, line_no, &line, line_len, &window);
        }
        out.total_lines = line_no;
    } else {
        out.total_lines = line_no - 1;
    }
    out.hash = read_state::finish(hasher);
    Ok(out)
}

fn emit(out: &mut Rendered, line_no: u64, kept: &[u8], full_len: u64, window: &Window) {
    let truncated = (kept.len() as u64) < full_len;
    let mut bytes = kept;
    if !truncated {
        if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
        }
    }
    let (text, invalid) = decode(bytes, truncated);
    out.invalid_utf8 |= invalid;
    let mut shown: String = text.chars().take(window.max_line_chars).collect();
    if truncated || shown.len() < text.len() {
        out.cut_lines += 1;
        shown.push_str(&format!(
            " … [line cut: {full_len} bytes long, first {} characters shown]",
            window.max_line_chars
        ));
    }
    let rendered = format!("{line_no:>6}\t{shown}\n");
    if out.text.len() + rendered.len() > window.max_output_bytes {
        out.capped_at = Some(line_no);
        return;
    }
    out.text.push_str(&rendered);
    out.last_shown = line_no;
}

/// UTF-8 decoding that tells whether bytes were replaced. A sequence cut by
/// truncation at the end of a kept prefix is not counted as invalid.
fn decode(bytes: &[u8], truncated: bool) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(e) if truncated && e.error_len().is_none() => (
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
            false,
        ),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: u64, limit: u64) -> Window {
        Window {
            start,
            limit,
            max_line_chars: 10,
            max_output_bytes: 1000,
        }
    }

    #[test]
    fn numbers_lines_and_counts_them() {
        let r = render(&b"a\nb\r\nc"[..], window(1, 100)).unwrap();
        assert_eq!(r.text, "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!((r.total_lines, r.last_shown), (3, 3));
        let r = render(&b"a\nb\n"[..], window(2, 100)).unwrap();
        assert_eq!(r.text, "     2\tb\n");
        assert_eq!(r.total_lines, 2);
        assert_eq!(render(&b""[..], window(1, 5)).unwrap().total_lines, 0);
        assert_eq!(r.hash, read_state::hash(b"a\nb\n"));
    }

    #[test]
    fn cuts_long_lines_and_caps_output() {
        let r = render(&b"0123456789abcdef\nshort\n"[..], window(1, 10)).unwrap();
        assert!(r
            .text
            .starts_with("     1\t0123456789 … [line cut: 16 bytes"));
        assert_eq!(r.cut_lines, 1);
        let many = "x\n".repeat(500);
        let mut w = window(1, 1000);
        w.max_output_bytes = 90;
        let r = render(many.as_bytes(), w).unwrap();
        assert_eq!(r.last_shown, 10);
        assert_eq!(r.capped_at, Some(11));
        assert_eq!(r.total_lines, 500);
    }

    #[test]
    fn flags_invalid_utf8_but_not_a_cut_sequence() {
        let r = render(&b"ok\n\xff\xfe bad\n"[..], window(1, 10)).unwrap();
        assert!(r.invalid_utf8);
        assert!(r.text.contains('\u{fffd}'));
        let long = "€".repeat(100);
        let r = render(long.as_bytes(), window(1, 10)).unwrap();
        assert!(!r.invalid_utf8);
        assert_eq!(r.cut_lines, 1);
    }
}
