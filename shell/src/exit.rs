//! Which exit codes are failures.
//!
//! Some programs answer a question with their exit status: `grep` exits 1
//! when nothing matched, `diff` when the files differ, `test` when the
//! condition is false. Treating those as failures would cancel a model's
//! sibling calls (SPEC §8) because a search found nothing. Only the
//! commands that can have produced the line's status count: the last
//! command of a pipeline, the right side of `||`, and either side of `&&`
//! (a failing left side short-circuits and its status is the line's).

use tree_sitter::Node;

use super::words::word;

/// Commands whose exit status 1 means "no"/"none", not "failed".
fn answers_with_one(words: &[super::syntax::Word]) -> bool {
    let fixed: Vec<Option<&str>> = words.iter().map(|w| w.fixed()).collect();
    match fixed.first().copied().flatten() {
        Some("grep" | "egrep" | "fgrep" | "rg" | "find" | "diff" | "cmp" | "test" | "[" | "[[") => {
            true
        }
        // `git diff --quiet` / `--exit-code` report differences with 1.
        Some("git") => {
            fixed.get(1).copied().flatten() == Some("diff")
                && fixed
                    .iter()
                    .any(|w| matches!(w, Some("--quiet" | "--exit-code")))
        }
        _ => false,
    }
}

/// Whether a line exiting with `code` failed. Unparseable lines and
/// negative codes (killed by a signal) always fail when non-zero.
pub(crate) fn is_error(root: Option<Node<'_>>, src: &str, code: i32) -> bool {
    if code == 0 {
        return false;
    }
    if code != 1 {
        return true;
    }
    let Some(root) = root else {
        return true;
    };
    let mut deciders = Vec::new();
    if !status_commands(root, src, &mut deciders, 0) || deciders.is_empty() {
        return true;
    }
    !deciders.iter().all(|words| answers_with_one(words))
}

/// Collects the commands whose status may be the status of `node`; false
/// when that is unknown (loops, conditionals, negation).
fn status_commands(
    node: Node<'_>,
    src: &str,
    out: &mut Vec<Vec<super::syntax::Word>>,
    depth: usize,
) -> bool {
    if depth > 100 {
        return false;
    }
    match node.kind() {
        "program" | "subshell" | "compound_statement" => match last_statement(node) {
            Some(last) => status_commands(last, src, out, depth + 1),
            None => false,
        },
        "redirected_statement" => match node.child_by_field_name("body") {
            Some(body) => status_commands(body, src, out, depth + 1),
            None => false,
        },
        "pipeline" => match last_statement(node) {
            Some(last) => status_commands(last, src, out, depth + 1),
            None => false,
        },
        "list" => {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            let op = children.iter().find(|c| !c.is_named()).map(|c| c.kind());
            let named: Vec<Node<'_>> = children.iter().copied().filter(|c| c.is_named()).collect();
            match (op, named.as_slice()) {
                (Some("&&"), [left, right]) => {
                    status_commands(*left, src, out, depth + 1)
                        && status_commands(*right, src, out, depth + 1)
                }
                (Some("||"), [_, right]) => status_commands(*right, src, out, depth + 1),
                _ => false,
            }
        }
        "command" => {
            let mut cursor = node.walk();
            let words = node
                .children(&mut cursor)
                .enumerate()
                .filter(|(i, _)| {
                    u32::try_from(*i)
                        .ok()
                        .and_then(|i| node.field_name_for_child(i))
                        .is_some_and(|f| f == "name" || f == "argument")
                })
                .map(|(_, c)| word(c, src))
                .collect();
            out.push(words);
            true
        }
        "test_command" => {
            out.push(vec![super::syntax::Word::plain("[[")]);
            true
        }
        _ => false,
    }
}

/// The last statement of a sequence, skipping comments and a trailing `;`.
fn last_statement(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let last = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment" && !c.kind().ends_with("redirect"))
        .last();
    last
}
