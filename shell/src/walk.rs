//! From the tree-sitter tree to a [`Script`].
//!
//! The walk is fail-closed: a node kind it does not know is recorded as
//! [`Construct::Unsupported`], so a grammar upgrade that adds syntax can only
//! make fewer lines read-only, never more.

use tree_sitter::Node;

use super::evaluated::{self, EVALUATED_VALUE};
use super::quirks;
use super::syntax::{Construct, Placement, Redirect, Script, SimpleCommand, Word};
use super::words::{text, word};

/// Deeper nesting than this is not followed (and is not read-only); it
/// also keeps the recursion far from the stack limit.
const MAX_DEPTH: usize = 200;

/// Tokens that assign inside arithmetic (`$((x=1))`, `((i++))`).
const ARITH_ASSIGN: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", "&=", "^=", "|=", "++", "--",
];

/// Node kinds that are only containers: their children are walked as they are.
const STRUCTURAL: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "subshell",
    "negated_command",
    "if_statement",
    "elif_clause",
    "else_clause",
    "while_statement",
    "do_group",
    "case_statement",
    "case_item",
    "word",
    "string",
    "raw_string",
    "string_content",
    "ansi_c_string",
    "concatenation",
    "simple_expansion",
    "variable_name",
    "special_variable_name",
    "number",
    "file_descriptor",
    "comment",
    "heredoc_body",
    "heredoc_content",
    "heredoc_start",
    "heredoc_end",
    "binary_expression",
    "unary_expression",
    "postfix_expression",
    "ternary_expression",
    "parenthesized_expression",
    "test_operator",
    "regex",
    "extglob_pattern",
    "translated_string",
    "brace_expression",
    "array",
    "subscript",
    "command_name",
];

pub(crate) fn script(root: Node<'_>, src: &str) -> Script {
    let mut walker = Walker {
        src,
        script: Script::default(),
    };
    walker.visit(root, Placement::Direct, Mode::default(), 0);
    if quirks::joining_continuation(root, src) {
        walker.construct(Construct::Unsupported(
            "a line continuation inside a word".into(),
        ));
    }
    walker.script
}

/// What the surrounding syntax does with text.
#[derive(Clone, Copy, Debug, Default)]
struct Mode {
    /// Inside arithmetic: `=`, `++` and friends assign.
    arith: bool,
    /// Somewhere bash evaluates text as an expression (arithmetic, array
    /// subscripts, `${...}` operands, `[[ ]]`). There, even quoted text can
    /// run commands: `[[ 'a[$(cmd)]' -eq 1 ]]` and `${x:'a[$(cmd)]'}` run
    /// `cmd`, because bash expands subscripts found in the evaluated text.
    evaluated: bool,
}

/// Quoted text that would be code if evaluated: a `$(`, a backquote, or
/// ANSI-C quoting (whose escapes can spell either).
fn hides_code(node: Node<'_>, src: &str) -> bool {
    if matches!(node.kind(), "ansi_c_string" | "translated_string") {
        return true;
    }
    match word(node, src).literal() {
        Some(text) => text.contains("$(") || text.contains('`') || text.contains("$["),
        // Not literal: its substitutions are real and walked as commands.
        None => false,
    }
}

struct Walker<'s> {
    src: &'s str,
    script: Script,
}

impl Walker<'_> {
    fn visit(&mut self, node: Node<'_>, placement: Placement, mode: Mode, depth: usize) {
        if depth > MAX_DEPTH {
            if !self.script.constructs.contains(&Construct::TooDeep) {
                self.script.constructs.push(Construct::TooDeep);
            }
            return;
        }
        if !node.is_named() {
            if mode.arith && ARITH_ASSIGN.contains(&node.kind()) {
                self.construct(Construct::Assignment("arithmetic".into()));
            }
            return;
        }
        if mode.arith && !evaluated::arith_node_ok(node, self.src) {
            self.construct(Construct::Unsupported(EVALUATED_VALUE.into()));
        }
        let mut mode = mode;
        let mut placement = placement;
        match node.kind() {
            "command" => return self.command(node, &[], placement, depth),
            "redirected_statement" => return self.redirected(node, placement, depth),
            "test_command" => {
                // The grammar reads `[ ... ]` like `[[ ... ]]`, but `[` is
                // the `test` builtin: its words are split and globbed, and
                // it evaluates no arithmetic.
                if node.child(0).is_some_and(|k| k.kind() == "[") {
                    return self.single_bracket(node, placement, depth);
                }
                if !evaluated::test_command_ok(node, self.src, 0) {
                    self.construct(Construct::Unsupported(EVALUATED_VALUE.into()));
                }
                mode.evaluated = true;
                return self.keyword_command(node, "[[", placement, mode, depth);
            }
            "declaration_command" | "unset_command" => {
                let keyword = node
                    .child(0)
                    .map(|k| text(k, self.src).to_string())
                    .unwrap_or_default();
                return self.keyword_command(node, &keyword, placement, mode, depth);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                if node.kind() == "heredoc_redirect" && !quirks::heredoc_agrees(node, self.src) {
                    self.construct(Construct::Unsupported(
                        "a here-document delimiter bash may read differently".into(),
                    ));
                }
                let redirect = self.redirect(node);
                self.script.redirects.push(redirect.clone());
                // A redirection that belongs to no simple command (`$(<f)`)
                // still opens its file: it becomes a command of its own,
                // with no words, so every check of commands sees it.
                let owner = node.parent().map(|p| p.kind());
                if !matches!(owner, Some("command" | "redirected_statement")) {
                    self.redirect_only(node, vec![redirect], placement);
                }
            }
            "variable_assignment" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| text(n, self.src).to_string())
                    .unwrap_or_default();
                self.construct(Construct::Assignment(name));
            }
            "variable_assignments" => {}
            "function_definition" => self.construct(Construct::FunctionDefinition),
            "for_statement" => {
                if let Some(var) = node.child_by_field_name("variable") {
                    let name = text(var, self.src);
                    // Lower-case loop variables cannot name anything bash or
                    // common programs read from the environment.
                    // Names starting with `__` are kept for Baton's own
                    // wrapper (`__baton_*`) and for shell internals.
                    if name.starts_with("__")
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    {
                        self.construct(Construct::Assignment(name.to_string()));
                    }
                }
            }
            "c_style_for_statement" => {
                // The header is arithmetic; the body is ordinary commands.
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    let body = matches!(child.kind(), "do_group" | "compound_statement");
                    let child_mode = if body {
                        mode
                    } else {
                        Mode {
                            arith: true,
                            evaluated: true,
                        }
                    };
                    self.visit(child, placement, child_mode, depth + 1);
                }
                return;
            }
            "arithmetic_expansion" => {
                mode.arith = true;
                mode.evaluated = true;
            }
            "subscript" => {
                if !evaluated::index_ok(node, self.src) {
                    self.construct(Construct::Unsupported(EVALUATED_VALUE.into()));
                }
                mode.evaluated = true;
            }
            "compound_statement" => {
                if node.child(0).is_some_and(|c| c.kind() == "((") {
                    mode.arith = true;
                    mode.evaluated = true;
                }
            }
            "expansion" => {
                if !evaluated::expansion_ok(node, self.src) {
                    self.construct(Construct::Unsupported(EVALUATED_VALUE.into()));
                }
                mode.evaluated = true;
                if let Some(op) = node.child_by_field_name("operator") {
                    if matches!(op.kind(), "=" | ":=") {
                        self.construct(Construct::Assignment(text(node, self.src).to_string()));
                    }
                }
            }
            "command_substitution" | "process_substitution" => {
                if quirks::nested_backquotes(node, self.src) {
                    self.construct(Construct::Unsupported("escapes inside backquotes".into()));
                }
                placement = Placement::Substitution;
            }
            "raw_string" | "string" | "ansi_c_string" | "translated_string" | "word"
            | "concatenation"
                if mode.evaluated && hides_code(node, self.src) =>
            {
                self.construct(Construct::Unsupported(
                    "quoted code where bash evaluates text (subscript, arithmetic, [[ ]])".into(),
                ));
            }
            kind if STRUCTURAL.contains(&kind) => {}
            other => self.construct(Construct::Unsupported(other.to_string())),
        }
        self.children(node, placement, mode, depth);
    }

    fn children(&mut self, node: Node<'_>, placement: Placement, mode: Mode, depth: usize) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, placement, mode, depth + 1);
        }
    }

    fn construct(&mut self, construct: Construct) {
        if !self.script.constructs.contains(&construct) {
            self.script.constructs.push(construct);
        }
    }

    /// `body redirect...` where the redirections apply to `body`.
    fn redirected(&mut self, node: Node<'_>, placement: Placement, depth: usize) {
        let body = node.child_by_field_name("body");
        let mut outer = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if Some(child) == body {
                continue;
            }
            if is_redirect(child.kind()) {
                outer.push(self.redirect(child));
            }
            self.visit(child, placement, Mode::default(), depth + 1);
        }
        match body {
            Some(b) if b.kind() == "command" => self.command(b, &outer, placement, depth + 1),
            Some(b) => {
                // `{ ...; } < f`, `while ...; done < f`, `if ...; fi > f`:
                // the redirections apply to the whole compound command.
                // They are recorded as a command of their own so that the
                // reach check and the write check see their targets.
                self.redirect_only(node, outer, placement);
                self.visit(b, placement, Mode::default(), depth + 1);
            }
            None => self.redirect_only(node, outer, placement),
        }
    }

    /// A command made only of redirections, standing for redirections
    /// that belong to a compound command or to no command at all.
    fn redirect_only(&mut self, node: Node<'_>, redirects: Vec<Redirect>, placement: Placement) {
        if redirects.is_empty() {
            return;
        }
        let span = node.start_byte()..node.end_byte();
        self.script.commands.push(SimpleCommand {
            text: text(node, self.src).to_string(),
            span,
            assignments: Vec::new(),
            words: Vec::new(),
            redirects,
            placement,
        });
    }

    fn command(&mut self, node: Node<'_>, outer: &[Redirect], placement: Placement, depth: usize) {
        if quirks::newline_inside_command(node, self.src) {
            self.construct(Construct::Unsupported(
                "a newline the grammar does not read as the end of a command".into(),
            ));
        }
        let index = self.script.commands.len();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            let field = u32::try_from(i)
                .ok()
                .and_then(|i| node.field_name_for_child(i));
            match (field, child.kind()) {
                (Some("name" | "argument"), _) => words.push(word(child, self.src)),
                (_, kind) if is_redirect(kind) => redirects.push(self.redirect(child)),
                (_, "variable_assignment") => {
                    assignments.push(text(child, self.src).to_string());
                    // A prefix assignment only reaches this command; the
                    // classifier judges it there. Its value may still run
                    // something.
                    if let Some(value) = child.child_by_field_name("value") {
                        self.visit(value, placement, Mode::default(), depth + 1);
                    }
                    continue;
                }
                _ => {}
            }
            self.visit(child, placement, Mode::default(), depth + 1);
        }
        strip_keywords(&mut words);
        redirects.extend_from_slice(outer);
        let end = outer_end(node, outer, self.src);
        let span = node.start_byte()..end;
        let cmd = SimpleCommand {
            text: self.src.get(span.clone()).unwrap_or("").to_string(),
            span,
            assignments,
            words,
            redirects,
            placement,
        };
        self.script.commands.insert(index, cmd);
    }

    /// `[[ ... ]]`, `export ...`, `unset ...`: recorded as a command named
    /// after the keyword, so allowlists and permission rules see them.
    fn keyword_command(
        &mut self,
        node: Node<'_>,
        keyword: &str,
        placement: Placement,
        mode: Mode,
        depth: usize,
    ) {
        let index = self.script.commands.len();
        let mut words = vec![Word::plain(keyword)];
        if keyword != "[[" {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                words.push(word(child, self.src));
            }
        }
        self.children(node, placement, mode, depth);
        self.record_at(node, index, words, placement);
    }

    /// `[ args ]`: recorded as the command `[` with the words bash passes,
    /// read by parsing the inside again as the arguments of a command.
    fn single_bracket(&mut self, node: Node<'_>, placement: Placement, depth: usize) {
        let index = self.script.commands.len();
        let count = node.child_count();
        let inner = match (
            node.child(0),
            count.checked_sub(1).and_then(|i| node.child(i)),
        ) {
            (Some(open), Some(close))
                if close.kind() == "]" && open.end_byte() <= close.start_byte() =>
            {
                self.src
                    .get(open.end_byte()..close.start_byte())
                    .unwrap_or("")
            }
            _ => {
                self.construct(Construct::Unsupported("an unterminated `[`".into()));
                return;
            }
        };
        let mut words = vec![Word::plain("[")];
        match super::parse(&format!("test {inner}")).map(super::Script::into_commands) {
            Ok(commands) if commands.first().and_then(SimpleCommand::name) == Some("test") => {
                words.extend(commands[0].args().iter().cloned());
            }
            _ if inner.trim().is_empty() => {}
            _ => self.construct(Construct::Unsupported(
                "a `[` whose words are unclear".into(),
            )),
        }
        words.push(Word::plain("]"));
        self.children(node, placement, Mode::default(), depth);
        self.record_at(node, index, words, placement);
    }

    /// Records `node` as the command `words` (a test construct read as the
    /// command bash runs for it) at `index`, before the commands found
    /// inside it.
    fn record_at(&mut self, node: Node<'_>, index: usize, words: Vec<Word>, placement: Placement) {
        let cmd = SimpleCommand {
            text: text(node, self.src).to_string(),
            span: node.start_byte()..node.end_byte(),
            assignments: Vec::new(),
            words,
            redirects: Vec::new(),
            placement,
        };
        self.script.commands.insert(index, cmd);
    }

    fn redirect(&self, node: Node<'_>) -> Redirect {
        let fd = node
            .child_by_field_name("descriptor")
            .and_then(|d| text(d, self.src).parse().ok());
        let mut op = String::new();
        let mut target = None;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            let field = u32::try_from(i)
                .ok()
                .and_then(|i| node.field_name_for_child(i));
            if !child.is_named() && op.is_empty() {
                op = child.kind().to_string();
            } else if target.is_none()
                && (field == Some("destination")
                    || (node.kind() == "herestring_redirect" && child.is_named()))
            {
                target = Some(word(child, self.src));
            }
        }
        Redirect { fd, op, target }
    }
}

/// `time [-p] cmd` and `coproc cmd` run `cmd`; the grammar reads the
/// keyword as the command's name. Rules and the allowlist must see `cmd`.
fn strip_keywords(words: &mut Vec<Word>) {
    loop {
        match words.first().and_then(Word::fixed) {
            Some("time") => {
                words.remove(0);
                if words.first().and_then(Word::fixed) == Some("-p") {
                    words.remove(0);
                }
            }
            Some("coproc") => {
                words.remove(0);
            }
            _ => return,
        }
    }
}

fn is_redirect(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

/// A command's text runs to the end of its last redirection.
fn outer_end(node: Node<'_>, outer: &[Redirect], src: &str) -> usize {
    if outer.is_empty() {
        return node.end_byte();
    }
    node.parent()
        .filter(|p| p.kind() == "redirected_statement")
        .map(|p| p.end_byte())
        .filter(|end| *end <= src.len())
        .unwrap_or_else(|| node.end_byte())
}
