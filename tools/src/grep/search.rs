//! Walking the tree and searching each file, the way `rg` does.
//!
//! The walk is sequential and sorted by file name so the same tree always
//! gives the same output (a stable result is easier for the model to compare
//! across calls, and keeps prompt caches valid). Work stops as soon as the
//! output limit is passed: a search that matches everything costs no more
//! than the lines that will be shown.
//!
//! The walk (ripgrep's `ignore`) finds files by name; it does not decide what
//! is read. Every file is opened relative to a handle on the judged search
//! root, with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` ([`Dir::open_file_beneath`]):
//! if a directory on the way was swapped for a link after the walk listed
//! it, the open fails and the file is counted as unreadable, so a search
//! never reads through a link it did not judge. (The walk itself may still
//! list a swapped-in directory's names; none of them is read or shown
//! unless the same name is a real file below the root.)

use std::fs::File;
use std::io::{self, Seek as _};
use std::path::Path;

use baton_engine::CancelScope;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::long_lines::{LineCap, MAX_SEARCHED_LINE};
use super::options::{Compiled, GrepInput, OutputMode};
use super::output::{content_line, laid_out};
use super::stream;
use super::whole_line::LineAutomaton;
use crate::files::open::Dir;

/// The judged search root, opened without following a link.
#[derive(Debug)]
pub(crate) enum Root {
    /// A single file, searched whole.
    File(File),
    Dir(Dir),
}

/// What a search found, bounded by the limit.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// `content` mode: output lines, ready to print.
    pub lines: Vec<String>,
    /// `files_with_matches` and `count` modes: path and matching-line count.
    pub files: Vec<(String, u64)>,
    /// More output existed than the limit allowed.
    pub truncated: bool,
    /// Files or directories that could not be read.
    pub unreadable: usize,
    /// The single file searched was binary and skipped.
    pub root_binary: bool,
    /// Files left out because a permission rule covers them.
    pub hidden: usize,
    /// Lines longer than [`MAX_SEARCHED_LINE`] that could not be searched
    /// in full: the first few as `path:line`, and how many in all.
    pub long_lines: Vec<String>,
    pub long_line_count: u64,
}

/// Lines named in the long-line note; the rest are counted.
const MAX_LONG_LINES_NAMED: usize = 5;

struct Limits {
    /// Maximum lines (content) or entries (files, count).
    max: usize,
}

impl Limits {
    fn full(&self, used: usize) -> bool {
        used >= self.max
    }
}

/// Searches `root`, the judged `compiled.root` (blocking). Stops early on
/// cancellation. `hide` says which files a permission rule keeps out of the
/// search (their names and contents); it is asked about every file, the
/// root included.
pub(crate) fn run(
    input: &GrepInput,
    compiled: &Compiled,
    root: &Root,
    max: usize,
    cancel: &CancelScope,
    hide: &dyn Fn(&Path) -> bool,
) -> Found {
    let mut run = Run {
        input,
        compiled,
        searcher: super::options::searcher(input),
        limits: Limits { max },
        cancel,
        found: Found::default(),
        automaton: None,
    };
    let dir = match root {
        Root::File(file) => {
            if hide(&compiled.root) {
                run.found.hidden += 1;
                return run.found;
            }
            // An explicit file is searched even if an ignore rule or the glob
            // would exclude it, as rg does.
            let again = || {
                let mut file = file.try_clone()?;
                file.rewind()?;
                Ok(file)
            };
            let outcome = run.file(&compiled.root, None, &again);
            run.found.root_binary = outcome.binary && outcome.matches == 0;
            return run.found;
        }
        Root::Dir(dir) => dir,
    };
    let mut walk = ignore::WalkBuilder::new(&compiled.root);
    walk.require_git(false)
        .add_custom_ignore_filename(".rgignore")
        .overrides(compiled.overrides.clone())
        .types(compiled.types.clone())
        .sort_by_file_name(|a, b| a.cmp(b));
    for entry in walk.build() {
        if cancel.is_cancelled() || run.found.truncated {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                run.found.unreadable += 1;
                continue;
            }
        };
        // Like rg without -L: symlinks are not followed.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&compiled.root) else {
            run.found.unreadable += 1;
            continue;
        };
        // Rules hold for every file the walk reaches, however it got there
        // (a `glob` that names dot-files, a directory below the root), under
        // the name shown and at the judged path it is read from.
        let judged = dir.path().join(rel);
        if hide(entry.path()) || (judged != entry.path() && hide(&judged)) {
            run.found.hidden += 1;
            continue;
        }
        let shown = entry.path().display().to_string();
        run.file(entry.path(), Some(&shown), &|| dir.open_file_beneath(rel));
    }
    run.found
}

/// One search in progress.
struct Run<'a> {
    input: &'a GrepInput,
    compiled: &'a Compiled,
    searcher: Searcher,
    limits: Limits,
    cancel: &'a CancelScope,
    found: Found,
    /// The pattern's streaming form, built at the first long line
    /// (`Some(None)`: it cannot be built).
    automaton: Option<Option<LineAutomaton>>,
}

struct FileOutcome {
    matches: u64,
    binary: bool,
}

impl Run<'_> {
    /// Searches one file; `shown` is its name in the output (`None`: the
    /// only file searched, printed without a name as rg does). `open`
    /// opens it, from the start, each time it is read.
    fn file(
        &mut self,
        path: &Path,
        shown: Option<&str>,
        open: &dyn Fn() -> io::Result<File>,
    ) -> FileOutcome {
        let (before, after) = self.input.context_lines();
        let mode = self.input.output_mode;
        let mut sink = FileSink {
            mode,
            shown,
            line_numbers: self.input.line_numbers.unwrap_or(true),
            with_context: before + after > 0,
            limits: &self.limits,
            found: &mut self.found,
            cancel: self.cancel,
            matches: 0,
            started: false,
            binary: false,
        };
        // The searcher holds whole lines: it gets each line's first
        // MAX_SEARCHED_LINE bytes, and at the first longer line (outside
        // multiline mode) the file is searched again by streaming.
        let mark = (sink.found.lines.len(), sink.found.truncated);
        let multiline = self.input.multiline;
        let searched = open().and_then(|file| {
            let mut reader = if multiline {
                LineCap::new(file, MAX_SEARCHED_LINE)
            } else {
                LineCap::stopping(file, MAX_SEARCHED_LINE)
            };
            let result =
                self.searcher
                    .search_reader(&self.compiled.matcher, &mut reader, &mut sink);
            match result {
                Err(_) if reader.met_long_line => Ok(None),
                Err(e) => Err(e),
                Ok(()) => Ok(Some(reader)),
            }
        });
        let name = shown.map_or_else(|| path.display().to_string(), str::to_string);
        match searched {
            Ok(Some(reader)) => {
                for line in &reader.cut {
                    sink.note_long_line(&name, *line);
                }
                sink.found.long_line_count += reader.cut_count;
            }
            Ok(None) => {
                // Forget what the capped search found in this file.
                sink.found.lines.truncate(mark.0);
                sink.found.truncated = mark.1;
                sink.matches = 0;
                sink.started = false;
                if self.automaton.is_none() {
                    self.automaton = Some(LineAutomaton::new(self.input));
                }
                let options = stream::Options {
                    matcher: &self.compiled.matcher,
                    automaton: self.automaton.as_ref().and_then(Option::as_ref),
                    held: MAX_SEARCHED_LINE,
                    before,
                    after,
                    cancel: self.cancel,
                };
                match open().and_then(|f| stream::search(f, &options, &mut sink)) {
                    Ok(outcome) => {
                        sink.binary = outcome.binary;
                        for line in &outcome.undecided {
                            sink.note_long_line(&name, *line);
                        }
                        sink.found.long_line_count += outcome.undecided_count;
                    }
                    Err(_) => sink.found.unreadable += 1,
                }
            }
            Err(_) => sink.found.unreadable += 1,
        }
        let outcome = FileOutcome {
            matches: sink.matches,
            binary: sink.binary,
        };
        if outcome.matches > 0 && mode != OutputMode::Content {
            if self.limits.full(self.found.files.len()) {
                self.found.truncated = true;
            } else {
                self.found.files.push((name, outcome.matches));
            }
        }
        outcome
    }
}

/// Collects one file's results into [`Found`].
struct FileSink<'a> {
    mode: OutputMode,
    shown: Option<&'a str>,
    line_numbers: bool,
    with_context: bool,
    limits: &'a Limits,
    found: &'a mut Found,
    cancel: &'a CancelScope,
    matches: u64,
    /// This file has produced output already.
    started: bool,
    binary: bool,
}

impl FileSink<'_> {
    /// Adds an output line; `false` when the limit is reached.
    fn push(&mut self, line: String) -> bool {
        if self.limits.full(self.found.lines.len()) {
            self.found.truncated = true;
            return false;
        }
        self.found.lines.push(line);
        true
    }

    /// rg separates groups of context from different files with `--`.
    fn starting_output(&mut self) -> bool {
        if self.started {
            return true;
        }
        self.started = true;
        if self.with_context && !self.found.lines.is_empty() {
            return self.push("--".to_string());
        }
        true
    }

    fn line(&self, sep: char, number: Option<u64>, bytes: &[u8]) -> String {
        content_line(self.shown, sep, number.filter(|_| self.line_numbers), bytes)
    }

    fn note_long_line(&mut self, name: &str, line: u64) {
        if self.found.long_lines.len() < MAX_LONG_LINES_NAMED {
            self.found.long_lines.push(format!("{name}:{line}"));
        }
    }

    /// A line of `text` in rg's layout, as the streaming search gives it.
    fn text_line(&self, sep: char, number: u64, text: &str) -> String {
        laid_out(
            self.shown,
            sep,
            Some(number).filter(|_| self.line_numbers),
            text,
        )
    }
}

/// The streaming search reports through the same sink, so both searches
/// share the layout, the separators and the limit.
impl stream::Emit for FileSink<'_> {
    fn wants_text(&self) -> bool {
        self.mode == OutputMode::Content
    }

    fn matched(&mut self, number: u64, text: String) -> bool {
        if self.cancel.is_cancelled() {
            return false;
        }
        self.matches += 1;
        match self.mode {
            OutputMode::FilesWithMatches => false,
            OutputMode::Count => true,
            OutputMode::Content => {
                let line = self.text_line(':', number, &text);
                self.starting_output() && self.push(line)
            }
        }
    }

    fn context(&mut self, number: u64, text: String) -> bool {
        if self.cancel.is_cancelled() {
            return false;
        }
        let line = self.text_line('-', number, &text);
        self.starting_output() && self.push(line)
    }

    fn context_break(&mut self) -> bool {
        self.push("--".to_string())
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.cancel.is_cancelled() {
            return Ok(false);
        }
        match self.mode {
            OutputMode::FilesWithMatches => {
                self.matches += 1;
                Ok(false)
            }
            OutputMode::Count => {
                self.matches += 1;
                Ok(true)
            }
            OutputMode::Content => {
                if !self.starting_output() {
                    return Ok(false);
                }
                self.matches += 1;
                let first = mat.line_number();
                for (i, bytes) in mat.lines().enumerate() {
                    let line = self.line(':', first.map(|n| n + i as u64), bytes);
                    if !self.push(line) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _s: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.cancel.is_cancelled() {
            return Ok(false);
        }
        if self.mode != OutputMode::Content {
            return Ok(true);
        }
        if !self.starting_output() {
            return Ok(false);
        }
        let line = self.line('-', ctx.line_number(), ctx.bytes());
        Ok(self.push(line))
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            return Ok(self.push("--".to_string()));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _s: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}
