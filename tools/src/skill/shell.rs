//! A skill's shell blocks: `` !`command` `` inline and ```` ```! ```` fenced
//! blocks, whose output Claude Code puts into the skill's text before the
//! model reads it (published skills use them for `git status`, `git diff`,
//! the current branch).
//!
//! Claude Code runs them with the skill's `allowed-tools` pre-approved.
//! Baton runs each one as a `Bash` call nested under the `Skill` call, so it
//! is judged like any command the model writes: rules, the read-only
//! classifier, hooks, the sandbox, and the host's approval. The arguments
//! are put in before (as Claude Code does), so text the model passed in
//! `args` that lands in a command is judged with it, never trusted because
//! the skill file is the user's.
//!
//! Where a block is found follows Claude Code's patterns: a fenced block
//! opened by ```` ```! ````, and an inline span whose `!` starts the text or
//! follows whitespace (so `` a!`b` `` is left alone).

use baton_engine::nesting::{run_nested, NestedOptions};
use baton_engine::{ToolContext, ToolUse};
use serde_json::json;

/// What replaces every block when the settings forbid running them
/// (`disableSkillShellExecution`); Claude Code's wording.
pub(crate) const DISABLED: &str = "[shell command execution disabled by policy]";

/// One shell block of a skill body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// Byte range of the whole block (markers included) in the body.
    pub start: usize,
    pub end: usize,
    /// The command, trimmed.
    pub command: String,
}

/// The shell blocks of `body`, in order of position; blocks with an empty
/// command are not blocks.
pub(crate) fn blocks(body: &str) -> Vec<Block> {
    let mut found = fenced(body);
    for b in inline(body) {
        // An inline marker inside a fenced block is that block's text.
        if !found.iter().any(|f| b.start >= f.start && b.start < f.end) {
            found.push(b);
        }
    }
    found.sort_by_key(|b| b.start);
    found
}

/// ```` ```! … ``` ```` blocks.
fn fenced(body: &str) -> Vec<Block> {
    scan(body, "```!", "```", |_, _| true)
}

/// `` !`…` `` spans whose `!` starts the body or follows whitespace; a
/// fenced block's opener (```` ```! ````) is not one.
fn inline(body: &str) -> Vec<Block> {
    scan(body, "!`", "`", |body, start| {
        body[..start]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
            && !body[start + 2..].starts_with('`')
    })
}

/// Every `open … close` span of `body` whose start `opens` accepts, with a
/// non-empty command between the markers.
fn scan(body: &str, open: &str, close: &str, opens: impl Fn(&str, usize) -> bool) -> Vec<Block> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = body[from..].find(open) {
        let start = from + at;
        let inner = start + open.len();
        if !opens(body, start) {
            from = inner;
            continue;
        }
        let Some(len) = body[inner..].find(close) else {
            break;
        };
        let end = inner + len + close.len();
        let command = body[inner..inner + len].trim().to_string();
        if !command.is_empty() {
            out.push(Block {
                start,
                end,
                command,
            });
        }
        from = end;
    }
    out
}

/// `body` with each block replaced by its command's output. Each command is
/// a `Bash` call nested under the skill's call, run one after another in
/// the body's order; a refused or failed command leaves its result text in
/// brackets, so the model sees why.
pub(crate) async fn expand(body: &str, skill: &str, ctx: &ToolContext) -> String {
    let found = blocks(body);
    if found.is_empty() {
        return body.to_string();
    }
    // One nested batch per block: a failing command must not cancel the
    // others (a batch's failed shell call stops its siblings).
    let mut outputs = Vec::with_capacity(found.len());
    for (i, b) in found.iter().enumerate() {
        let call = ToolUse::new(
            format!("{}-skill-shell-{i}", ctx.call_id),
            "Bash",
            json!({
                "command": b.command,
                "description": format!("Context for skill {skill}"),
            }),
        );
        let text = match run_nested(ctx, NestedOptions::default(), vec![call]).await {
            Ok(results) => match results.first() {
                Some(r) if !r.is_error => r.text().trim_end_matches('\n').to_string(),
                Some(r) => format!(
                    "[shell command not run: {}]",
                    r.text().trim_end_matches('\n')
                ),
                None => "[shell command not run: no result]".to_string(),
            },
            Err(e) => format!("[shell command not run: {e}]"),
        };
        outputs.push(text);
    }
    replace(body, &found, &outputs)
}

/// `body` with `blocks[i]` replaced by `with[i]`.
pub(crate) fn replace(body: &str, blocks: &[Block], with: &[String]) -> String {
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for (b, text) in blocks.iter().zip(with) {
        out.push_str(&body[at..b.start]);
        out.push_str(text);
        at = b.end;
    }
    out.push_str(&body[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(body: &str) -> Vec<String> {
        blocks(body).into_iter().map(|b| b.command).collect()
    }

    #[test]
    fn finds_blocks_where_claude_code_does() {
        assert_eq!(
            commands(
                "## Status\n- branch: !`git branch --show-current`\n- diff: !`git diff HEAD`\n"
            ),
            ["git branch --show-current", "git diff HEAD"]
        );
        assert_eq!(commands("!`pwd` at start"), ["pwd"]);
        // Not after a word character, not empty, not unclosed.
        assert!(commands("wow!`pwd` and !`` and !`open").is_empty());
        assert_eq!(
            commands("Before\n```!\ngit status\ngit log -1\n```\nafter !`date`"),
            ["git status\ngit log -1", "date"]
        );
        // An inline marker inside a fenced block belongs to the block.
        assert_eq!(commands("```!\necho !`x`\n```"), ["echo !`x`"]);
        // Plain code spans and fences are not shell blocks.
        assert!(commands("run `git status` or\n```bash\nls\n```").is_empty());
    }

    #[test]
    fn replaces_each_block_with_its_output() {
        let body = "a !`one` b\n```!\ntwo\n```\nc";
        let found = blocks(body);
        let out = replace(body, &found, &["1".into(), "2".into()]);
        assert_eq!(out, "a 1 b\n2\nc");
    }
}
