//! The words bash will pass, as far as the text decides them.
//!
//! Brace expansion is deterministic: `{-v,x}` is always the two words `-v`
//! and `x`, so a program's options must be judged on the expanded list,
//! not on the word as written. Pathname expansion depends on the files on
//! disk and is left as a pattern here (the reach check lists it against the
//! file system); any other expansion (a variable, a substitution) makes the
//! list unknowable.

use super::syntax::Word;

/// More alternatives than this are not expanded (and are then unknown).
const MAX_ALTERNATIVES: usize = 256;

/// The arguments bash passes for `args` after brace expansion, or `None`
/// when a word's value depends on run-time state.
pub(crate) fn expanded_args(args: &[Word]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for word in args {
        let value = word.literal()?;
        if word.is_glob() {
            let alternatives = expand_braces(value, 0);
            if alternatives.len() >= MAX_ALTERNATIVES {
                return None;
            }
            out.extend(alternatives);
        } else {
            out.push(value.to_string());
        }
    }
    Some(out)
}

/// The brace-expanded values of the words whose value the text decides;
/// the others (variables, substitutions) are left out. For checks whose
/// unknown words are questioned elsewhere (the reach check asks about
/// every word it cannot resolve).
pub(crate) fn known_args(args: &[Word]) -> Vec<String> {
    let mut out = Vec::new();
    for word in args {
        if let Some(mut values) = expanded_args(std::slice::from_ref(word)) {
            out.append(&mut values);
        }
    }
    out
}

/// [`expanded_args`] for callers outside the classifier.
pub fn expand_args(args: &[Word]) -> Option<Vec<String>> {
    expanded_args(args)
}

/// Whether a word may become more (or fewer) than one argument: brace
/// and pathname expansion, and unquoted expansions that are split on
/// `IFS`. A quoted `"$x"` is always exactly one argument.
pub(crate) fn may_be_several(word: &Word) -> bool {
    word.is_glob() || word.may_split()
}

/// Brace expansion as bash does it: `{a,b}` alternatives (nested) and
/// `{x..y}` sequences (of integers or single letters). Text that is not a
/// well-formed brace expression stays as written.
pub fn expand_braces(text: &str, depth: usize) -> Vec<String> {
    if depth > 8 {
        return vec![text.to_string()];
    }
    let bytes = text.as_bytes();
    let Some(open) = text.find('{') else {
        return vec![text.to_string()];
    };
    let mut level = 0usize;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => level += 1,
            b'}' => {
                level = level.saturating_sub(1);
                if level == 0 {
                    close = Some(i);
                    break;
                }
            }
            b',' if level == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![text.to_string()];
    };
    let (head, inner, tail) = (&text[..open], &text[open + 1..close], &text[close + 1..]);
    let alternatives: Vec<String> = if commas.is_empty() {
        match sequence(inner) {
            Some(items) => items,
            // Not an expression: the braces stay, later braces may expand.
            None => {
                return expand_braces(tail, depth + 1)
                    .into_iter()
                    .map(|t| format!("{head}{{{inner}}}{t}"))
                    .collect();
            }
        }
    } else {
        let mut parts = Vec::new();
        let mut start = open + 1;
        for c in commas.iter().copied().chain([close]) {
            parts.push(text[start..c].to_string());
            start = c + 1;
        }
        parts
    };
    let mut out = Vec::new();
    for alt in alternatives {
        for expanded in expand_braces(&format!("{head}{alt}{tail}"), depth + 1) {
            if out.len() >= MAX_ALTERNATIVES {
                return out;
            }
            out.push(expanded);
        }
    }
    out
}

/// `1..3`, `a..c`, `1..9..2`: the items, or `None` when not a sequence.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let mut parts = inner.split("..");
    let (first, last) = (parts.next()?, parts.next()?);
    let step: i64 = match parts.next() {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    if parts.next().is_some() {
        return None;
    }
    let step = step.unsigned_abs().max(1) as usize;
    if let (Ok(a), Ok(b)) = (first.parse::<i64>(), last.parse::<i64>()) {
        let items: Vec<i64> = if a <= b {
            (a..=b).step_by(step).take(MAX_ALTERNATIVES).collect()
        } else {
            (b..=a).rev().step_by(step).take(MAX_ALTERNATIVES).collect()
        };
        return Some(items.into_iter().map(|n| n.to_string()).collect());
    }
    let (a, b) = (single_char(first)?, single_char(last)?);
    let items: Vec<u8> = if a <= b {
        (a..=b).step_by(step).collect()
    } else {
        (b..=a).rev().step_by(step).collect()
    };
    Some(
        items
            .into_iter()
            .map(|c| char::from(c).to_string())
            .collect(),
    )
}

fn single_char(text: &str) -> Option<u8> {
    match text.as_bytes() {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(expand_braces("a{b,c}d", 0), vec!["abd", "acd"]);
        assert_eq!(expand_braces("{..,x}/s", 0), vec!["../s", "x/s"]);
        assert_eq!(expand_braces("f{1..3}", 0), vec!["f1", "f2", "f3"]);
        assert_eq!(expand_braces("{a,{b,c}}", 0), vec!["a", "b", "c"]);
        assert_eq!(expand_braces("x{", 0), vec!["x{"]);
        assert_eq!(expand_braces("{x}{-v,y}", 0), vec!["{x}-v", "{x}y"]);
        assert_eq!(expand_braces("{c..a}", 0), vec!["c", "b", "a"]);
    }
}
