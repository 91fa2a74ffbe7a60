//! Places where bash evaluates the *value* of a variable as code.
//!
//! Arithmetic evaluation (`$(( ))`, `(( ))`, `$[ ]`, `for (( ))`, array
//! subscripts, substring offsets, the `-eq` family inside `[[ ]]`) treats a
//! name as a variable whose value is evaluated again, and an evaluated
//! `a[$(cmd)]` runs `cmd`. Indirect expansion (`${!x}`) and `test -v` look
//! up a name *given by a value*, subscript included, and `${x@P}` expands a
//! value as a prompt, command substitutions included. So
//! `true 'a[$(touch F)]'; [[ $_ -eq 1 ]]` runs `touch`.
//!
//! The value may come from anywhere: `$_`, a `for` or `read` variable, an
//! earlier assignment, the environment, a command's output. Tracking values
//! is not worth the risk, so the rule is about the context, not the value:
//! in a context that evaluates, only literal numbers are harmless. Anything
//! else (a name, an expansion, a substitution) makes the line not read-only.

use tree_sitter::Node;

use super::words::{text, word};

/// Why a line is not read-only, for [`super::Construct::Unsupported`].
pub(crate) const EVALUATED_VALUE: &str =
    "a variable or command output reaches a place where bash evaluates it as code (arithmetic, subscript, substring offset, `[[ -eq ]]`, `${!x}`, `${x@P}`, `-v`)";

/// Node kinds that are harmless inside arithmetic: literal numbers and
/// operators. A name, expansion or substitution is not.
const ARITH_OK: &[&str] = &[
    "number",
    "binary_expression",
    "unary_expression",
    "ternary_expression",
    "parenthesized_expression",
    "arithmetic_expansion",
    "comment",
];

/// Whether `node`, found inside arithmetic, is harmless there.
pub(crate) fn arith_node_ok(node: Node<'_>, src: &str) -> bool {
    if ARITH_OK.contains(&node.kind()) {
        return true;
    }
    // The grammar reads some numbers (`1` in `for ((;1;))`) as words.
    node.kind() == "word" && is_integer(text(node, src))
}

/// An array subscript's index: only a literal number, `@` or `*` is
/// harmless (the index of an indexed array is arithmetic).
pub(crate) fn index_ok(node: Node<'_>, src: &str) -> bool {
    let Some(index) = node.child_by_field_name("index") else {
        return true;
    };
    let t = text(index, src);
    matches!(t, "@" | "*") || is_integer(t)
}

/// Problems in the operator part of `${...}`, which the grammar does not
/// keep as nodes (`${x@P}`, `${x:off:len}` lose their operator).
pub(crate) fn expansion_ok(node: Node<'_>, src: &str) -> bool {
    let t = text(node, src);
    let Some(body) = t.strip_prefix("${").and_then(|b| b.strip_suffix('}')) else {
        return false;
    };
    if let Some(rest) = body.strip_prefix('!') {
        // `${!prefix*}`, `${!prefix@}`, `${!name[@]}` list names or keys;
        // every other `${!x...}` is indirection through a value.
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let tail = &rest[name_len..];
        return name_len > 0 && matches!(tail, "*" | "@" | "[@]" | "[*]");
    }
    let body = body
        .strip_prefix('#')
        .filter(|b| !b.is_empty())
        .unwrap_or(body);
    let name_len = if body.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len())
    } else if body.starts_with(|c: char| c.is_ascii_digit()) {
        body.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len())
    } else {
        body.chars().next().map_or(0, char::len_utf8)
    };
    let mut rest = &body[name_len..];
    if rest.starts_with('[') {
        // The subscript node is checked on its own; skip it here.
        match matching_bracket(rest) {
            Some(end) => rest = &rest[end + 1..],
            None => return false,
        }
    }
    if let Some(op) = rest.strip_prefix('@') {
        return !op.starts_with('P');
    }
    if let Some(offsets) = rest.strip_prefix(':') {
        if offsets.starts_with(['-', '=', '?', '+']) {
            return true;
        }
        // `${x:offset:length}`: both are arithmetic.
        return offsets
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ' ' | ':' | '-' | '+' | '(' | ')'));
    }
    true
}

fn matching_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Inside `[[ ]]`: the operands of `-eq`, `-ne`, `-lt`, `-le`, `-gt`, `-ge`
/// are arithmetic, and `-v`/`-R` take a name whose subscript is evaluated.
pub(crate) fn test_command_ok(node: Node<'_>, src: &str, depth: usize) -> bool {
    if depth > 200 {
        return false;
    }
    match node.kind() {
        "binary_expression" => {
            let op = node
                .child_by_field_name("operator")
                .map(|o| text(o, src))
                .unwrap_or("");
            if matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") {
                let literal = |field| {
                    node.child_by_field_name(field)
                        .is_some_and(|n| word(n, src).fixed().is_some_and(is_integer))
                };
                if !(literal("left") && literal("right")) {
                    return false;
                }
            }
        }
        "unary_expression" => {
            let op = node.child(0).map(|o| text(o, src)).unwrap_or("");
            if matches!(op, "-v" | "-R") {
                let mut cursor = node.walk();
                let operand = node.named_children(&mut cursor).last();
                let plain = operand
                    .filter(|o| o.kind() != "test_operator")
                    .and_then(|o| word(o, src).fixed().map(is_identifier));
                if plain != Some(true) {
                    return false;
                }
            }
        }
        _ => {}
    }
    let mut cursor = node.walk();
    let ok = node
        .named_children(&mut cursor)
        .all(|c| test_command_ok(c, src, depth + 1));
    ok
}

pub(crate) fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

pub(crate) fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `test ARGS` / `[ ARGS ]` (`args` without the closing `]`): harmless
/// unless `-v`/`-R` reach a name with a subscript. A variable that could
/// become `-v` (or split into `-v` and a name) is allowed only where the
/// POSIX argument-count rules make it an operand, never an operator.
pub(crate) fn test_args_ok(args: &[super::syntax::Word]) -> bool {
    if args.iter().any(|a| a.may_split()) {
        return false;
    }
    let fixed: Vec<Option<&str>> = args.iter().map(|a| a.fixed()).collect();
    for (i, arg) in fixed.iter().enumerate() {
        if matches!(arg, Some("-v" | "-R")) {
            let name = fixed.get(i + 1).copied().flatten();
            if !name.is_some_and(is_identifier) {
                return false;
            }
        }
    }
    if fixed.iter().all(Option::is_some) {
        return true;
    }
    let unary = |w: Option<&str>| w.is_some_and(|w| w != "-v" && w != "-R");
    let binary = |w: Option<&str>| {
        matches!(
            w,
            Some(
                "=" | "=="
                    | "!="
                    | "<"
                    | ">"
                    | "-eq"
                    | "-ne"
                    | "-lt"
                    | "-le"
                    | "-gt"
                    | "-ge"
                    | "-nt"
                    | "-ot"
                    | "-ef"
                    | "-a"
                    | "-o"
            )
        )
    };
    match fixed.as_slice() {
        [_] => true,
        [op, _] => unary(*op),
        [_, op, _] => binary(*op),
        [Some("!"), _, op, _] => binary(*op),
        _ => false,
    }
}
