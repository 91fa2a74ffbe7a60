//! Output a session produced since the model last looked: its beginning
//! and its end, within a fixed budget, with what fell in between counted.
//!
//! A session may print far more than any reply can carry (a build log, a
//! `yes`), and the model may not look for minutes. Keeping everything would
//! let one session eat the host's memory; keeping only the tail would lose
//! the first error, which is usually the one that matters. So the buffer
//! keeps the first half of its budget as it came and a rolling window of
//! the latest bytes, and counts the bytes dropped between them.

use std::collections::VecDeque;

/// Bytes kept per session between two reads (head + tail).
pub(crate) const BUFFER_BYTES: usize = 1024 * 1024;

/// New output, bounded.
#[derive(Debug)]
pub(crate) struct HeadTail {
    limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
    total: u64,
}

/// What one read takes out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Taken {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes dropped between `head` and `tail`.
    pub omitted: u64,
}

impl Taken {
    /// The text the model reads, with a marker where bytes were dropped.
    pub(crate) fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            text.push_str(&format!("\n[… {} bytes omitted …]\n", self.omitted));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }

    /// Bytes kept (the head and the tail), for the tests' checks.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether nothing was kept, for the tests' checks.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The end of what was taken, bounded for the host; bytes dropped in
    /// the middle count as truncation.
    pub(crate) fn stream_tail(&self) -> baton_engine::shell_details::StreamTail {
        let mut tail = baton_engine::shell_details::TailCollector::default();
        tail.push(&self.head);
        tail.push(&self.tail);
        let mut out = tail.finish();
        out.total_bytes += self.omitted;
        out.truncated |= self.omitted > 0;
        out
    }
}

impl HeadTail {
    /// A buffer of `limit` bytes (at least 2).
    pub(crate) fn new(limit: usize) -> HeadTail {
        HeadTail {
            limit: limit.max(2),
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
            total: 0,
        }
    }

    /// Bytes ever pushed (read or not).
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_room = (self.limit / 2).saturating_sub(self.head.len());
        // The head fills only while nothing has gone to the tail yet, so
        // the two halves stay in order.
        if self.tail.is_empty() && self.omitted == 0 && head_room > 0 {
            let n = head_room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        let tail_limit = self.limit - self.limit / 2;
        if bytes.len() >= tail_limit {
            // Only the last `tail_limit` bytes of this chunk can survive.
            self.omitted += (self.tail.len() + bytes.len() - tail_limit) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_limit..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(tail_limit);
        if overflow > 0 {
            self.tail.drain(..overflow);
            self.omitted += overflow as u64;
        }
        self.tail.extend(bytes);
    }

    /// Takes everything held, leaving the buffer empty (the total stays).
    pub(crate) fn take(&mut self) -> Taken {
        let taken = Taken {
            head: std::mem::take(&mut self.head),
            tail: std::mem::take(&mut self.tail).into(),
            omitted: std::mem::take(&mut self.omitted),
        };
        // Give back what a flood made the buffer grow to.
        self.head.shrink_to(4096);
        self.tail.shrink_to(4096);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_tail_counts_what_the_buffer_dropped() {
        let mut b = HeadTail::new(8);
        b.push(b"0123456789abcdef");
        let taken = b.take();
        let tail = taken.stream_tail();
        assert_eq!(tail.total_bytes, 16);
        assert!(tail.truncated);
        let small = Taken {
            head: b"ok\n".to_vec(),
            ..Default::default()
        };
        let tail = small.stream_tail();
        assert_eq!((tail.text.as_str(), tail.truncated), ("ok\n", false));
    }

    #[test]
    fn small_output_is_kept_whole_and_in_order() {
        let mut b = HeadTail::new(16);
        b.push(b"abc");
        b.push(b"def");
        let t = b.take();
        assert_eq!(t.text(), "abcdef");
        assert!(b.take().is_empty());
        assert_eq!(b.total(), 6);
    }

    #[test]
    fn flood_keeps_head_and_tail_and_counts_the_middle() {
        let mut b = HeadTail::new(10);
        for chunk in [&b"0123"[..], b"4567", b"89ab", b"cdef"] {
            b.push(chunk);
        }
        let t = b.take();
        assert_eq!(t.head, b"01234");
        assert_eq!(t.tail, b"bcdef");
        assert_eq!(t.omitted, 6);
        assert_eq!(t.len() as u64 + t.omitted, b.total());
    }

    #[test]
    fn one_huge_chunk_is_bounded() {
        let mut b = HeadTail::new(BUFFER_BYTES);
        let big = vec![b'x'; 5 * BUFFER_BYTES];
        b.push(&big);
        b.push(b"END");
        let t = b.take();
        assert!(t.len() <= BUFFER_BYTES);
        assert!(t.tail.ends_with(b"END"));
        assert_eq!(t.len() as u64 + t.omitted, 5 * BUFFER_BYTES as u64 + 3);
    }
}
