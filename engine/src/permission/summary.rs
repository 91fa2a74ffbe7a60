//! The one-line summary of a permission request, for terminal prompts and
//! host UIs: `Bash(rm -rf build)`, `Edit(/src/main.rs)`,
//! `WebFetch(https://docs.rs/)`.
//!
//! It names what the rules judge (the command, the path, the URL), not the
//! whole input: a prompt that prints a 5,000-character input hides the one
//! part that matters. The text comes from the model, so it is made safe to
//! print: line breaks and tabs become spaces, and every other control or
//! direction-changing character is shown escaped (`\u{1b}`), so a command
//! cannot repaint the terminal or reorder what the user reads.

use serde_json::Value;

use super::PermissionTarget;

/// The first line of `text` (surrounding blanks left out), at most
/// `max_chars` characters; `…` marks that something was left out (the
/// rest of a long line, or more lines). For naming a command or a hook in
/// a message without quoting all of it.
pub fn first_line(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    let line = text.lines().next().unwrap_or("").trim_end();
    if line.chars().count() > max_chars || text.contains('\n') {
        format!("{}…", line.chars().take(max_chars).collect::<String>())
    } else {
        line.to_string()
    }
}

/// Longest summary, in characters, before it is cut with `…`.
pub const MAX_CHARS: usize = 160;

/// The summary of a call of `tool` judged on `target`; `label` is the
/// tool's own label when it has one, else the input is shown compactly.
pub fn request_summary(
    tool: &str,
    target: &PermissionTarget,
    label: Option<&str>,
    input: &Value,
) -> String {
    let inner = match target {
        PermissionTarget::Command(command) => command.clone(),
        PermissionTarget::Path { path, .. } => path.display().to_string(),
        PermissionTarget::Url(url) => url.clone(),
        PermissionTarget::None => match label {
            // A tool's label already has the `Tool(…)` form.
            Some(label) => return printable(label),
            None => input.to_string(),
        },
    };
    printable(&format!("{tool}({})", shorten(&inner)))
}

/// `text` collapsed to one line and cut to fit, keeping the closing `)`.
fn shorten(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let budget = MAX_CHARS.saturating_sub(20);
    if one_line.chars().count() <= budget {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(budget).collect();
    cut.push('…');
    cut
}

/// Escapes what a terminal would interpret rather than show.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || is_bidi_control(c) => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that change the order text is displayed in (the "Trojan
/// source" characters) or hide text.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_paths_and_urls_are_named() {
        let cmd = PermissionTarget::Command("rm -rf build".into());
        assert_eq!(
            request_summary("Bash", &cmd, None, &json!({})),
            "Bash(rm -rf build)"
        );
        let url = PermissionTarget::Url("https://docs.rs/".into());
        assert_eq!(
            request_summary("WebFetch", &url, None, &json!({})),
            "WebFetch(https://docs.rs/)"
        );
        let none = PermissionTarget::None;
        assert_eq!(
            request_summary("mcp__a__b", &none, None, &json!({"q": 1})),
            "mcp__a__b({\"q\":1})"
        );
    }

    #[test]
    fn long_inputs_fit_one_line() {
        let long = format!("echo {}\necho done", "x".repeat(5000));
        let s = request_summary("Bash", &PermissionTarget::Command(long), None, &json!({}));
        assert!(s.chars().count() <= MAX_CHARS, "{s}");
        assert!(s.starts_with("Bash(echo xxx") && s.ends_with("…)"), "{s}");
        assert!(!s.contains('\n'));
    }

    #[test]
    fn terminal_controls_are_escaped() {
        let sneaky = "ls\u{1b}[2K\u{1b}[1Aecho safe\u{202E}txt.exe";
        let s = request_summary(
            "Bash",
            &PermissionTarget::Command(sneaky.into()),
            None,
            &json!({}),
        );
        assert!(!s.contains('\u{1b}') && !s.contains('\u{202E}'), "{s}");
        assert!(s.contains("\\u{1b}") && s.contains("\\u{202e}"), "{s}");
    }
}
