//! Bounded capture of a command's merged output.
//!
//! Whatever a command prints, Baton keeps a fixed amount in memory: the
//! first half of the inline budget (the head, where commands print what
//! they are about to do) and the last half (the tail, where errors and
//! summaries are). Everything also streams to a [`LogFile`], so the middle
//! is not lost. Counting is done on bytes; the budget is in characters, so
//! the tail ring holds four bytes per character (the UTF-8 maximum).

use std::path::PathBuf;

use baton_engine::shell_details::{StreamTail, TailCollector};

use super::log_file::LogFile;

/// The inline budget and the log file a capture writes to.
#[derive(Clone, Debug)]
pub(crate) struct CaptureSpec {
    pub inline_chars: usize,
    pub log_path: PathBuf,
    pub log_max_bytes: u64,
    /// Open the log file at once (background tasks) rather than on overflow.
    pub eager_log: bool,
}

pub(crate) struct Capture {
    head: Vec<u8>,
    head_chars: usize,
    head_limit: usize,
    head_full: bool,
    tail: Ring,
    tail_limit: usize,
    inline_chars: usize,
    bytes: u64,
    /// Newlines seen.
    lines: u64,
    /// Whether the last byte seen was a newline (or nothing was seen): a
    /// last line without one still counts as a line, so a single 2 GB
    /// line is "1 line", not "0 lines".
    ends_in_newline: bool,
    log: LogFile,
    /// The end of each stream apart, for the host (see
    /// [`baton_engine::shell_details`]).
    stdout: TailCollector,
    stderr: TailCollector,
}

/// Which pipe bytes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// What the model sees of the output.
pub(crate) struct Rendered {
    pub text: String,
    pub omitted_bytes: u64,
}

impl Capture {
    pub(crate) fn new(spec: CaptureSpec) -> Self {
        let head_limit = spec.inline_chars / 2;
        let tail_limit = spec.inline_chars - head_limit;
        Capture {
            head: Vec::new(),
            head_chars: 0,
            head_limit,
            head_full: head_limit == 0,
            tail: Ring::new(tail_limit.saturating_mul(4)),
            tail_limit,
            inline_chars: spec.inline_chars,
            bytes: 0,
            lines: 0,
            ends_in_newline: true,
            log: LogFile::new(spec.log_path, spec.log_max_bytes, spec.eager_log),
            stdout: TailCollector::default(),
            stderr: TailCollector::default(),
        }
    }

    /// Bytes read from one of the two pipes: into the merged text the
    /// model reads, and into that stream's own tail.
    pub(crate) fn push_from(&mut self, stream: Stream, data: &[u8]) {
        match stream {
            Stream::Stdout => self.stdout.push(data),
            Stream::Stderr => self.stderr.push(data),
        }
        self.push(data);
    }

    /// The tails of stdout and stderr.
    pub(crate) fn streams(&self) -> (StreamTail, StreamTail) {
        (self.stdout.finish(), self.stderr.finish())
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.lines += count_newlines(data) as u64;
        if let Some(last) = data.last() {
            self.ends_in_newline = *last == b'\n';
        }
        self.log.write(data);
        // Any byte count below the character budget fits inline, whatever
        // the encoding; past it, the full text may be needed later.
        if self.bytes > self.inline_chars as u64 {
            self.log.open();
        }
        let rest = if self.head_full {
            data
        } else {
            let used = self.push_head(data);
            &data[used..]
        };
        self.tail.push(rest);
    }

    /// Takes bytes into the head up to its character limit; returns how many.
    fn push_head(&mut self, data: &[u8]) -> usize {
        for (i, byte) in data.iter().enumerate() {
            let starts_char = byte & 0xC0 != 0x80;
            if starts_char {
                if self.head_chars == self.head_limit {
                    self.head_full = true;
                    self.head.extend_from_slice(&data[..i]);
                    return i;
                }
                self.head_chars += 1;
            }
        }
        self.head.extend_from_slice(data);
        data.len()
    }

    pub(crate) fn total_bytes(&self) -> u64 {
        self.bytes
    }

    /// Lines as an editor counts them: newlines, plus an unterminated
    /// last line.
    pub(crate) fn total_lines(&self) -> u64 {
        self.lines + u64::from(!self.ends_in_newline)
    }

    /// The log file, when it exists (output outgrew the inline budget, or
    /// the capture was created eager).
    pub(crate) fn log_path(&self) -> Option<&std::path::Path> {
        self.log.is_open().then(|| self.log.path())
    }

    /// Creates the output file now (a foreground command moved to the
    /// background), with everything printed so far.
    pub(crate) fn open_log(&mut self) {
        self.log.open();
    }

    /// Where the output file is or would be, whether or not it exists.
    pub(crate) fn log_target(&self) -> &std::path::Path {
        self.log.path()
    }

    pub(crate) fn log_problem(&self) -> Option<String> {
        self.log.problem()
    }

    /// The last `n` lines, for progress reports.
    pub(crate) fn last_lines(&self, n: usize) -> Vec<String> {
        let bytes = if self.tail.len() > 0 {
            self.tail.last(4096)
        } else {
            let start = self.head.len().saturating_sub(4096);
            self.head[start..].to_vec()
        };
        let text = decode_from_boundary(&bytes);
        let mut lines: Vec<String> = text
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(|l| l.chars().take(200).collect())
            .collect();
        lines.reverse();
        lines
    }

    pub(crate) fn render(&self) -> Rendered {
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail_all = decode_from_boundary(&self.tail.contents());
        let tail_chars = tail_all.chars().count();
        let tail = match tail_chars.checked_sub(self.tail_limit) {
            Some(skip) if skip > 0 => {
                let cut = tail_all
                    .char_indices()
                    .nth(skip)
                    .map_or(tail_all.len(), |(i, _)| i);
                tail_all[cut..].to_string()
            }
            _ => tail_all,
        };
        let shown_bytes = (self.head.len() + tail.len()) as u64;
        let omitted_bytes = self.bytes.saturating_sub(shown_bytes);
        let shown_lines =
            (count_newlines(head.as_bytes()) + count_newlines(tail.as_bytes())) as u64;
        let omitted_lines = self.lines.saturating_sub(shown_lines);
        let text = if omitted_bytes == 0 {
            head + &tail
        } else {
            // No newline in the omitted middle: it is the inside of one
            // line (one huge line is common: minified files, base64).
            let extent = match omitted_lines {
                0 => "inside one line".to_string(),
                1 => "1 line break".to_string(),
                n => format!("{n} line breaks"),
            };
            let marker = format!(
                "\n\n[... {} omitted here ({extent}) ...]\n\n",
                human_bytes(omitted_bytes),
            );
            head + &marker + &tail
        };
        Rendered {
            text,
            omitted_bytes,
        }
    }
}

/// Counts `\n` eight bytes at a time: this runs over every byte a command
/// prints (gigabytes for a runaway one), and a byte loop is slow in debug
/// builds.
pub(crate) fn count_newlines(data: &[u8]) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut words = data.chunks_exact(8);
    let mut count = 0usize;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        // Bytes equal to '\n' become zero; then set the high bit of every
        // non-zero byte without carries between bytes, and count the rest.
        let x = u64::from_ne_bytes(bytes) ^ NEWLINES;
        let nonzero = ((x & LOW7) + LOW7) | x;
        count += (!(nonzero | LOW7)).count_ones() as usize;
    }
    count + words.remainder().iter().filter(|b| **b == b'\n').count()
}

/// Decodes bytes that may start in the middle of a character.
fn decode_from_boundary(bytes: &[u8]) -> String {
    let start = bytes
        .iter()
        .take(4)
        .position(|b| b & 0xC0 != 0x80)
        .unwrap_or(0);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: &[&str] = &["bytes", "KB", "MB", "GB", "TB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The last `cap` bytes written, in a fixed buffer.
struct Ring {
    buf: Vec<u8>,
    cap: usize,
    /// Index of the oldest byte once the buffer is full.
    start: usize,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Ring {
            buf: Vec::new(),
            cap,
            start: 0,
        }
    }

    fn len(&self) -> usize {
        self.buf.len()
    }

    fn push(&mut self, mut data: &[u8]) {
        if self.cap == 0 || data.is_empty() {
            return;
        }
        if data.len() >= self.cap {
            self.buf.clear();
            self.buf.extend_from_slice(&data[data.len() - self.cap..]);
            self.start = 0;
            return;
        }
        if self.buf.len() < self.cap {
            let take = (self.cap - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        while !data.is_empty() {
            let n = (self.cap - self.start).min(data.len());
            self.buf[self.start..self.start + n].copy_from_slice(&data[..n]);
            self.start = (self.start + n) % self.cap;
            data = &data[n..];
        }
    }

    fn contents(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len());
        out.extend_from_slice(&self.buf[self.start..]);
        out.extend_from_slice(&self.buf[..self.start]);
        out
    }

    fn last(&self, n: usize) -> Vec<u8> {
        let all = self.contents();
        all[all.len().saturating_sub(n)..].to_vec()
    }
}

#[cfg(test)]
mod tests;
