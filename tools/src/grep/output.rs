//! How Grep's findings read to the model.
//!
//! Content lines use rg's own layout (`path:line:text` for matches,
//! `path-line-text` for context, `--` between groups), which models know
//! well. The notes added around it say what was left out and why, so a
//! truncated answer is never mistaken for a complete one.

use super::long_lines::MAX_SEARCHED_LINE;
use super::options::{GrepInput, OutputMode};
use super::search::Found;

/// Lines longer than this are cut: one minified file could otherwise fill
/// the whole result.
pub(crate) const MAX_LINE_CHARS: usize = 2_000;

/// The most lines or entries one call returns, even with no `head_limit`.
pub(crate) const MAX_ENTRIES: usize = 100_000;

/// One content line in rg's layout; `sep` is `:` for matches, `-` for context.
pub(crate) fn content_line(
    path: Option<&str>,
    sep: char,
    number: Option<u64>,
    bytes: &[u8],
) -> String {
    laid_out(path, sep, number, &shown_text(bytes))
}

/// A line's text as shown: without its line ending, cut after
/// [`MAX_LINE_CHARS`] characters with a count of the rest.
pub(crate) fn shown_text(bytes: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    while text.ends_with('\n') || text.ends_with('\r') {
        text.pop();
    }
    let total = text.chars().count();
    if total > MAX_LINE_CHARS {
        let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
        text = format!("{cut} [… {} more characters]", total - MAX_LINE_CHARS);
    }
    text
}

/// `text` in rg's layout.
pub(crate) fn laid_out(path: Option<&str>, sep: char, number: Option<u64>, text: &str) -> String {
    let mut out = String::new();
    if let Some(path) = path {
        out.push_str(path);
        out.push(sep);
    }
    if let Some(n) = number {
        out.push_str(&n.to_string());
        out.push(sep);
    }
    out.push_str(text);
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The text of the result.
/// Count mode's lines (`path:n`, one a file) and the matches in all.
fn counts(found: &Found) -> (Vec<String>, u64) {
    let lines = found
        .files
        .iter()
        .map(|(p, n)| format!("{p}:{n}"))
        .collect();
    (lines, found.files.iter().map(|(_, n)| n).sum())
}

pub(crate) fn render(input: &GrepInput, found: &Found, limit: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let empty = match input.output_mode {
        OutputMode::Content => found.lines.is_empty(),
        _ => found.files.is_empty(),
    };
    if found.root_binary {
        parts.push(
            "The file looks binary (it contains NUL bytes), so it was not searched.".to_string(),
        );
    } else if empty {
        parts.push(format!("No matches found for `{}`.", input.pattern));
    } else {
        match input.output_mode {
            OutputMode::FilesWithMatches => {
                let mut text = format!("Found {}\n", plural(found.files.len(), "file", "files"));
                let names: Vec<&str> = found.files.iter().map(|(p, _)| p.as_str()).collect();
                text.push_str(&names.join("\n"));
                parts.push(text);
            }
            OutputMode::Count => {
                let (lines, total) = counts(found);
                parts.push(lines.join("\n"));
                parts.push(format!(
                    "Found {} in {}.",
                    plural(total as usize, "matching line", "matching lines"),
                    plural(found.files.len(), "file", "files")
                ));
            }
            OutputMode::Content => parts.push(found.lines.join("\n")),
        }
    }
    if found.truncated {
        let what = match input.output_mode {
            OutputMode::Content => "lines",
            OutputMode::FilesWithMatches => "files",
            OutputMode::Count => "entries",
        };
        let raise = if limit >= MAX_ENTRIES {
            "the most Grep returns in one call"
        } else {
            "raise `head_limit` (0 means no limit) to see more"
        };
        parts.push(format!(
            "(Output cut after the first {limit} {what}; more matches exist. Narrow the \
             search with `path`, `glob` or `type`, or {raise}.)"
        ));
    }
    if found.long_line_count > 0 {
        let more = found.long_line_count - found.long_lines.len() as u64;
        let mut named = found.long_lines.join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more"));
        }
        parts.push(format!(
            "({} longer than {} MiB could not be searched in full ({named}), so a match in \
             {} may be missing: the pattern needs more than a streaming search allows (a word \
             boundary next to non-ASCII text, or `multiline`). Read the file with \
             `offset`/`limit`, or split it, to see the rest.)",
            plural(found.long_line_count as usize, "line", "lines"),
            MAX_SEARCHED_LINE >> 20,
            if found.long_line_count == 1 {
                "it"
            } else {
                "them"
            },
        ));
    }

    if found.hidden > 0 {
        parts.push(format!(
            "({} not searched: permission rules cover {}.)",
            plural(found.hidden, "file was", "files were"),
            if found.hidden == 1 { "it" } else { "them" }
        ));
    }
    if found.unreadable > 0 {
        parts.push(format!(
            "({} could not be read and {} skipped.)",
            plural(found.unreadable, "path", "paths"),
            if found.unreadable == 1 { "was" } else { "were" }
        ));
    }
    parts.join("\n\n")
}

/// Claude Code's `tool_response` for Grep (sdk-tools.d.ts `GrepOutput`):
/// the files found, or the content lines, without Baton's notes.
pub(crate) fn response(input: &GrepInput, found: &Found) -> serde_json::Value {
    use serde_json::json;
    match input.output_mode {
        OutputMode::FilesWithMatches => {
            let names: Vec<&str> = found.files.iter().map(|(p, _)| p.as_str()).collect();
            json!({"mode": "files_with_matches", "filenames": names, "numFiles": names.len()})
        }
        OutputMode::Content => json!({
            "mode": "content",
            "filenames": [],
            "numFiles": 0,
            "content": found.lines.join("\n"),
            "numLines": found.lines.len(),
        }),
        OutputMode::Count => {
            let (lines, total) = counts(found);
            json!({
                "mode": "count",
                "filenames": [],
                "numFiles": found.files.len(),
                "content": lines.join("\n"),
                "numLines": lines.len(),
                "numMatches": total,
            })
        }
    }
}
