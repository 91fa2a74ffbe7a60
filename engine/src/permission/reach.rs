//! Where a read-only command reaches, and what it may run there.
//!
//! A read-only line is auto-approved only inside the workspace: `cat
//! ~/.ssh/id_rsa` writes nothing but should still ask. The path a command
//! reads is what bash makes of its words, so this module resolves them the
//! way bash and the kernel will: globs against the file system, brace
//! expansion, `$PWD`, `cd` targets (bare `cd` is home), and symlinks. Any
//! word whose final path cannot be known (a variable, a substitution, a
//! glob too large to list) is a reason to ask.
//!
//! It also refuses to auto-approve `git` in a repository whose own config
//! names programs (`core.fsmonitor`, a pager, a diff driver, a filter...):
//! git runs them even for `git status`, and the model may have written that
//! config. Only keys known to be inert pass.

use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::shell::{SimpleCommand, Word};

/// Commands that take no file operands: their words are text, not paths.
const NO_FILES: &[&str] = &[
    "echo", "printf", "true", "false", "pwd", "seq", "sleep", "basename", "dirname", "uname",
    "whoami", "id", "nproc", "arch", "groups", "locale", "type", "which", "printenv", "hostname",
    "[[", "cal", "uptime", "expr", "getconf", "numfmt", "tty", "logname", "ps", "pgrep", "free",
    "users",
];

/// At most this many paths are listed while expanding one word's globs.
const GLOB_BUDGET: usize = 4096;

/// Why `commands` (the read-only parts of one line) should not run without
/// approval, or `None`.
pub(crate) fn reason_to_ask(commands: &[&SimpleCommand], ctx: &Context) -> Option<String> {
    let outside = |shown: &str| {
        Some(format!(
            "the command refers to `{shown}`, outside the workspace ({})",
            ctx.roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    let unknown = |shown: &str| {
        Some(format!(
            "the command names `{shown}`, whose final path cannot be known before it runs (a variable, substitution or option), so it cannot be checked against the workspace"
        ))
    };
    // Every directory a relative path may be relative to: where the line
    // starts and wherever a `cd` in it goes.
    let mut dirs = vec![ctx.cwd.clone()];
    for cmd in commands {
        match cmd.name() {
            Some("cd" | "pushd") => {
                let args: Vec<&Word> = cmd
                    .args()
                    .iter()
                    .filter(|w| w.fixed() != Some("--"))
                    .collect();
                let target = match args.as_slice() {
                    [] => return outside("~ (a bare cd goes home)"),
                    [w] => match w.fixed() {
                        Some("-") => return unknown("cd -"),
                        Some(t) if !t.starts_with('~') => t,
                        _ => return unknown(w.source()),
                    },
                    _ => return unknown(cmd.text()),
                };
                let mut next = Vec::new();
                for base in &dirs {
                    let path = physical(&base.join(target));
                    if !inside(ctx, &path) {
                        return outside(target);
                    }
                    next.push(path);
                }
                dirs.extend(next);
            }
            Some("popd") => return unknown("popd"),
            _ => {}
        }
    }
    for cmd in commands {
        let name = cmd.name().unwrap_or("");
        if matches!(name, "cd" | "pushd") {
            continue;
        }
        let words: Vec<&Word> = if NO_FILES.contains(&name) {
            Vec::new()
        } else {
            cmd.args().iter().collect()
        };
        let redirects = cmd.redirects().iter().filter_map(|r| {
            let dup = matches!(r.op.as_str(), "<&" | ">&")
                && r.target
                    .as_ref()
                    .and_then(Word::fixed)
                    .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()));
            let text = matches!(r.op.as_str(), "<<" | "<<-" | "<<<");
            (!dup && !text).then_some(r.target.as_ref()).flatten()
        });
        for word in words.into_iter().chain(redirects) {
            for candidate in candidates(word, &dirs) {
                let Some(text) = candidate else {
                    return unknown(word.source());
                };
                if text.starts_with('~') {
                    return outside(&text);
                }
                if is_device(&text) {
                    continue;
                }
                for base in &dirs {
                    if !inside(ctx, &physical(&base.join(&text))) {
                        return outside(&text);
                    }
                }
            }
        }
        if name == "git" {
            for dir in &dirs {
                if let Some(reason) = super::git_config::programs_configured(dir) {
                    return Some(reason);
                }
            }
        }
    }
    None
}

/// Whether the physical path `path` is under a root (also resolved), or
/// under a directory the session may read though it is not the workspace
/// (its state directory: spilled results and shell logs the model is told
/// to read). This module judges read-only commands only, so reading there
/// is all such a command can do.
fn inside(ctx: &Context, path: &Path) -> bool {
    ctx.roots
        .iter()
        .chain(ctx.roots.is_empty().then_some(&ctx.cwd))
        .chain(ctx.readable.iter())
        .any(|root| path.starts_with(physical(root)))
}

/// `path` as the kernel resolves it: each symlink is followed before the
/// `..` after it is applied (`link/..` is the parent of the link's target,
/// not the directory holding the link), unlike a lexical normalisation.
pub(crate) fn physical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => out = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let next = out.join(name);
                let is_link =
                    std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
                out = if is_link {
                    // A dangling or looping link: where it points is not
                    // known; keep the name (nothing can be read there).
                    std::fs::canonicalize(&next).unwrap_or(next)
                } else {
                    next
                };
            }
        }
    }
    out
}

fn is_device(text: &str) -> bool {
    matches!(
        text,
        "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-"
    )
}

/// The texts a word may stand for as a path: `None` when unknown.
fn candidates(word: &Word, dirs: &[PathBuf]) -> Vec<Option<String>> {
    // A `cd` earlier on the line moves where `$PWD` points and where globs
    // match, so every directory the line may be in gives its own readings.
    let mut out = Vec::new();
    for dir in dirs {
        out.extend(candidates_in(word, dir));
    }
    out
}

fn candidates_in(word: &Word, cwd: &Path) -> Vec<Option<String>> {
    let value = match word.literal() {
        Some(v) => v.to_string(),
        None => match pwd_substituted(word.source(), cwd) {
            Some(v) => v,
            None => return vec![None],
        },
    };
    let value = if let Some(option) = value.strip_prefix('-') {
        // `--file=/x`: the value after `=`; `-f/x` cannot be told apart
        // from a harmless option, so a slash makes it unknown.
        match option.split_once('=') {
            Some((_, v)) => v.to_string(),
            None if option.contains('/') => return vec![None],
            None => return Vec::new(),
        }
    } else {
        value
    };
    if !word.is_glob() {
        return vec![Some(value)];
    }
    let mut out = Vec::new();
    let mut budget = GLOB_BUDGET;
    for alternative in expand_braces(&value, 0) {
        match expand_glob(cwd, &alternative, &mut budget) {
            Some(paths) => out.extend(
                paths
                    .into_iter()
                    .map(|p| Some(cwd.join(p).to_string_lossy().into_owned())),
            ),
            None => return vec![None],
        }
        // A pattern that matches nothing stays as written.
        out.push(Some(alternative));
    }
    out
}

/// `$PWD`/`${PWD}` are the working directory; any other expansion is
/// unknown. Quotes are dropped (a double-quoted `"$PWD/x"`).
fn pwd_substituted(source: &str, cwd: &Path) -> Option<String> {
    let cwd = cwd.to_string_lossy();
    let replaced = source.replace("${PWD}", &cwd).replace("$PWD", &cwd);
    let clean = replaced.replace('"', "");
    let plain = !clean.contains(['$', '`', '\'', '\\', '*', '?', '[', '{', '~']);
    plain.then_some(clean)
}

/// Brace expansion: `{a,b}` alternatives (nested), `{x..y}` sequences
/// replaced by their first element (they produce no `/`).
fn expand_braces(text: &str, depth: usize) -> Vec<String> {
    if depth > 8 {
        return vec![text.to_string()];
    }
    let bytes = text.as_bytes();
    let Some(open) = text.find('{') else {
        return vec![text.to_string()];
    };
    let mut level = 0usize;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => level += 1,
            b'}' => {
                level -= 1;
                if level == 0 {
                    close = Some(i);
                    break;
                }
            }
            b',' if level == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![text.to_string()];
    };
    let (head, inner, tail) = (&text[..open], &text[open + 1..close], &text[close + 1..]);
    let alternatives: Vec<String> = if commas.is_empty() {
        match inner.split_once("..") {
            Some((first, _)) => vec![first.to_string()],
            None => vec![format!("{{{inner}}}")],
        }
    } else {
        let mut parts = Vec::new();
        let mut start = open + 1;
        for c in commas.iter().copied().chain([close]) {
            parts.push(text[start..c].to_string());
            start = c + 1;
        }
        parts
    };
    let mut out = Vec::new();
    for alt in alternatives {
        for expanded in expand_braces(&format!("{head}{alt}{tail}"), depth + 1) {
            if out.len() >= 256 {
                return out;
            }
            out.push(expanded);
        }
    }
    out
}

/// Pathname expansion of `pattern` from `cwd`, as bash does it (no dot
/// files unless the segment starts with a dot). `None` when too large.
fn expand_glob(cwd: &Path, pattern: &str, budget: &mut usize) -> Option<Vec<PathBuf>> {
    let (mut current, rest) = match pattern.strip_prefix('/') {
        Some(rest) => (vec![PathBuf::from("/")], rest),
        None => (vec![cwd.to_path_buf()], pattern),
    };
    for segment in rest.split('/').filter(|s| !s.is_empty()) {
        let mut next = Vec::new();
        if !segment.contains(['*', '?', '[']) {
            next = current.iter().map(|d| d.join(segment)).collect();
        } else {
            let glob = globset::GlobBuilder::new(segment)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .ok()?
                .compile_matcher();
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    *budget = budget.checked_sub(1)?;
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with('.') && !segment.starts_with('.') {
                        continue;
                    }
                    if glob.is_match(name.as_ref()) {
                        next.push(dir.join(name.as_ref()));
                    }
                }
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(expand_braces("a{b,c}d", 0), vec!["abd", "acd"]);
        assert_eq!(expand_braces("{..,x}/s", 0), vec!["../s", "x/s"]);
        assert_eq!(expand_braces("f{1..9}", 0), vec!["f1"]);
        assert_eq!(expand_braces("{a,{b,c}}", 0), vec!["a", "b", "c"]);
        assert_eq!(expand_braces("x{", 0), vec!["x{"]);
    }
}
