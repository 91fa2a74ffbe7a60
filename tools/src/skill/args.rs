//! A skill body with its arguments put in, as Claude Code does it:
//! `$ARGUMENTS` is the whole argument string, `$ARGUMENTS[N]` and `$N`
//! the N-th argument (from 0; split like a shell line, quotes group
//! words), `${CLAUDE_SKILL_DIR}` the skill's directory and
//! `${CLAUDE_SESSION_ID}` the session. When the body uses no argument
//! placeholder, the arguments are appended as `ARGUMENTS: …` so they are
//! not lost. A missing argument becomes the empty string.

/// `body` with the placeholders replaced.
pub(crate) fn substitute(body: &str, args: &str, skill_dir: &str, session_id: &str) -> String {
    let words = split(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used_args = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            used_args = true;
            match index_in_brackets(tail) {
                Some((n, len)) => {
                    out.push_str(words.get(n).map_or("", String::as_str));
                    rest = &tail[len..];
                }
                None => {
                    out.push_str(args);
                    rest = tail;
                }
            }
        } else if let Some(tail) = after.strip_prefix("{CLAUDE_SKILL_DIR}") {
            out.push_str(skill_dir);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("{CLAUDE_SESSION_ID}") {
            out.push_str(session_id);
            rest = tail;
        } else {
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            match after[..digits].parse::<usize>() {
                Ok(n) => {
                    used_args = true;
                    out.push_str(words.get(n).map_or("", String::as_str));
                    rest = &after[digits..];
                }
                Err(_) => {
                    out.push('$');
                    rest = after;
                }
            }
        }
    }
    out.push_str(rest);
    if !used_args && !args.trim().is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
    out
}

/// `[N]` at the start of `text`: N and the length of the brackets.
fn index_in_brackets(text: &str) -> Option<(usize, usize)> {
    let inner = text.strip_prefix('[')?;
    let close = inner.find(']')?;
    let n = inner[..close].trim().parse().ok()?;
    Some((n, close + 2))
}

/// Words of `args`, split on whitespace; single or double quotes group.
fn split(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_like_claude_code() {
        let s = |body: &str, args: &str| substitute(body, args, "/skills/x", "sess");
        assert_eq!(
            s("Fix issue $ARGUMENTS now", "42 fast"),
            "Fix issue 42 fast now"
        );
        assert_eq!(
            s("a=$0 b=$1 c=$2", "one 'two words'"),
            "a=one b=two words c="
        );
        assert_eq!(s("$ARGUMENTS[1]/$ARGUMENTS[0]", "x y"), "y/x");
        assert_eq!(
            s("run ${CLAUDE_SKILL_DIR}/go.sh in ${CLAUDE_SESSION_ID}", ""),
            "run /skills/x/go.sh in sess"
        );
        assert_eq!(s("cost: $ and $$", ""), "cost: $ and $$");
        assert_eq!(
            s("No placeholder.", "extra words"),
            "No placeholder.\n\nARGUMENTS: extra words"
        );
        assert_eq!(s("No placeholder.", "  "), "No placeholder.");
        assert_eq!(s("$ARGUMENTS[x]", "a"), "a[x]");
    }
}
