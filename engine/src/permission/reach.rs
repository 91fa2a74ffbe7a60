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

use baton_shell::{SimpleCommand, Word};
use baton_tool::context::Context;

/// Commands that take no file operands: their words are text, not paths.
pub(super) const NO_FILES: &[&str] = &[
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
                let target = match cd_target(cmd) {
                    Ok(t) => t,
                    Err(shown) => return unknown(&shown),
                };
                let Some(text) = target.path else {
                    return outside("~ (a bare cd goes home)");
                };
                let mut next = Vec::new();
                for base in &dirs {
                    for dir in cd_lands(base, &text, target.physical) {
                        if !inside(ctx, &physical(&dir)) {
                            return outside(&text);
                        }
                        next.push(dir);
                    }
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
        let args: Option<Vec<String>> = cmd
            .args()
            .iter()
            .map(
                |w| match baton_shell::expand_args(std::slice::from_ref(w)) {
                    Some(values) => Some(values),
                    None => pwd_substituted(w.source(), &ctx.cwd).map(|v| vec![v]),
                },
            )
            .collect::<Option<Vec<Vec<String>>>>()
            .map(|v| v.into_iter().flatten().collect());
        match args {
            Some(args) if baton_shell::follows_links(name, &args) => {
                return Some(format!(
                    "`{}` follows symbolic links while it walks directories, so it may read anywhere a link in the workspace points",
                    super::summary::first_line(cmd.text(), 80)
                ));
            }
            Some(_) => {}
            None if baton_shell::may_follow_links(name) => {
                return unknown(cmd.text());
            }
            None => {}
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
                if let Some(reason) = git_repository_outside(ctx, dir) {
                    return Some(reason);
                }
                if let Some(reason) = super::git_config::programs_configured(dir) {
                    return Some(reason);
                }
            }
        }
    }
    None
}

/// Why git run in `dir` may read outside the workspace: its repository
/// (the work tree's top, or the git directory) starts above the roots, so
/// `git show HEAD:path`, `:/` pathspecs or `git log -p` read files that
/// are not in the workspace. The environment's `GIT_DIR`/`GIT_WORK_TREE`
/// point git elsewhere, which is not followed here.
fn git_repository_outside(ctx: &Context, dir: &Path) -> Option<String> {
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
    ] {
        if std::env::var_os(var).is_some() {
            return Some(format!(
                "`{var}` is set in the environment, so git may read a repository outside the workspace"
            ));
        }
    }
    let (top, gitdir) = super::git_config::repository(&physical(dir))?;
    for place in [&top, &gitdir] {
        if !inside(ctx, &physical(place)) {
            return Some(format!(
                "git reads the repository at `{}`, which is not inside the workspace ({}), so it can show files from outside it",
                place.display(),
                ctx.roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    None
}

/// Where a `cd`/`pushd` goes: its operand (`None` for home) and whether
/// `-P` makes it physical. `Err` with the text to show when unknown.
pub(super) struct CdTarget {
    pub(super) path: Option<String>,
    pub(super) physical: bool,
}

pub(super) fn cd_target(cmd: &SimpleCommand) -> Result<CdTarget, String> {
    let mut physical = false;
    let mut operands = Vec::new();
    let mut options = true;
    for word in cmd.args() {
        let Some(arg) = word.fixed() else {
            return Err(word.source().to_string());
        };
        if options && arg == "--" {
            options = false;
        } else if options && arg.len() > 1 && arg.starts_with('-') {
            for flag in arg[1..].chars() {
                match flag {
                    'P' => physical = true,
                    'L' => physical = false,
                    'e' => {}
                    _ => return Err(cmd.text().to_string()),
                }
            }
        } else {
            options = false;
            operands.push(arg);
        }
    }
    match operands.as_slice() {
        [] => Ok(CdTarget {
            path: None,
            physical,
        }),
        ["-"] => Err("cd -".into()),
        [t] if t.starts_with('~') => Err((*t).to_string()),
        [t] => {
            // With `CDPATH` set, a name not starting with `/`, `./` or `../`
            // is looked up in those directories first.
            let searched = !(t.starts_with('/')
                || *t == "."
                || *t == ".."
                || t.starts_with("./")
                || t.starts_with("../"));
            if searched && std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty()) {
                return Err(format!("{t} (looked up in CDPATH)"));
            }
            Ok(CdTarget {
                path: Some((*t).to_string()),
                physical,
            })
        }
        _ => Err(cmd.text().to_string()),
    }
}

/// The directories `cd target` from `base` may land in. bash's `cd` is
/// logical by default: `a/../b` drops `a/..` as text before the kernel
/// sees it, whatever `a` links to; if that path does not work, it falls
/// back to the physical one. `-P` is physical only. Both readings are
/// returned (and each is then checked physically).
pub(super) fn cd_lands(base: &Path, target: &str, physical_only: bool) -> Vec<PathBuf> {
    let joined = base.join(target);
    if physical_only {
        return vec![physical(&joined)];
    }
    let logical = lexical(&joined);
    vec![logical, physical(&joined)]
}

/// `path` with `.` and `..` folded as text (an absolute path stays under
/// `/`).
pub(super) fn lexical(path: &Path) -> PathBuf {
    walk(path, |out, name| out.join(name))
}

/// `path` folded from `/`, component by component: `.` and `..` as text,
/// each name entered with `enter(directory so far, name)`.
fn walk(path: &Path, enter: impl Fn(&Path, &std::ffi::OsStr) -> PathBuf) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => out = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out = enter(&out, name),
        }
    }
    out
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
    walk(path, |out, name| {
        let next = out.join(name);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            // A dangling or looping link: where it points is not known;
            // keep the name (nothing can be read there).
            std::fs::canonicalize(&next).unwrap_or(next)
        } else {
            next
        }
    })
}

fn is_device(text: &str) -> bool {
    matches!(
        text,
        "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-"
    )
}

/// The texts a word may stand for as a path: `None` when unknown.
pub(super) fn candidates(word: &Word, dirs: &[PathBuf]) -> Vec<Option<String>> {
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
    for alternative in baton_shell::expand_braces(&value, 0) {
        match expand_glob(cwd, &alternative, &mut budget) {
            Some(paths) => {
                // A matched name that starts with `-` becomes an option of
                // the program (`grep x *` with a file named `-R`), which
                // no check here understands.
                let relative = !alternative.starts_with('/');
                if relative
                    && paths.iter().any(|p| {
                        p.strip_prefix(cwd)
                            .ok()
                            .and_then(|r| r.to_str())
                            .is_some_and(|r| r.starts_with('-'))
                    })
                {
                    return vec![None];
                }
                out.extend(
                    paths
                        .into_iter()
                        .map(|p| Some(cwd.join(p).to_string_lossy().into_owned())),
                )
            }
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
