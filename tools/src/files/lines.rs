//! Read's text view: `cat -n`-style numbered lines, streamed.
//!
//! The file is read once, in fixed-size chunks, so memory stays bounded
//! whatever its size or line length: only lines inside the requested window
//! are kept, each at most a few KB, and the output stops growing at a byte
//! cap. The pass normally runs to the end of the file, because the read-state
//! snapshot wants the hash of the whole content and the notes the total line
//! count; past `scan_limit` bytes it stops once the window is done, so paging
//! through the start of a multi-gigabyte log does not read all of it.

use std::io::{self, Read};

use super::read_state;

/// Bounds of one text view.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    /// First line shown, 1-based.
    pub start: u64,
    /// How many lines at most.
    pub limit: u64,
    /// Longer lines are cut to this many characters.
    pub max_line_chars: usize,
    /// The numbered text stops before exceeding this many bytes.
    pub max_output_bytes: usize,
    /// Past this many bytes, reading stops as soon as the window is done.
    pub scan_limit: u64,
}

/// The view, plus what the notes and the read state need.
#[derive(Debug, Default)]
pub(super) struct Rendered {
    pub text: String,
    /// The shown lines as they are in the file (without the numbers; cut
    /// lines as shown), one `\n` after each: what hooks get as Read's
    /// `file.content`.
    pub content: String,
    pub total_lines: u64,
    /// Last line included in `text` (0 when none).
    pub last_shown: u64,
    /// Lines cut at `max_line_chars`.
    pub cut_lines: u64,
    /// Some shown line held bytes that are not UTF-8.
    pub invalid_utf8: bool,
    /// The first window line left out because of the byte cap.
    pub capped_at: Option<u64>,
    /// The whole file was scanned: `total_lines` is exact and `hash` is set.
    pub complete: bool,
    /// SHA-256 of the whole content, when it was all read.
    pub hash: Option<[u8; 32]>,
    /// Bytes read.
    pub size: u64,
}

const CHUNK: usize = 64 * 1024;

/// Streams `reader` and renders the lines of `window`. `stop` is polled
/// between chunks, so a cancelled call does not keep reading a huge file.
pub(super) fn render(
    mut reader: impl Read,
    window: Window,
    stop: &dyn Fn() -> bool,
) -> io::Result<Rendered> {
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
        if stop() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the call was cancelled",
            ));
        }
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
        let window_done = line_no >= end || out.capped_at.is_some();
        if out.size >= window.scan_limit && window_done {
            // Lines counted so far; the rest of the file is not read.
            out.total_lines = line_no - 1;
            return Ok(out);
        }
    }
    out.complete = true;
    if pending {
        if line_no >= window.start && line_no < end && out.capped_at.is_none() {
            emit(&mut out, line_no, &line, line_len, &window);
        }
        out.total_lines = line_no;
    } else {
        out.total_lines = line_no - 1;
    }
    out.hash = Some(read_state::finish(hasher));
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
    out.content.push_str(&shown);
    out.content.push('\n');
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

    #[test]
    fn stops_early_past_the_scan_limit_once_the_window_is_done() {
        let text = "abcdefghi\n".repeat(100_000);
        let mut w = window(2, 3);
        w.scan_limit = 1;
        let r = render(text.as_bytes(), w, &|| false).unwrap();
        assert!(!r.complete && r.hash.is_none());
        assert_eq!(
            r.text,
            "     2\tabcdefghi\n     3\tabcdefghi\n     4\tabcdefghi\n"
        );
        assert_eq!(r.content, "abcdefghi\n".repeat(3));
        assert!(r.size < text.len() as u64 && r.total_lines >= 4);
    }

    #[test]
    fn stops_when_asked() {
        let err = render(&b"a\nb\n"[..], window(1, 5), &|| true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Interrupted);
    }

    fn window(start: u64, limit: u64) -> Window {
        Window {
            start,
            limit,
            max_line_chars: 10,
            max_output_bytes: 1000,
            scan_limit: u64::MAX,
        }
    }

    #[test]
    fn numbers_lines_and_counts_them() {
        let r = render(&b"a\nb\r\nc"[..], window(1, 100), &|| false).unwrap();
        assert_eq!(r.text, "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!((r.total_lines, r.last_shown), (3, 3));
        let r = render(&b"a\nb\n"[..], window(2, 100), &|| false).unwrap();
        assert_eq!(r.text, "     2\tb\n");
        assert_eq!(r.total_lines, 2);
        assert_eq!(
            render(&b""[..], window(1, 5), &|| false)
                .unwrap()
                .total_lines,
            0
        );
        assert_eq!(r.hash, Some(read_state::hash(b"a\nb\n")));
        assert!(r.complete);
    }

    #[test]
    fn cuts_long_lines_and_caps_output() {
        let r = render(&b"0123456789abcdef\nshort\n"[..], window(1, 10), &|| false).unwrap();
        assert!(r
            .text
            .starts_with("     1\t0123456789 … [line cut: 16 bytes"));
        assert_eq!(r.cut_lines, 1);
        let many = "x\n".repeat(500);
        let mut w = window(1, 1000);
        w.max_output_bytes = 90;
        let r = render(many.as_bytes(), w, &|| false).unwrap();
        assert_eq!(r.last_shown, 10);
        assert_eq!(r.capped_at, Some(11));
        assert_eq!(r.total_lines, 500);
    }

    #[test]
    fn flags_invalid_utf8_but_not_a_cut_sequence() {
        let r = render(&b"ok\n\xff\xfe bad\n"[..], window(1, 10), &|| false).unwrap();
        assert!(r.invalid_utf8);
        assert!(r.text.contains('\u{fffd}'));
        let long = "€".repeat(100);
        let r = render(long.as_bytes(), window(1, 10), &|| false).unwrap();
        assert!(!r.invalid_utf8);
        assert_eq!(r.cut_lines, 1);
    }
}

#[cfg(test)]
mod prop {
    use super::*;
    use proptest::prelude::*;

    /// Hands out the data in reads of the given sizes, to hit every chunk
    /// boundary a real file system might produce.
    struct Trickle<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        turn: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.turn % self.sizes.len()].max(1);
            self.turn += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn naive(content: &[u8], start: u64, limit: u64) -> (String, u64, bool) {
        let mut pieces: Vec<&[u8]> = content.split(|&b| b == b'\n').collect();
        if content.is_empty() || content.ends_with(b"\n") {
            pieces.pop();
        }
        let mut text = String::new();
        let mut invalid = false;
        for (i, piece) in pieces.iter().enumerate() {
            let no = i as u64 + 1;
            if no >= start && no < start + limit {
                let piece = piece.strip_suffix(b"\r").unwrap_or(piece);
                invalid |= std::str::from_utf8(piece).is_err();
                text.push_str(&format!("{no:>6}\t{}\n", String::from_utf8_lossy(piece)));
            }
        }
        (text, pieces.len() as u64, invalid)
    }

    fn content() -> impl Strategy<Value = Vec<u8>> {
        let atoms: Vec<&'static [u8]> = vec![
            b"\n",
            b"\r",
            b"\r\n",
            b"x",
            b"yz",
            "é".as_bytes(),
            b"\xff",
            b"\t",
        ];
        proptest::collection::vec(proptest::sample::select(atoms), 0..200)
            .prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn matches_a_naive_split(
            data in content(),
            start in 1u64..40,
            limit in 1u64..60,
            sizes in proptest::collection::vec(1usize..17, 1..5),
        ) {
            let window = Window {
                start,
                limit,
                max_line_chars: 10_000,
                max_output_bytes: usize::MAX,
                scan_limit: u64::MAX,
            };
            let r = render(Trickle { data: &data, sizes, turn: 0 }, window, &|| false).unwrap();
            let (text, total, invalid) = naive(&data, start, limit);
            prop_assert_eq!(&r.text, &text);
            prop_assert_eq!(r.total_lines, total);
            prop_assert_eq!(r.invalid_utf8, invalid);
            prop_assert_eq!(r.hash, Some(read_state::hash(&data)));
            prop_assert_eq!(r.size, data.len() as u64);
        }
    }
}
