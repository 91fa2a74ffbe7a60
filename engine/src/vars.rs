//! The one `${VAR}` expander for text a user writes into configuration:
//! MCP server entries (`command`, `args`, `env`, `url`, `headers`,
//! `headersHelper`, `oauth`), HTTP hooks' header values and exec-form hook
//! commands. They all follow Claude Code's grammar, so they share this code.
//!
//! # Grammar
//! - `${NAME}` is the value of `NAME`. A name is an ASCII letter or `_`
//!   followed by letters, digits and `_`.
//! - `${NAME:-default}` is the value of `NAME`, or `default` when `NAME` is
//!   unset. A variable that is set but empty stays empty (unlike the
//!   shell's `:-`, and as Claude Code does). The default is plain text up
//!   to the first `}`; it is not expanded itself.
//! - A variable that is unset and has no default is [`VarsError::Unset`]
//!   from [`expand`]; [`expand_or`] instead leaves it empty or as written
//!   (see [`Unset`]), for the places where Claude Code does that.
//! - `${` with no `}` after it is kept as written, with the rest of the
//!   text; so is `${...}` whose inside is not a name (`${ x }`, `${1}`).
//! - Braces do not nest: in `${A:-${B}}` the default of `A` is `${B` and
//!   the last `}` is plain text.
//! - `$NAME` without braces is plain text, except where
//!   [`Options::bare_names`] is on (HTTP hooks' headers, where Claude Code
//!   documents `$VAR_NAME`); there it is the value of the longest name that
//!   follows. A `$` followed by anything else is always plain text.
//! - Values are inserted as they are; they are never expanded again.
//!
//! Text without `$` comes back unchanged. The lookup decides what a
//! variable is (the process environment, the settings' `env` block, an
//! allow-list, a fixed placeholder); this module only reads the text.

use std::convert::Infallible;

/// Why a text could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VarsError {
    /// `${NAME}` named a variable the lookup does not know, with no default.
    #[error(
        "environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
    )]
    Unset {
        /// The variable's name.
        name: String,
    },
}

/// What [`expand_or`] puts in place of an unset variable without default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unset {
    /// Nothing: the reference disappears (HTTP hooks' headers, where a
    /// variable outside `allowedEnvVars` must not leak and must not fail).
    Empty,
    /// The reference as written (exec-form hooks, where only the
    /// placeholders Baton knows are replaced).
    Keep,
}

/// Which forms count as references.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `$NAME` without braces is a reference too.
    pub bare_names: bool,
}

/// `text` with every reference replaced by `lookup`'s value; an unset
/// variable without default is an error.
pub fn expand(
    text: &str,
    options: Options,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, VarsError> {
    scan(text, options, lookup, |name, _| {
        Err(VarsError::Unset {
            name: name.to_string(),
        })
    })
}

/// `text` with every reference replaced by `lookup`'s value; an unset
/// variable without default becomes what `unset` says. Never fails.
pub fn expand_or(
    text: &str,
    options: Options,
    unset: Unset,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> String {
    let Ok(out) = scan(text, options, lookup, |_, written| {
        Ok::<_, Infallible>(match unset {
            Unset::Empty => "",
            Unset::Keep => written,
        })
    });
    out
}

/// The one reader of the grammar. `on_unset(name, written)` says what an
/// unset variable without default becomes; `written` is the reference as
/// it stands in the text.
fn scan<'t, E>(
    text: &'t str,
    options: Options,
    lookup: &dyn Fn(&str) -> Option<String>,
    on_unset: impl Fn(&str, &'t str) -> Result<&'t str, E>,
) -> Result<String, E> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(reference) = reference(tail, options) else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let written = &tail[..reference.len];
        match (lookup(reference.name), reference.default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => out.push_str(on_unset(reference.name, written)?),
        }
        rest = &tail[reference.len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// One reference at the start of a text.
struct Reference<'t> {
    name: &'t str,
    default: Option<&'t str>,
    /// Bytes the reference takes, `$` included.
    len: usize,
}

/// The reference `text` (which starts with `$`) opens with, if any.
fn reference(text: &str, options: Options) -> Option<Reference<'_>> {
    let after = &text[1..];
    if let Some(inner) = after.strip_prefix('{') {
        let end = inner.find('}')?;
        let body = &inner[..end];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        return is_name(name).then_some(Reference {
            name,
            default,
            len: end + 3,
        });
    }
    if !options.bare_names {
        return None;
    }
    let end = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = &after[..end];
    is_name(name).then_some(Reference {
        name,
        default: None,
        len: end + 1,
    })
}

/// An ASCII letter or `_`, then letters, digits and `_`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "vars_tests.rs"]
mod tests;
