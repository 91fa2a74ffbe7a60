//! Deciding whether a line too long to hold matches, without holding it.
//!
//! ripgrep's searcher keeps a whole line in its buffer, so one 300 MB line
//! (a minified bundle, a data dump) would cost 300 MB or more. A line that
//! long is instead fed, a chunk at a time, through a lazy DFA built from
//! the same pattern with the same flags: its state after the last byte says
//! whether the line matches anywhere, which is all line-oriented grep asks.
//! Memory is the DFA's cache (bounded; it is cleared and refilled when
//! full), a short head of the line and a window around the first match,
//! which is what the output shows. Nothing is cut from what is searched.
//!
//! One pattern class cannot be decided this way: a Unicode word boundary
//! (`\b`, `\w` boundaries) next to a non-ASCII byte stops the lazy DFA.
//! Such a line is reported as not searched in full, never as "no match".

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::util::start;
use regex_automata::util::syntax;
use regex_automata::{Anchored, MatchKind};

use super::options::GrepInput;
use super::output::MAX_LINE_CHARS;

/// Bytes kept from the start of a long line: enough for the characters
/// shown ([`MAX_LINE_CHARS`], up to four bytes each).
const HEAD_BYTES: usize = MAX_LINE_CHARS * 4;

/// Bytes shown on each side of the first match's end when it lies past
/// the head.
const WINDOW_BYTES: usize = 400;

/// The pattern as a streaming automaton. Built once per search, when the
/// first long line is met.
#[derive(Debug)]
pub(crate) struct LineAutomaton {
    dfa: DFA,
}

impl LineAutomaton {
    /// `None` if the pattern cannot be built this way (the lazy DFA refuses
    /// some patterns a backtracking engine accepts); callers then report the
    /// long lines as not searched in full.
    pub(crate) fn new(input: &GrepInput) -> Option<LineAutomaton> {
        let syntax = syntax::Config::new()
            .case_insensitive(input.case_insensitive)
            .multi_line(true)
            .utf8(false);
        let config = DFA::config()
            .match_kind(MatchKind::LeftmostFirst)
            // A `\b` can be decided on ASCII text; the DFA stops (a "quit")
            // on the first non-ASCII byte instead of failing to build.
            .unicode_word_boundary(true);
        DFA::builder()
            .syntax(syntax)
            .configure(config)
            .build(&input.pattern)
            .ok()
            .map(|dfa| LineAutomaton { dfa })
    }

    /// Starts a line.
    pub(crate) fn line(&self) -> LongLine<'_> {
        let mut cache = self.dfa.create_cache();
        let begin = start::Config::new().anchored(Anchored::No);
        let state = match self.dfa.start_state(&mut cache, &begin) {
            Ok(sid) => Step::Running(sid),
            Err(_) => Step::Undecided,
        };
        LongLine {
            dfa: &self.dfa,
            cache,
            state,
            bytes: 0,
            chars: 0,
            head: Vec::new(),
            recent: Vec::new(),
            around: None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Running(LazyStateID),
    Matched,
    NoMatch,
    Undecided,
}

/// One long line being searched.
#[derive(Debug)]
pub(crate) struct LongLine<'a> {
    dfa: &'a DFA,
    cache: Cache,
    state: Step,
    bytes: u64,
    /// Characters so far (bytes that do not continue a UTF-8 sequence).
    chars: u64,
    head: Vec<u8>,
    /// The last bytes seen, for the window before the match (a ring kept
    /// between `WINDOW_BYTES` and twice that).
    recent: Vec<u8>,
    /// Window around the first match: the characters skipped before it,
    /// its bytes, and whether it is still filling.
    around: Option<(u64, Vec<u8>, bool)>,
}

/// What a finished long line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Match,
    NoMatch,
    /// The automaton could not decide (see the module docs).
    Undecided,
}

impl LongLine<'_> {
    /// Feeds the next bytes of the line (no newline among them).
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        let Step::Running(mut sid) = self.state else {
            self.count_and_keep(bytes);
            return;
        };
        // The hot loop: one table lookup per byte until a special state.
        let mut i = 0;
        while i < bytes.len() {
            match self.dfa.next_state(&mut self.cache, sid, bytes[i]) {
                Ok(next) if next.is_tagged() => {
                    if next.is_match() {
                        // Reported one byte late: the match ended before
                        // byte `i`.
                        self.count_and_keep(&bytes[..i]);
                        self.found_match();
                        self.count_and_keep(&bytes[i..]);
                        self.state = Step::Matched;
                        return;
                    }
                    if next.is_dead() || next.is_quit() {
                        self.state = if next.is_dead() {
                            Step::NoMatch
                        } else {
                            Step::Undecided
                        };
                        self.count_and_keep(bytes);
                        return;
                    }
                    sid = next;
                }
                Ok(next) => sid = next,
                Err(_) => {
                    self.state = Step::Undecided;
                    self.count_and_keep(bytes);
                    return;
                }
            }
            i += 1;
        }
        self.state = Step::Running(sid);
        self.count_and_keep(bytes);
    }

    /// Counts bytes and characters, keeps the recent window and fills the
    /// window after a match.
    fn count_and_keep(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        self.chars += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        match &mut self.around {
            Some((_, window, filling @ true)) => {
                let room = (2 * WINDOW_BYTES).saturating_sub(window.len());
                window.extend_from_slice(&bytes[..room.min(bytes.len())]);
                *filling = window.len() < 2 * WINDOW_BYTES;
            }
            Some(_) => {}
            None => {
                if bytes.len() >= WINDOW_BYTES {
                    self.recent.clear();
                    self.recent
                        .extend_from_slice(&bytes[bytes.len() - WINDOW_BYTES..]);
                } else {
                    self.recent.extend_from_slice(bytes);
                    if self.recent.len() > 2 * WINDOW_BYTES {
                        let drop = self.recent.len() - WINDOW_BYTES;
                        self.recent.drain(..drop);
                    }
                }
            }
        }
    }

    /// Starts the window around the first match, which ends here.
    fn found_match(&mut self) {
        let take = self.recent.len().min(WINDOW_BYTES);
        let window = self.recent[self.recent.len() - take..].to_vec();
        let start_chars = self.chars - window.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        self.recent = Vec::new();
        self.around = Some((start_chars, window, true));
    }

    /// Ends the line: whether it matched, and its text as shown.
    pub(crate) fn finish(mut self) -> (Verdict, String) {
        if let Step::Running(sid) = self.state {
            self.state = match self.dfa.next_eoi_state(&mut self.cache, sid) {
                Ok(next) if next.is_match() => {
                    self.found_match();
                    Step::Matched
                }
                Ok(next) if next.is_quit() => Step::Undecided,
                Ok(_) => Step::NoMatch,
                Err(_) => Step::Undecided,
            };
        }
        let verdict = match self.state {
            Step::Matched => Verdict::Match,
            Step::NoMatch => Verdict::NoMatch,
            Step::Running(_) | Step::Undecided => Verdict::Undecided,
        };
        (verdict, self.shown())
    }

    /// The head of the line and, when the match lies past it, a window
    /// around the match's end, with counts of what was left out: only what
    /// is shown is cut.
    fn shown(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let head: String = head.chars().take(MAX_LINE_CHARS).collect();
        let head_chars = head.chars().count() as u64;
        let mut text = head;
        let mut shown_to = head_chars;
        if let Some((start, window, _)) = &self.around {
            if *start + (window.len() as u64) > head_chars {
                // Begin the window at a character boundary.
                let skip = window.iter().take_while(|&&b| b & 0xC0 == 0x80).count();
                let window = &window[skip..];
                let from = (*start).max(head_chars);
                let gap = from - head_chars;
                let body = String::from_utf8_lossy(window);
                let drop = (from - *start) as usize;
                let body: String = body.chars().skip(drop).collect();
                if gap > 0 {
                    text.push_str(&format!(" [… {gap} characters …] "));
                }
                shown_to = from + body.chars().count() as u64;
                text.push_str(&body);
            }
        }
        let rest = self.chars.saturating_sub(shown_to);
        if rest > 0 {
            text.push_str(&format!(" [… {rest} more characters]"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(pattern: &str, ci: bool) -> GrepInput {
        serde_json::from_value(serde_json::json!({"pattern": pattern, "-i": ci})).unwrap()
    }

    fn decide(pattern: &str, line: &[u8], chunk: usize) -> Option<bool> {
        let automaton = LineAutomaton::new(&input(pattern, false)).unwrap();
        let mut long = automaton.line();
        for part in line.chunks(chunk.max(1)) {
            long.feed(part);
        }
        match long.finish().0 {
            Verdict::Match => Some(true),
            Verdict::NoMatch => Some(false),
            Verdict::Undecided => None,
        }
    }

    /// The streaming verdict agrees with the regex crate on the whole line,
    /// whatever the chunking.
    #[test]
    fn agrees_with_the_regex_crate() {
        let lines: &[&[u8]] = &[
            b"",
            b"needle",
            b"xxneedlexx",
            b"needlexx",
            b"xxneedle",
            b"foo bar baz",
            b"  indented",
            "caf\u{e9} na\u{ef}ve".as_bytes(),
            b"\xff\xfe invalid utf8 needle",
        ];
        let patterns = [
            "needle",
            "^needle",
            "needle$",
            "^xx",
            "x+n",
            "ba[rz]",
            "^$",
            "^ +i",
            "e.*e",
            "na.ve",
            "[0-9]",
            "(?i)NEEDLE",
        ];
        for pattern in patterns {
            let regex = regex::bytes::Regex::new(&format!("(?m){pattern}")).unwrap();
            for line in lines {
                for chunk in [1, 2, 5, 1000] {
                    assert_eq!(
                        decide(pattern, line, chunk),
                        Some(regex.is_match(line)),
                        "{pattern} on {:?} in chunks of {chunk}",
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
    }

    #[test]
    fn a_word_boundary_next_to_non_ascii_is_undecided_not_a_miss() {
        assert_eq!(decide(r"\bneedle\b", b"a needle here", 3), Some(true));
        assert_eq!(decide(r"\bneedle\b", "\u{e9} needle".as_bytes(), 3), None);
    }

    #[test]
    fn the_shown_text_has_the_head_and_the_match() {
        let automaton = LineAutomaton::new(&input("needle", false)).unwrap();
        let mut long = automaton.line();
        long.feed(b"start ");
        for _ in 0..100 {
            long.feed(&[b'x'; 1000]);
        }
        long.feed(b" the needle here ");
        long.feed(&[b'y'; 5000]);
        let bytes = 6 + 100_000 + 17 + 5000;
        let (verdict, text) = long.finish();
        assert_eq!(verdict, Verdict::Match);
        assert!(text.starts_with("start xxx"), "{text}");
        assert!(text.contains("characters …] xxx"), "{text}");
        assert!(text.contains("x the needle here yyy"), "{text}");
        assert!(text.ends_with("more characters]"), "{text}");
        assert!(
            text.len() < MAX_LINE_CHARS + 3 * WINDOW_BYTES,
            "{}",
            text.len()
        );
        // Every character is shown or counted: 2,000 of the head, the gap,
        // the window and the rest.
        let numbers: Vec<u64> = text
            .split("[… ")
            .skip(1)
            .map(|s| s.split(' ').next().unwrap().parse().unwrap())
            .collect();
        let window = text
            .split("…] ")
            .nth(1)
            .unwrap()
            .split(" [… ")
            .next()
            .unwrap();
        assert_eq!(
            2_000 + numbers.iter().sum::<u64>() + window.len() as u64,
            bytes
        );
    }
}
