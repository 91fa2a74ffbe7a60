//! Turning a stream of output into a bounded stream of events.
//!
//! Each complete stdout line is an event, but a model cannot read a flood
//! and a host cannot hold one: lines that arrive within [`WINDOW`] of the
//! first are sent together, at most [`MAX_LINES`] of them (each cut at
//! [`MAX_LINE_BYTES`]); the rest of the window is counted and said as "N
//! events suppressed". A window with suppressed lines marks a flood; a
//! flood that lasts [`FLOOD_LIMIT`] stops the monitor. Memory is bounded
//! by one window's lines and one partial line, whatever the rate.

use std::time::{Duration, Instant};

/// How long lines are gathered into one event.
pub(crate) const WINDOW: Duration = Duration::from_millis(200);
/// Most lines one event carries.
pub(crate) const MAX_LINES: usize = 20;
/// Longest line kept (longer ones are cut, with a mark).
pub(crate) const MAX_LINE_BYTES: usize = 2048;
/// A flood that lasts this long stops the monitor.
pub(crate) const FLOOD_LIMIT: Duration = Duration::from_secs(10);

/// One event: the lines, and how many were left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Event {
    pub lines: Vec<String>,
    pub suppressed: u64,
}

impl Event {
    pub(crate) fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.suppressed > 0 {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{} events suppressed", self.suppressed));
        }
        text
    }
}

/// Splits bytes into lines and gathers them into events.
#[derive(Debug, Default)]
pub(crate) struct Batcher {
    partial: Vec<u8>,
    /// The partial line was cut (it is longer than [`MAX_LINE_BYTES`]).
    partial_cut: bool,
    current: Event,
    /// When the current window closes (set by its first line).
    due: Option<Instant>,
    flood_since: Option<Instant>,
    /// Lines seen in all.
    pub total_lines: u64,
}

impl Batcher {
    /// Takes `bytes` of output at `now`.
    pub(crate) fn push(&mut self, mut bytes: &[u8], now: Instant) {
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            self.keep_partial(&bytes[..i]);
            let line = std::mem::take(&mut self.partial);
            let cut = std::mem::take(&mut self.partial_cut);
            self.line(line, cut, now);
            bytes = &bytes[i + 1..];
        }
        self.keep_partial(bytes);
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.partial_cut = true;
        }
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn line(&mut self, line: Vec<u8>, cut: bool, now: Instant) {
        self.total_lines += 1;
        self.due.get_or_insert(now + WINDOW);
        if self.current.lines.len() >= MAX_LINES {
            self.current.suppressed += 1;
            return;
        }
        let mut text = String::from_utf8_lossy(&line)
            .trim_end_matches('\r')
            .to_string();
        if cut {
            text.push('…');
        }
        self.current.lines.push(text);
    }

    /// When the current window closes, if one is open.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Closes the window: its event (if it had lines), and whether the
    /// flood has lasted too long.
    pub(crate) fn flush(&mut self, now: Instant) -> (Option<Event>, bool) {
        self.due = None;
        let event = std::mem::take(&mut self.current);
        if event.lines.is_empty() && event.suppressed == 0 {
            return (None, false);
        }
        let flooding = if event.suppressed > 0 {
            let since = *self.flood_since.get_or_insert(now);
            now.duration_since(since) >= FLOOD_LIMIT
        } else {
            self.flood_since = None;
            false
        };
        (Some(event), flooding)
    }

    /// At the end of output: the last line even without its newline.
    pub(crate) fn finish(&mut self, now: Instant) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            let cut = std::mem::take(&mut self.partial_cut);
            self.line(line, cut, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_one_window_make_one_event() {
        let mut b = Batcher::default();
        let t = Instant::now();
        b.push(b"a\nb", t);
        b.push(b"c\nd\n", t);
        assert_eq!(b.due(), Some(t + WINDOW));
        let (event, flood) = b.flush(t + WINDOW);
        assert_eq!(event.unwrap().lines, ["a", "bc", "d"]);
        assert!(!flood);
        assert_eq!(b.flush(t + WINDOW).0, None);
    }

    #[test]
    fn a_flood_is_folded_then_stopped() {
        let mut b = Batcher::default();
        let t = Instant::now();
        let many = "x\n".repeat(1000);
        b.push(many.as_bytes(), t);
        let (event, flood) = b.flush(t);
        let event = event.unwrap();
        assert_eq!(event.lines.len(), MAX_LINES);
        assert_eq!(event.suppressed, 1000 - MAX_LINES as u64);
        assert!(event.text().ends_with("980 events suppressed"));
        assert!(!flood);
        b.push(many.as_bytes(), t + FLOOD_LIMIT);
        assert!(b.flush(t + FLOOD_LIMIT).1);
    }

    #[test]
    fn long_lines_are_cut_and_memory_stays_bounded() {
        let mut b = Batcher::default();
        let t = Instant::now();
        b.push(&vec![b'y'; 10 * MAX_LINE_BYTES], t);
        assert!(b.partial.len() <= MAX_LINE_BYTES);
        b.push(b"\n", t);
        let event = b.flush(t).0.unwrap();
        assert!(event.lines[0].ends_with('…'));
        assert_eq!(event.lines[0].chars().count(), MAX_LINE_BYTES + 1);
    }
}
