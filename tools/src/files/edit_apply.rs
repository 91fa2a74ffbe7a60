//! The text operation behind `Edit`, without any file I/O.
//!
//! Models write `\n` even when the file uses `\r\n`, so a literal search
//! would fail on every multi-line edit of a Windows file, and a literal
//! replacement would leave mixed line endings behind. The search therefore
//! tries the string as given, then adapted to the file's dominant line ending,
//! and the replacement is always adapted to that ending.

use std::time::Duration;

use similar::TextDiff;

/// The result of a successful replacement.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Applied {
    pub content: String,
    pub count: usize,
}

/// How a replacement failed; the tool words the message with the file name.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Failure {
    NotFound,
    NotUnique(usize),
}

/// Replaces `old` by `new` in `content`: exactly one occurrence, or all of
/// them with `replace_all`.
pub(super) fn replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, Failure> {
    let crlf = uses_crlf(content);
    let adapted_old = adapt(old, crlf);
    let candidates = [old, adapted_old.as_str()];
    let Some((needle, count)) = candidates
        .iter()
        .map(|c| {
            (
                *c,
                if c.is_empty() {
                    0
                } else {
                    content.matches(*c).count()
                },
            )
        })
        .find(|(_, n)| *n > 0)
    else {
        return Err(Failure::NotFound);
    };
    if count > 1 && !replace_all {
        return Err(Failure::NotUnique(count));
    }
    let replacement = adapt(new, crlf);
    let content = if replace_all {
        content.replace(needle, &replacement)
    } else {
        content.replacen(needle, &replacement, 1)
    };
    Ok(Applied { content, count })
}

/// Whether most line breaks of `content` are `\r\n`.
pub(super) fn uses_crlf(content: &str) -> bool {
    let crlf = content.matches("\r\n").count();
    let lf = content.matches('\n').count();
    crlf > 0 && crlf * 2 >= lf
}

/// `text` with its line breaks in the file's convention.
pub(super) fn adapt(text: &str, crlf: bool) -> String {
    let lf = text.replace("\r\n", "\n");
    if crlf {
        lf.replace('\n', "\r\n")
    } else {
        lf
    }
}

/// When `old` is not in `content`: where its first line is, ignoring
/// indentation, so the model can see how the text around it differs.
pub(super) fn near_miss(content: &str, old: &str) -> Option<String> {
    let first = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let hits: Vec<String> = content
        .lines()
        .enumerate()
        .filter(|(_, line)| line.trim() == first)
        .map(|(i, _)| (i + 1).to_string())
        .take(5)
        .collect();
    if hits.is_empty() {
        return None;
    }
    Some(format!(
        "The first line of `old_string` (ignoring indentation) is at line {} of the file; compare the \
         indentation and the lines after it with what you sent.",
        hits.join(", ")
    ))
}

/// A unified diff of the change with a few lines of context, cut at
/// `max_chars` so a sweeping `replace_all` cannot flood the result.
pub(super) fn diff_snippet(before: &str, after: &str, name: &str, max_chars: usize) -> String {
    let before = before.replace("\r\n", "\n");
    let after = after.replace("\r\n", "\n");
    // A sweeping change of a big file has a huge minimal diff; past the
    // deadline `similar` settles for a coarser one, which is fine for a snippet.
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(500))
        .diff_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header(name, name)
        .to_string();
    if diff.chars().count() <= max_chars {
        return diff;
    }
    let mut cut: String = diff.chars().take(max_chars).collect();
    if let Some(nl) = cut.rfind('\n') {
        cut.truncate(nl + 1);
    }
    cut.push_str("… [diff cut; Read the file to see the rest of the change]\n");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_one_or_all_and_counts() {
        let r = replace("a b a", "b", "c", false).unwrap();
        assert_eq!(
            r,
            Applied {
                content: "a c a".into(),
                count: 1
            }
        );
        assert_eq!(
            replace("a b a", "a", "x", false),
            Err(Failure::NotUnique(2))
        );
        assert_eq!(replace("a b a", "a", "x", true).unwrap().content, "x b x");
        assert_eq!(replace("a b a", "z", "x", true), Err(Failure::NotFound));
    }

    #[test]
    fn follows_the_files_line_endings() {
        let file = "one\r\ntwo\r\nthree\r\n";
        let r = replace(file, "one\ntwo", "uno\ndos\nmas", false).unwrap();
        assert_eq!(r.content, "uno\r\ndos\r\nmas\r\nthree\r\n");
        let lf = "one\ntwo\n";
        assert_eq!(
            replace(lf, "one\r\ntwo", "1\r\n2", false).unwrap().content,
            "1\n2\n"
        );
    }

    #[test]
    fn near_miss_points_at_the_first_line() {
        let file = "fn a() {\n    let x = 1;\n}\n";
        let hint = near_miss(file, "let x = 1;\n  let y = 2;").unwrap();
        assert!(hint.contains("line 2"), "{hint}");
        assert_eq!(near_miss(file, "nothing like it"), None);
    }

    #[test]
    fn diff_shows_the_change_and_is_bounded() {
        let d = diff_snippet("a\nb\nc\n", "a\nB\nc\n", "f.txt", 1000);
        assert!(d.contains("-b\n") && d.contains("+B\n"), "{d}");
        let big_before = "x\n".repeat(5000);
        let big_after = "y\n".repeat(5000);
        let d = diff_snippet(&big_before, &big_after, "f", 500);
        assert!(d.chars().count() < 600 && d.contains("diff cut"));
        // Every other line of 200,000 changed: still quick, still bounded.
        let before: String = (0..200_000).map(|i| format!("{i}\n")).collect();
        let after: String = (0..200_000)
            .map(|i| {
                if i % 2 == 0 {
                    format!("{i}\n")
                } else {
                    format!("x{i}\n")
                }
            })
            .collect();
        let started = std::time::Instant::now();
        let d = diff_snippet(&before, &after, "f", 6000);
        assert!(d.contains("diff cut"));
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
}
