//! Protected paths: files whose content turns later, harmless-looking calls
//! into code execution or changes the rules themselves.
//!
//! A model that may write `.git/config` can set `core.fsmonitor` or a pager
//! and have the next read-only `git status` run its program; one that may
//! write `.claude/settings.json` or `.mcp.json` changes the permissions and
//! hooks of the next run; one that may write `~/.bashrc` runs code in every
//! later shell. Writes there ask in every mode except bypassPermissions
//! (acceptEdits and allow rules included), as Claude Code does for its
//! protected paths.
//!
//! The check looks at every spelling of the target: the path as the model
//! wrote it (so a `.git` that is itself a symlink is still seen) and the path
//! with symlinks resolved (so a link elsewhere pointing into `.git` is seen).
//! A directory that *is* a git directory under another name (a bare
//! repository, the target of a `.git` link or `gitdir:` file) is recognised
//! by its contents, the way git itself recognises one.

use std::ffi::OsStr;
use std::path::{Component, Path};

/// Directories whose every file is protected, at any depth (nested
/// repositories included).
pub(crate) const PROTECTED_DIRS: &[&str] = &[".git", ".claude", ".vscode", ".idea"];

/// File names protected wherever they are.
pub(crate) const PROTECTED_FILES: &[&str] = &[
    ".mcp.json",
    ".claude.json",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    // Shell start-up files: read by every later shell (bash, sh, zsh, direnv).
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".envrc",
    ".inputrc",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
];

/// Why writing `path` needs explicit approval, if it does. `path` is
/// absolute; both the written and the resolved spelling should be passed
/// (see [`protected_reason_any`]).
pub(crate) fn protected_reason(path: &Path) -> Option<String> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut i = 0;
    while let Some(&name) = names.get(i) {
        // Inside a session worktree (`.claude/worktrees/<name>/…`, made by
        // EnterWorktree) the files are the project's own; the worktree's
        // own `.claude/`, `.git` and the rest are still seen below.
        if eq(name, ".claude")
            && names.get(i + 1).is_some_and(|n| eq(n, "worktrees"))
            && names.len() > i + 3
            && names[i + 2].to_str().is_some_and(|n| !n.starts_with('.'))
        {
            i += 3;
            continue;
        }
        i += 1;
        if let Some(dir) = PROTECTED_DIRS.iter().find(|d| eq(name, d)) {
            return Some(format!(
                "it writes inside `{dir}/`, which changes what later commands and sessions do"
            ));
        }
    }
    if let Some(name) = path.file_name() {
        if let Some(file) = PROTECTED_FILES.iter().find(|f| eq(name, f)) {
            return Some(format!(
                "it writes `{file}`, which changes what later commands and sessions do"
            ));
        }
        // A file named HEAD is how a directory becomes a git directory.
        if name == "HEAD" {
            return Some(
                "it writes a file named `HEAD`, which can make its directory a git repository"
                    .into(),
            );
        }
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if looks_like_git_dir(d) {
            return Some(format!(
                "it writes inside `{}`, a git directory, which changes what later git commands do",
                d.display()
            ));
        }
        dir = d.parent();
    }
    None
}

/// The first reason any of `paths` is protected.
pub(crate) fn protected_reason_any<'a>(
    paths: impl IntoIterator<Item = &'a Path>,
) -> Option<String> {
    paths.into_iter().find_map(protected_reason)
}

/// Git treats a directory as a repository when it holds `HEAD` and an
/// `objects` or `refs` directory, its own or a `commondir`'s (a bare
/// repository, the target of a `.git` link or `gitdir:` file, a linked
/// worktree's git directory). The sandbox's walk recognises them alike
/// (`confine::protect`).
fn looks_like_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("objects").is_dir()
            || dir.join("refs").is_dir()
            || dir.join("commondir").is_file())
}

fn eq(name: &OsStr, expected: &str) -> bool {
    name.to_str()
        .is_some_and(|n| n.eq_ignore_ascii_case(expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_worktree_is_project_files_but_its_own_config_is_not() {
        assert_eq!(
            protected_reason(Path::new("/w/.claude/worktrees/a/src/x.rs")),
            None
        );
        for p in [
            "/w/.claude/worktrees/a",
            "/w/.claude/worktrees/a/.claude/settings.json",
            "/w/.claude/worktrees/a/.git",
            "/w/.claude/worktrees/.hidden/x",
            "/w/.claude/settings.json",
        ] {
            assert!(protected_reason(Path::new(p)).is_some(), "{p}");
        }
    }

    #[test]
    fn names_and_dirs_at_any_depth() {
        for p in [
            "/w/.git/config",
            "/w/sub/repo/.git/hooks/pre-commit",
            "/w/.claude/settings.json",
            "/w/.claude/settings.local.json",
            "/w/.mcp.json",
            "/w/deep/.mcp.json",
            "/home/u/.bashrc",
            "/w/.envrc",
            "/w/.zshrc",
            "/w/.profile",
            "/w/.bash_profile",
            "/w/.GIT/config",
            "/w/x/HEAD",
        ] {
            assert!(protected_reason(Path::new(p)).is_some(), "{p}");
        }
        for p in [
            "/w/src/main.rs",
            "/w/.gitignore",
            "/w/git/config",
            "/w/claude.md",
        ] {
            assert!(protected_reason(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn a_git_directory_under_another_name() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("bare.git");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(protected_reason(&bare.join("config")).is_some());
        assert!(protected_reason(&bare.join("hooks/post-checkout")).is_some());
        assert!(protected_reason(&dir.path().join("plain.txt")).is_none());
        // A linked worktree's git directory: HEAD and a `commondir`.
        let admin = dir.path().join("admin");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(admin.join("HEAD"), "ref: refs/heads/x\n").unwrap();
        std::fs::write(admin.join("commondir"), "/elsewhere\n").unwrap();
        assert!(protected_reason(&admin.join("index")).is_some());
    }
}
