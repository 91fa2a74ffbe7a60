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
//!   command, the grammar sees an escaped character in a word;
//! - a newline before a word starting with a backslash (`echo x⏎\cat f`):
//!   bash runs two commands, the grammar reads one;
//! - here-documents: see [`heredoc_agrees`].

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
    let Some(end) = child("heredoc_end") else {
        return false;
    };
    // bash needs the delimiter alone on its line (after leading tabs for
    // `<<-`); the grammar also accepts `EOF | cmd`.
    let strips_tabs = {
        let mut cursor = node.walk();
        let op = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| c.kind());
        op == Some("<<-")
    };
    let bytes = src.as_bytes();
    let before = bytes[..end.start_byte().min(bytes.len())]
        .iter()
        .rev()
        .find(|b| !(strips_tabs && **b == b'\t'));
    let alone =
        matches!(before, Some(b'\n')) && matches!(bytes.get(end.end_byte()), None | Some(b'\n'));
    if !alone || super::words::text(end, src) != delimiter {
        return false;
    }
    // The grammar does not read backquotes in a body as substitutions.
    let quoted = raw.contains(['\'', '"', '\\']);
    let body = child("heredoc_body").map_or("", |b| super::words::text(b, src));
    // bash reads a here-document line by line and stops at the first line
    // equal to the delimiter, even one inside a quoted string of a `$(...)`
    // in the body; the grammar parses the substitution and reads past it.
    // A delimiter line anywhere before the grammar's end means the two
    // disagree about where the document ends.
    let delimiter_inside = body.split('\n').any(|line| {
        let line = if strips_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        line == delimiter
    });
    if delimiter_inside {
        return false;
    }
    quoted || !body.contains('`')
}

/// Whether a newline separates two words of one command in the grammar's
/// reading. For bash an unescaped newline there ends the command, so the
/// next words are another command the walk would not see.
pub(crate) fn newline_inside_command(node: Node<'_>, src: &str) -> bool {
    let bytes = src.as_bytes();
    let mut cursor = node.walk();
    let mut previous_end: Option<usize> = None;
    for child in node.children(&mut cursor) {
        if let Some(end) = previous_end {
            let gap = bytes.get(end..child.start_byte()).unwrap_or(&[]);
            for (i, b) in gap.iter().enumerate() {
                let escaped = i > 0 && gap[i - 1] == b'\\';
                if *b == b'\n' && !escaped {
                    return true;
                }
            }
        }
        if bare_newline_in_word(child, src) {
            return true;
        }
        previous_end = Some(child.end_byte());
    }
    false
}

/// An unquoted word holding a newline that no backslash escapes (the
/// grammar lets `⏎\cat` be one word).
fn bare_newline_in_word(node: Node<'_>, src: &str) -> bool {
    match node.kind() {
        "word" => {
            let bytes = super::words::text(node, src).as_bytes();
            bytes
                .iter()
                .enumerate()
                .any(|(i, b)| *b == b'\n' && (i == 0 || bytes[i - 1] != b'\\'))
        }
        "command_name" | "concatenation" => {
            let mut cursor = node.walk();
            let found = node
                .children(&mut cursor)
                .any(|c| bare_newline_in_word(c, src));
            found
        }
        _ => false,
    }
}
