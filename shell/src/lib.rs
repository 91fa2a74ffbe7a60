//! Understanding shell command lines (the `baton-shell` crate).
//!
//! Usable on its own: it depends on tree-sitter's bash grammar only, and
//! `baton_engine::shell` re-exports it unchanged.
//!
//! Several parts of Baton must know what a `Bash` call will do before it
//! runs: the scheduler (may it run beside others?), the permission rules
//! (does `Bash(git push:*)` match any part of `make && git push`?), and
//! sibling cancellation (is exit 1 of this line a failure?). Guessing with
//! regexes on the raw string is how hosts get fooled by `echo $(rm -rf x)`,
//! so this crate parses with tree-sitter's bash grammar and answers from
//! the syntax tree. Every answer fails closed: when the line cannot be
//! parsed or uses syntax the walk does not know, it is not read-only and a
//! non-zero exit is a failure.

mod allowlist;
mod evaluated;
mod exit;
mod expand;
mod flags;
mod git;
mod inspect;
mod options;
mod printf;
mod programs;
mod quirks;
mod readonly;
mod sed_script;
mod syntax;
mod walk;
mod words;
pub mod wrappers;

#[cfg(test)]
mod tests;

use std::cell::RefCell;

pub use expand::{expand_args, expand_braces};
pub use flags::{follows_links, may_follow_links, walks_contents};
pub use syntax::{Construct, Placement, Redirect, Script, SimpleCommand, Word};

/// Longer lines are not parsed (and so are never read-only): parsing is
/// linear, but nobody needs the classifier's opinion on a megabyte.
pub const MAX_PARSED_LEN: usize = 1 << 20;

/// Why a line could not be turned into commands.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The line is empty or blank: there is no command to judge.
    #[error("the command is empty")]
    Empty,
    /// Longer than [`MAX_PARSED_LEN`] (the length in bytes).
    #[error("the command is too long to analyse ({0} bytes)")]
    TooLong(usize),
    /// tree-sitter found an error; the byte offset of the first error node.
    #[error("the command is not valid bash syntax near byte {0}")]
    Syntax(usize),
    /// tree-sitter returned no tree at all.
    #[error("the bash parser failed")]
    Parser,
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

fn with_tree<R>(src: &str, f: impl FnOnce(Result<tree_sitter::Node<'_>, ParseError>) -> R) -> R {
    if src.len() > MAX_PARSED_LEN {
        return f(Err(ParseError::TooLong(src.len())));
    }
    if let Some(pos) = src.find('\0') {
        return f(Err(ParseError::Syntax(pos)));
    }
    let ascii = ascii_stand_in(src);
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(ascii.as_bytes(), None)
    });
    let Some(tree) = tree else {
        return f(Err(ParseError::Parser));
    };
    let root = tree.root_node();
    if root.has_error() {
        return f(Err(ParseError::Syntax(first_error(root))));
    }
    f(Ok(root))
}

/// `src` with every non-ASCII character replaced by as many `a` bytes as it
/// has, so byte offsets (and thus every text taken from the original) stay
/// the same. tree-sitter-bash 0.25's lexer crashes the process on some
/// characters above U+DFFFF after `{`; for bash, non-ASCII characters are
/// ordinary word characters, exactly like a letter.
fn ascii_stand_in(src: &str) -> std::borrow::Cow<'_, str> {
    if src.is_ascii() {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(out)
}

fn first_error(node: tree_sitter::Node<'_>) -> usize {
    if node.is_error() || node.is_missing() {
        return node.start_byte();
    }
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .find(|c| c.has_error())
        .map(first_error);
    found.unwrap_or(node.start_byte())
}

/// Parses `src` into its simple commands, redirections and notable
/// constructs.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    if src.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    with_tree(src, |root| root.map(|root| walk::script(root, src)))
}

/// Every simple command of `src`, in source order, including those inside
/// lists, pipelines, subshells, loops and substitutions.
pub fn split_commands(src: &str) -> Result<Vec<SimpleCommand>, ParseError> {
    parse(src).map(|script| {
        // Commands made only of redirections (`{ ...; } < f`) stand for
        // redirections of compound commands; they run nothing.
        script
            .into_commands()
            .into_iter()
            .filter(|c| !c.words().is_empty() || !c.assignments().is_empty())
            .collect()
    })
}

/// Whether running `src` can have no side effect (see the `readonly`
/// module for the rules). Unparseable lines are not read-only.
pub fn is_read_only(src: &str) -> bool {
    parse(src).is_ok_and(|script| readonly::script_is_read_only(&script))
}

/// Whether `src` changes the shell's working directory (`cd`, `pushd`,
/// `popd`) anywhere. Such a line should not run beside others even when it
/// is read-only, so that its new directory can carry over to later calls.
/// Whether `cmd` changes the shell's directory (`cd`, `pushd`, `popd`).
pub fn is_directory_change(cmd: &SimpleCommand) -> bool {
    readonly::is_cd(cmd)
}

/// Whether `script` combines a directory change with `git`; such a line is
/// never read-only, and none of its parts may pass as read-only on its own.
pub fn cd_combined_with_git(script: &Script) -> bool {
    readonly::cd_combined_with_git(script)
}

/// Whether any command of `src` changes the working directory (`cd`,
/// `pushd`, `popd`); a line that cannot be parsed counts as changing it.
pub fn changes_directory(src: &str) -> bool {
    match parse(src) {
        Ok(script) => script.commands().iter().any(readonly::is_cd),
        Err(_) => true,
    }
}

/// Whether exit status `code` of `src` is a failure, with the exit-code
/// semantics of SPEC §8: status 1 of `grep`, `rg`, `find`, `diff`, `cmp`,
/// `test`/`[`/`[[` (when that command decided the line's status) is an
/// answer, not an error.
pub fn exit_is_error(src: &str, code: i32) -> bool {
    if code == 0 {
        return false;
    }
    with_tree(src, |root| exit::is_error(root.ok(), src, code))
}
