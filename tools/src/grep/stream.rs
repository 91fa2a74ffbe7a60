//! Searching a file that has a line too long for ripgrep's searcher.
//!
//! The searcher holds each line whole, so a file is first searched with
//! lines capped (see [`super::long_lines`]); when a line passes the cap,
//! that search is dropped and the file is searched again here, line by
//! line. Lines up to the cap are held and matched with the same matcher as
//! the searcher uses; a longer line is streamed through
//! [`LineAutomaton`], which decides it without holding it. Context lines,
//! group separators, binary files and the output limit behave as in the
//! searcher, so the model sees the same layout either way.

use std::collections::VecDeque;
use std::io::{self, Read};

use baton_engine::CancelScope;
use grep_matcher::Matcher;
use grep_regex::RegexMatcher;

use super::output::shown_text;
use super::whole_line::{LineAutomaton, LongLine, Verdict};

/// Where a search's findings go, in order. Each returns `false` to stop.
pub(crate) trait Emit {
    /// Whether lines' text is wanted (content mode) or only their count.
    fn wants_text(&self) -> bool;
    fn matched(&mut self, number: u64, text: String) -> bool;
    fn context(&mut self, number: u64, text: String) -> bool;
    fn context_break(&mut self) -> bool;
}

/// What the caller reports beyond the emitted lines.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// A NUL byte was met: the file is binary and was not searched further.
    pub binary: bool,
    /// Long lines the automaton could not decide: first few, and a count.
    pub undecided: Vec<u64>,
    pub undecided_count: u64,
}

/// Undecided line numbers named in the note.
const NAMED: usize = 5;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

#[derive(Debug)]
pub(crate) struct Options<'a> {
    pub matcher: &'a RegexMatcher,
    /// `None`: the pattern has no streaming form; long lines are undecided.
    pub automaton: Option<&'a LineAutomaton>,
    /// Lines up to this many bytes are held and matched whole.
    pub held: usize,
    pub before: usize,
    pub after: usize,
    pub cancel: &'a CancelScope,
}

/// The line being read.
enum Current<'a> {
    Held(Vec<u8>),
    /// Boxed: the automaton's state is large and most lines are held.
    Long(Box<LongLine<'a>>),
    /// Longer than held, with no automaton: only counted.
    Unsearchable(u64),
}

struct State<'a, 'e> {
    options: &'a Options<'a>,
    emit: &'e mut dyn Emit,
    current: Current<'a>,
    number: u64,
    /// Non-matching lines kept for before-context.
    ring: VecDeque<(u64, String)>,
    after_left: usize,
    last_emitted: Option<u64>,
    outcome: Outcome,
}

/// Searches `file` line by line; stops early on cancellation or when the
/// emitter says so.
pub(crate) fn search(
    file: impl Read,
    options: &Options<'_>,
    emit: &mut dyn Emit,
) -> io::Result<Outcome> {
    let mut file = file;
    let mut state = State {
        options,
        emit,
        current: Current::Held(Vec::new()),
        number: 1,
        ring: VecDeque::new(),
        after_left: 0,
        last_emitted: None,
        outcome: Outcome::default(),
    };
    let mut buf = vec![0u8; CHUNK];
    let mut open = false;
    'read: loop {
        if options.cancel.is_cancelled() {
            return Ok(state.outcome);
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = &buf[..n];
        // rg's rule for walked files: a NUL byte means binary; nothing from
        // the chunk that holds it on is searched.
        if memchr::memchr(0, rest).is_some() {
            state.outcome.binary = true;
            return Ok(state.outcome);
        }
        while !rest.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(at) => {
                    state.take(&rest[..at]);
                    open = false;
                    if !state.end_line() {
                        break 'read;
                    }
                    rest = &rest[at + 1..];
                }
                None => {
                    state.take(rest);
                    open = true;
                    rest = &[];
                }
            }
        }
    }
    if open {
        state.end_line();
    }
    Ok(state.outcome)
}

impl<'a> State<'a, '_> {
    fn take(&mut self, bytes: &[u8]) {
        match &mut self.current {
            Current::Long(long) => long.feed(bytes),
            Current::Unsearchable(n) => *n += bytes.len() as u64,
            Current::Held(line) if line.len() + bytes.len() <= self.options.held => {
                line.extend_from_slice(bytes)
            }
            Current::Held(line) => {
                let held = std::mem::take(line);
                self.current = match self.options.automaton {
                    Some(automaton) => {
                        let mut long = Box::new(automaton.line());
                        long.feed(&held);
                        long.feed(bytes);
                        Current::Long(long)
                    }
                    None => Current::Unsearchable((held.len() + bytes.len()) as u64),
                };
            }
        }
    }

    /// Decides the line just read; `false` when the emitter stops.
    fn end_line(&mut self) -> bool {
        let current = std::mem::replace(&mut self.current, Current::Held(Vec::new()));
        let number = self.number;
        self.number += 1;
        let (matched, text) = match current {
            Current::Held(line) => {
                let matched = self.options.matcher.is_match(&line).unwrap_or(false);
                let text = self.wanted(matched).then(|| shown_text(&line));
                (matched, text)
            }
            Current::Long(long) => {
                let (verdict, text) = long.finish();
                if matches!(verdict, Verdict::Undecided) {
                    self.undecided(number);
                }
                (matches!(verdict, Verdict::Match), Some(text))
            }
            Current::Unsearchable(bytes) => {
                self.undecided(number);
                (false, Some(format!("[a line of {bytes} bytes, not shown]")))
            }
        };
        let text = text.unwrap_or_default();
        if matched {
            return self.matched(number, text);
        }
        if self.after_left > 0 {
            self.after_left -= 1;
            self.last_emitted = Some(number);
            return self.emit.context(number, text);
        }
        if self.options.before > 0 && self.emit.wants_text() {
            if self.ring.len() == self.options.before {
                self.ring.pop_front();
            }
            self.ring.push_back((number, text));
        }
        true
    }

    /// Whether this line's text will be needed.
    fn wanted(&self, matched: bool) -> bool {
        self.emit.wants_text() && (matched || self.after_left > 0 || self.options.before > 0)
    }

    fn undecided(&mut self, number: u64) {
        self.outcome.undecided_count += 1;
        if self.outcome.undecided.len() < NAMED {
            self.outcome.undecided.push(number);
        }
    }

    fn matched(&mut self, number: u64, text: String) -> bool {
        let with_context = self.options.before + self.options.after > 0;
        let first = self.ring.front().map_or(number, |(n, _)| *n);
        if with_context
            && self.last_emitted.is_some_and(|last| first > last + 1)
            && !self.emit.context_break()
        {
            return false;
        }
        while let Some((n, line)) = self.ring.pop_front() {
            if !self.emit.context(n, line) {
                return false;
            }
        }
        self.last_emitted = Some(number);
        self.after_left = self.options.after;
        self.emit.matched(number, text)
    }
}
