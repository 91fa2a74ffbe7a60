//! Quote removal without expansion.
//!
//! Rules match on what bash will pass to a program, not on how the model
//! spelled it: `"-delete"`, `-del'ete'` and `\-delete` are all `-delete`.
//! Anything whose value depends on run-time state (variables, command
//! substitution, arithmetic, `~`) has no literal value, and callers treat it
//! as unknown.

use tree_sitter::Node;

use super::syntax::Word;

/// The source text of `node`, or "" if its range is not a char boundary
/// (tree-sitter works on bytes; this cannot happen for valid UTF-8 input,
/// but a wrong guess must not panic).
pub(crate) fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

pub(crate) fn word(node: Node<'_>, src: &str) -> Word {
    let mut glob = false;
    let value = literal(node, src, &mut glob);
    Word {
        source: text(node, src).to_string(),
        value,
        glob,
        split: splits(node),
    }
}

/// Whether `node` has an expansion outside double quotes.
fn splits(node: Node<'_>) -> bool {
    match node.kind() {
        "simple_expansion" | "expansion" | "command_substitution" | "arithmetic_expansion" => true,
        "concatenation" | "command_name" => {
            let mut cursor = node.walk();
            let found = node.children(&mut cursor).any(splits);
            found
        }
        _ => false,
    }
}

fn literal(node: Node<'_>, src: &str, glob: &mut bool) -> Option<String> {
    match node.kind() {
        "command_name" => {
            let mut cursor = node.walk();
            let mut named = node.named_children(&mut cursor);
            match (named.next(), named.next()) {
                (Some(only), None) => literal(only, src, glob),
                _ => None,
            }
        }
        "word" => unquoted(text(node, src), glob),
        "number" if node.named_child_count() == 0 => Some(text(node, src).to_string()),
        "raw_string" => {
            let t = text(node, src);
            t.strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .map(str::to_string)
        }
        "string" => double_quoted(node, src),
        "concatenation" => {
            let mut out = String::new();
            // The grammar splits `{a,b}` into several words; brace
            // expansion is judged on the unquoted text as a whole.
            let mut bare = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                let part = literal(child, src, glob)?;
                if child.kind() == "word" {
                    bare.push_str(&part);
                } else {
                    bare.push(' ');
                }
                out.push_str(&part);
            }
            if bare.contains('{')
                && bare.contains('}')
                && (bare.contains(',') || bare.contains(".."))
            {
                *glob = true;
            }
            Some(out)
        }
        "extglob_pattern" | "brace_expression" => {
            *glob = true;
            Some(text(node, src).to_string())
        }
        _ => None,
    }
}

/// An unquoted word: backslash escapes removed, pattern characters noted.
fn unquoted(raw: &str, glob: &mut bool) -> Option<String> {
    if raw.starts_with('~') {
        return None;
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    let mut brace_open = false;
    let mut bracket_open = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => out.push(escaped),
            },
            '$' | '`' => return None,
            '*' | '?' => {
                *glob = true;
                out.push(c);
            }
            // A lone `[` (the test command) is not a pattern; `[...]` is.
            '[' => {
                bracket_open = true;
                out.push(c);
            }
            ']' if bracket_open => {
                *glob = true;
                out.push(c);
            }
            '{' => {
                brace_open = true;
                out.push(c);
            }
            ',' if brace_open => {
                *glob = true;
                out.push(c);
            }
            '.' if brace_open && out.ends_with('.') => {
                *glob = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

/// A `"..."` string whose parts are all plain text.
fn double_quoted(node: Node<'_>, src: &str) -> Option<String> {
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "\"" => {}
            "string_content" => {
                let raw = text(child, src);
                let mut chars = raw.chars().peekable();
                while let Some(c) = chars.next() {
                    if c == '\\' {
                        match chars.peek() {
                            Some('\n') => {
                                chars.next();
                            }
                            Some(&next @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                out.push(next);
                            }
                            _ => out.push('\\'),
                        }
                    } else {
                        out.push(c);
                    }
                }
            }
            _ => return None,
        }
    }
    Some(out)
}
