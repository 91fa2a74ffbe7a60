//! Where tree-sitter's reading of a line and bash's differ.
//!
//! The grammar is a good approximation of bash, not bash. Each difference
//! found that could make a command look harmless when bash would run
//! something else is detected here and reported as unsupported syntax, so
//! the line is never read-only:
//! - a backslash-newline between two non-blank characters: bash deletes it
//!   and joins the two halves into one word (`find . -de\⏎lete` runs
//!   `-delete`), while the grammar sees two words;
//! - backquotes nested with `` \` `` inside backquotes: bash runs the inner
//!   command, the grammar sees an escaped character in a word.

use tree_sitter::Node;

/// Node kinds inside which a backslash-newline is text, not a joint.
const QUOTED: &[&str] = &[
    "string",
    "string_content",
    "raw_string",
    "ansi_c_string",
    "heredoc_body",
    "heredoc_content",
    "comment",
];

/// Whether `src` has a line continuation that joins two words.
pub(crate) fn joining_continuation(root: Node<'_>, src: &str) -> bool {
    let bytes = src.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'\n' || i == 0 || bytes[i - 1] != b'\\' {
            continue;
        }
        let run = bytes[..i].iter().rev().take_while(|c| **c == b'\\').count();
        if run % 2 == 0 {
            // `\\` then a newline: an escaped backslash, the newline is real.
            continue;
        }
        let before = i.checked_sub(run + 1).map(|j| bytes[j]);
        let after = bytes.get(i + 1).copied();
        let joins = before.is_some_and(|c| !c.is_ascii_whitespace())
            && after.is_some_and(|c| !c.is_ascii_whitespace());
        if joins && !inside_quotes(root, i - 1) {
            return true;
        }
    }
    false
}

fn inside_quotes(root: Node<'_>, at: usize) -> bool {
    let mut node = root.descendant_for_byte_range(at, at + 1);
    while let Some(n) = node {
        if QUOTED.contains(&n.kind()) {
            return true;
        }
        node = n.parent();
    }
    false
}

/// Whether a `` `...` `` substitution hides another one (`` \` ``), or uses
/// other backslash escapes whose meaning differs inside backquotes.
pub(crate) fn nested_backquotes(node: Node<'_>, src: &str) -> bool {
    let text = super::words::text(node, src);
    text.starts_with('`') && text.contains('\\')
}

/// Whether a here-document's delimiter is one both readers agree on.
///
/// bash ends the document at the first line equal to the delimiter after
/// quote removal (`E"O"F` ends at `EOF`); the grammar looks for the text as
/// written and so can swallow lines that bash runs as commands. Only plain
/// delimiters, optionally quoted as a whole or escaped with one leading
/// backslash, are accepted, and the grammar's end line must equal bash's.
pub(crate) fn heredoc_agrees(node: Node<'_>, src: &str) -> bool {
    let child = |kind: &str| {
        let mut cursor = node.walk();
        let found = node.children(&mut cursor).find(|c| c.kind() == kind);
        found
    };
    let Some(start) = child("heredoc_start") else {
        return false;
    };
    let raw = super::words::text(start, src);
    let delimiter = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
        .or_else(|| raw.strip_prefix('\\'))
        .unwrap_or(raw);
    let plain = !delimiter.is_empty()
        && delimiter
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !plain {
        return false;
    }
    match child("heredoc_end") {
        Some(end) => super::words::text(end, src) == delimiter,
        None => false,
    }
}
