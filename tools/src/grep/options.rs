//! Grep's input, and turning it into ripgrep's building blocks.
//!
//! Every choice here mirrors what `rg` does with the same flags, so a model
//! that knows ripgrep gets what it expects: the regex is line-anchored
//! (`^`/`$` match at line boundaries), `multiline` is `rg -U
//! --multiline-dotall`, `glob` is `rg --glob` (a whitelist that also reaches
//! into ignored files), and `type` uses ripgrep's own file-type table.
//! Each way the input can be wrong becomes a message saying how to fix it.

use std::path::{Path, PathBuf};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

/// What Grep reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Paths of files with at least one match (`rg -l`).
    #[default]
    FilesWithMatches,
    /// Matching lines, with optional context (`rg`).
    Content,
    /// Number of matching lines per file (`rg -c`).
    Count,
}

/// The input of `Grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// Regular expression (Rust regex syntax, as in ripgrep).
    pub pattern: String,
    /// File or directory to search; defaults to the working directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `*.{ts,tsx}`
    /// (`rg --glob`); several globs may be separated by spaces.
    #[serde(default)]
    pub glob: Option<String>,
    /// Only search files of this ripgrep type, e.g. `rust`, `py`, `js`
    /// (`rg --type`).
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    /// `files_with_matches` (default), `content` or `count`.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive search.
    #[serde(default, rename = "-i")]
    pub case_insensitive: bool,
    /// Show line numbers in `content` mode (default true).
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (`content` mode).
    #[serde(default, rename = "-A")]
    pub after: Option<u32>,
    /// Lines of context before each match (`content` mode).
    #[serde(default, rename = "-B")]
    pub before: Option<u32>,
    /// Lines of context before and after each match (`content` mode).
    #[serde(default, rename = "-C")]
    pub context: Option<u32>,
    /// Let patterns span lines; `.` then matches newlines too.
    #[serde(default)]
    pub multiline: bool,
    /// Keep only the first N lines or entries of the output (default 250;
    /// 0: no limit).
    #[serde(default)]
    pub head_limit: Option<usize>,
}

impl GrepInput {
    /// The directory or file to search, absolute and with `..` folded.
    pub fn search_path(&self, cwd: &Path) -> PathBuf {
        match &self.path {
            Some(p) if !p.trim().is_empty() => baton_engine::paths::normalize(&cwd.join(p)),
            _ => cwd.to_path_buf(),
        }
    }

    /// Context lines (before, after); explicit `-A`/`-B` win over `-C`.
    pub fn context_lines(&self) -> (usize, usize) {
        if self.output_mode != OutputMode::Content {
            return (0, 0);
        }
        let both = self.context.unwrap_or(0) as usize;
        (
            self.before.map_or(both, |n| n as usize),
            self.after.map_or(both, |n| n as usize),
        )
    }
}

/// Everything a search needs, built and checked up front.
pub(crate) struct Compiled {
    pub root: PathBuf,
    pub matcher: RegexMatcher,
    pub overrides: Override,
    pub types: Types,
}

baton_engine::debug_fields! { Compiled { root } }

/// Checks the input and builds the matcher and filters; `Err` is the message
/// for the model.
pub(crate) fn compile(input: &GrepInput, cwd: &Path) -> Result<Compiled, String> {
    if input.pattern.is_empty() {
        return Err("The pattern is empty; give a regular expression to search for.".into());
    }
    let root = input.search_path(cwd);
    match std::fs::metadata(&root) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "The path {} does not exist; check it, or omit `path` to search the \
                 working directory.",
                root.display()
            ))
        }
        Err(e) => return Err(format!("Cannot read {}: {e}.", root.display())),
    }
    Ok(Compiled {
        matcher: matcher(input)?,
        overrides: overrides(input, &root)?,
        types: types(input)?,
        root,
    })
}

fn matcher(input: &GrepInput) -> Result<RegexMatcher, String> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(input.case_insensitive)
        .multi_line(true);
    if input.multiline {
        builder.dot_matches_new_line(true);
    } else {
        // Lets the searcher go line by line, and rejects patterns that could
        // only match across lines.
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(&input.pattern).map_err(|e| {
        // grep-regex reports syntax errors against the pattern wrapped in a
        // group; the plain regex parser shows the pattern as the model wrote it.
        let text = match regex::Regex::new(&input.pattern) {
            Err(plain) => plain.to_string(),
            Ok(_) => e.to_string(),
        };
        let hint = if !input.multiline && text.contains("not allowed") {
            "To match across lines, set `multiline: true`."
        } else {
            "Check the syntax (Rust regex, as in ripgrep); escape special characters \
             such as `(`, `[`, `{` or `.` with a backslash to match them literally."
        };
        format!(
            "`{}` is not a valid regular expression: {text}\n{hint}",
            input.pattern
        )
    })
}

fn overrides(input: &GrepInput, root: &Path) -> Result<Override, String> {
    let mut builder = OverrideBuilder::new(root);
    if let Some(globs) = &input.glob {
        for glob in globs.split_whitespace() {
            builder.add(glob).map_err(|e| {
                format!(
                    "`{glob}` is not a valid glob: {e}. Examples: `*.rs`, `*.{{ts,tsx}}`, \
                     `!*_test.go` (a leading `!` excludes)."
                )
            })?;
        }
    }
    builder
        .build()
        .map_err(|e| format!("The glob filter could not be built: {e}"))
}

fn types(input: &GrepInput) -> Result<Types, String> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    if let Some(name) = input.file_type.as_deref().map(str::trim) {
        if !name.is_empty() {
            builder.select(name);
        }
    }
    builder.build().map_err(|e| match e {
        ignore::Error::UnrecognizedFileType(name) => format!(
            "`{name}` is not a known file type. Use one of ripgrep's type names such as \
             rust, py, js, ts, go, java, c, cpp, md, json, yaml, sh; or use `glob` \
             (e.g. `*.ext`) instead."
        ),
        other => format!("The file type filter could not be built: {other}"),
    })
}

/// A searcher configured like `rg` for this input.
pub(crate) fn searcher(input: &GrepInput) -> Searcher {
    let (before, after) = input.context_lines();
    SearcherBuilder::new()
        .line_number(true)
        .multi_line(input.multiline)
        .before_context(before)
        .after_context(after)
        // rg's rule for files found by walking: a NUL byte means binary,
        // and a binary file is not searched further.
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}
