//! The `name` of a new worktree, checked as an adversary's input.
//!
//! Claude Code's grammar: "/"-separated segments of letters, digits, dots,
//! underscores and dashes, at most 64 characters; the directory and branch
//! use the name with each "/" turned into "+" (`a/b` → `.claude/worktrees/a+b`
//! on branch `worktree-a+b`), so a name never nests directories. On top of
//! that Baton refuses what could be read as something else: `..` anywhere
//! (a parent directory, a git range), a segment that is `.` or starts with
//! `-` or `.` (an option, a hidden or special name), and endings git refuses
//! in a branch name (`.lock`, `.`).

const MAX_LEN: usize = 64;

/// The directory and branch stem for `name`, or why it is refused.
pub(super) fn slug(name: &str) -> Result<String, String> {
    let refuse = |why: &str| {
        Err(format!(
            "invalid worktree name {name:?}: {why}. Use letters, digits, dots, underscores and \
             dashes, in \"/\"-separated segments, at most {MAX_LEN} characters"
        ))
    };
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name.chars().count() > MAX_LEN {
        return refuse("it is too long");
    }
    if name.contains("..") {
        return refuse("it contains \"..\"");
    }
    let mut segments = Vec::new();
    for segment in name.split('/') {
        if segment.is_empty() {
            return refuse("it has an empty segment");
        }
        if let Some(bad) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return refuse(&format!("{bad:?} is not allowed"));
        }
        if segment.starts_with('-') {
            return refuse("a segment starts with \"-\" (it would read as an option)");
        }
        if segment.starts_with('.') {
            return refuse("a segment starts with \".\"");
        }
        if segment.ends_with('.') || segment.ends_with(".lock") {
            return refuse("a segment ends with \".\" or \".lock\", which git refuses in a branch");
        }
        segments.push(segment);
    }
    Ok(segments.join("+"))
}

/// A name for a worktree the model did not name: short, unique enough.
pub(super) fn generated() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("wt-{:x}-{:x}", std::process::id(), nanos & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_names_pass_and_slashes_become_plus() {
        assert_eq!(slug("fix-login").unwrap(), "fix-login");
        assert_eq!(slug("feature/auth_v2").unwrap(), "feature+auth_v2");
        assert_eq!(slug("v1.2").unwrap(), "v1.2");
        assert!(slug(&generated()).is_ok());
    }

    #[test]
    fn crafted_names_are_refused() {
        for bad in [
            "",
            "..",
            "../escape",
            "a/../b",
            "a..b",
            "/abs",
            "a//b",
            "a/",
            "-b",
            "--force",
            "ok/-x",
            ".git",
            "a/.hidden",
            "x.lock",
            "x.",
            "a b",
            "a;rm",
            "a\nb",
            "ä",
            "a\\b",
            &"x".repeat(65),
        ] {
            assert!(slug(bad).is_err(), "{bad:?} passed");
        }
    }
}
