//! What a shell command did, as facts for the host: its exit code, the end
//! of its stdout and of its stderr (apart), and whether it timed out or was
//! interrupted. A harness that grades or retries commands needs these
//! without parsing the model's text, which interleaves both streams and
//! adds Baton's own notes. The model-facing block is built separately and
//! does not change.
//!
//! Each stream keeps only its last [`STREAM_TAIL_BYTES`]: a command may
//! print gigabytes, and the host's line must stay small. The end is kept
//! rather than the start because that is where exit reasons and summaries
//! are; the full output is in the model's block or the spill file.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Bytes kept of each stream.
pub const STREAM_TAIL_BYTES: usize = 32 * 1024;

/// The shell facts of one call. Fields a tool cannot know stay `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShellDetails {
    /// The command's exit status; `None` when it did not exit by itself
    /// (killed by a signal, timed out, interrupted, still running).
    pub exit_code: Option<i32>,
    /// The end of what the command wrote to stdout, when the tool kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<StreamTail>,
    /// `None` when the tool cannot tell stderr apart (a terminal, or a
    /// tool that merges both streams): then `stdout` holds both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<StreamTail>,
    /// The command's own time limit ran out and it was stopped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The call was cancelled (interrupt, host cancel, failing sibling)
    /// while the command ran.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// The end of one output stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamTail {
    /// The last bytes, as lossy UTF-8 (a cut inside a character at the
    /// start is dropped, not shown as a replacement character).
    pub text: String,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// True when `text` is not the whole stream.
    pub truncated: bool,
}

impl StreamTail {
    /// The tail of `bytes` (already complete), bounded as a collector
    /// would bound it.
    pub fn of(bytes: &[u8]) -> StreamTail {
        let mut tail = TailCollector::default();
        tail.push(bytes);
        tail.finish()
    }
}

/// Collects a stream as it arrives, keeping its last
/// [`STREAM_TAIL_BYTES`] and counting the rest.
#[derive(Debug)]
pub struct TailCollector {
    kept: VecDeque<u8>,
    limit: usize,
    total: u64,
}

impl Default for TailCollector {
    fn default() -> Self {
        TailCollector::with_limit(STREAM_TAIL_BYTES)
    }
}

impl TailCollector {
    /// A collector keeping the last `limit` bytes.
    pub fn with_limit(limit: usize) -> TailCollector {
        TailCollector {
            // Grows with the stream: most commands print little.
            kept: VecDeque::new(),
            limit,
            total: 0,
        }
    }

    /// Takes in the next bytes of the stream.
    pub fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        // Only the part that can survive is copied: a 1 GB write costs one
        // slice, not a gigabyte of pushes and pops.
        let data = &data[data.len().saturating_sub(self.limit)..];
        let overflow = (self.kept.len() + data.len()).saturating_sub(self.limit);
        self.kept.drain(..overflow.min(self.kept.len()));
        self.kept.extend(data);
    }

    /// Bytes seen in all, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// The tail kept so far, as text, and whether anything was cut.
    pub fn finish(&self) -> StreamTail {
        let (a, b) = self.kept.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        let truncated = self.total > bytes.len() as u64;
        // A cut may land inside a character: skip its continuation bytes.
        let start = if truncated {
            bytes
                .iter()
                .take(3)
                .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
                .count()
        } else {
            0
        };
        StreamTail {
            text: String::from_utf8_lossy(&bytes[start..]).into_owned(),
            total_bytes: self.total,
            truncated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_stream_is_kept_whole() {
        let tail = StreamTail::of(b"hello\n");
        assert_eq!(tail.text, "hello\n");
        assert_eq!(tail.total_bytes, 6);
        assert!(!tail.truncated);
    }

    #[test]
    fn a_large_stream_keeps_its_last_bytes_across_pushes() {
        let mut c = TailCollector::with_limit(10);
        c.push(b"0123456789abc");
        c.push(b"de");
        c.push(b"");
        let tail = c.finish();
        assert_eq!(tail.text, "56789abcde");
        assert_eq!(tail.total_bytes, 15);
        assert!(tail.truncated);
    }

    #[test]
    fn a_cut_inside_a_character_drops_the_fragment() {
        let mut c = TailCollector::with_limit(4);
        // "é" is two bytes; the limit cuts after its first byte.
        c.push("xxé".as_bytes());
        c.push(b"abc");
        let tail = c.finish();
        assert_eq!(tail.text, "abc");
        assert!(tail.truncated);
    }
}
