//! Bounding the memory one line can take in ripgrep's searcher.
//!
//! ripgrep's searcher holds a whole line in its buffer, so a single 300 MB
//! line (a minified bundle, a data dump) costs 300 MB or more — several
//! times that while the buffer grows. This reader passes each line's first
//! [`MAX_SEARCHED_LINE`] bytes on. In line-by-line searches it stops at the
//! first longer line ([`LineCap::stopping`]), and the file is searched
//! again by [`super::stream`], which decides such lines whole without
//! holding them. Multiline searches hold the file in one buffer and cannot
//! stream: there the rest of a long line is dropped up to the newline (line
//! numbers stay right) and the output says which lines were cut.

use std::io::{self, Read};

/// Bytes of one line that are searched.
pub(crate) const MAX_SEARCHED_LINE: usize = 1 << 20;

/// A reader that cuts lines longer than `max` bytes.
#[derive(Debug)]
pub(crate) struct LineCap<R> {
    inner: R,
    max: usize,
    /// Bytes passed on since the last newline.
    column: usize,
    /// Dropping the rest of a line that was cut.
    skipping: bool,
    /// Lines cut so far (1-based numbers of the first few, and a count).
    line: u64,
    pub cut: Vec<u64>,
    pub cut_count: u64,
    /// Stop with an error at the first long line instead of cutting it.
    stop: bool,
    /// A long line was met in stopping mode.
    pub met_long_line: bool,
}

/// Line numbers of cut lines kept for the note.
const KEPT_NUMBERS: usize = 5;

impl<R: Read> LineCap<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineCap {
            inner,
            max: max.max(1),
            column: 0,
            skipping: false,
            line: 1,
            cut: Vec::new(),
            cut_count: 0,
            stop: false,
            met_long_line: false,
        }
    }

    /// A reader that fails at the first line longer than `max` bytes (and
    /// sets [`Self::met_long_line`]), passing everything before it on.
    pub(crate) fn stopping(inner: R, max: usize) -> Self {
        LineCap {
            stop: true,
            ..LineCap::new(inner, max)
        }
    }

    /// Compacts `buf[..n]` in place; returns the bytes kept.
    fn filter(&mut self, buf: &mut [u8], n: usize) -> usize {
        let mut read = 0;
        let mut kept = 0;
        while read < n {
            if self.skipping {
                match memchr::memchr(b'\n', &buf[read..n]) {
                    Some(at) => {
                        read += at;
                        self.skipping = false;
                    }
                    None => return kept,
                }
                continue;
            }
            // Copy up to the next newline or the cut, whichever is first.
            let room = self.max - self.column;
            let window = &buf[read..n.min(read + room + 1)];
            match memchr::memchr(b'\n', window) {
                Some(at) if at <= room => {
                    buf.copy_within(read..read + at + 1, kept);
                    kept += at + 1;
                    read += at + 1;
                    self.column = 0;
                    self.line += 1;
                }
                _ => {
                    let take = room.min(n - read);
                    buf.copy_within(read..read + take, kept);
                    kept += take;
                    read += take;
                    self.column += take;
                    if self.column == self.max && read < n && buf[read] != b'\n' {
                        if self.stop {
                            self.met_long_line = true;
                            return kept;
                        }
                        self.skipping = true;
                        self.cut_count += 1;
                        if self.cut.len() < KEPT_NUMBERS {
                            self.cut.push(self.line);
                        }
                    }
                }
            }
        }
        kept
    }
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.met_long_line {
                return Err(io::Error::other("a line is longer than the searcher holds"));
            }
            let n = self.inner.read(buf)?;
            if n == 0 {
                return Ok(0);
            }
            let kept = self.filter(buf, n);
            if self.met_long_line && kept == 0 {
                continue;
            }
            // Zero means end of file to the caller: read on while a long
            // line's tail is being dropped.
            if kept > 0 {
                return Ok(kept);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(input: &[u8], max: usize, chunk: usize) -> (Vec<u8>, Vec<u64>, u64) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = LineCap::new(Chunks(input, chunk), max);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        (out, reader.cut, reader.cut_count)
    }

    /// The obvious definition, to compare against.
    fn naive(input: &[u8], max: usize) -> (Vec<u8>, Vec<u64>, u64) {
        let mut out = Vec::new();
        let mut cut = Vec::new();
        let mut count = 0;
        for (i, line) in input.split_inclusive(|b| *b == b'\n').enumerate() {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if body.len() > max {
                out.extend_from_slice(&body[..max]);
                count += 1;
                if cut.len() < KEPT_NUMBERS {
                    cut.push(i as u64 + 1);
                }
            } else {
                out.extend_from_slice(body);
            }
            if line.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
        (out, cut, count)
    }

    #[test]
    fn cuts_long_lines_and_keeps_every_newline() {
        let cases: &[&[u8]] = &[
            b"",
            b"short\n",
            b"exactly5\n12345\n123456\n",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"\n\n\nlonglonglonglong\nx\nlonglonglonglonglong",
            b"12345\n",
            b"123456",
        ];
        for input in cases {
            for max in [1, 3, 5, 6, 100] {
                for chunk in [1, 2, 3, 7, 4096] {
                    assert_eq!(
                        cap(input, max, chunk),
                        naive(input, max),
                        "{:?} max {max} chunk {chunk}",
                        String::from_utf8_lossy(input)
                    );
                }
            }
        }
    }
}
