//! What Baton asks git about a repository: read-only queries through the
//! sealed git.

use std::path::{Path, PathBuf};

use super::query;

/// The top of the working tree holding `dir`.
pub async fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    let out = query(dir, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| format!("{} is not inside a git repository", dir.display()))?;
    Ok(PathBuf::from(out.trim_end_matches('\n')))
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The worktree's directory.
    pub path: PathBuf,
    /// `refs/heads/…` stripped; `None` when detached.
    pub branch: Option<String>,
    /// Whether it is the bare repository entry (no checkout).
    pub bare: bool,
}

/// The worktrees of the repository holding `dir`, the main one first.
/// NUL-separated output, so a path with a newline in it cannot forge an
/// entry.
pub async fn worktrees(dir: &Path) -> Result<Vec<Listed>, String> {
    let out = query(dir, &["worktree", "list", "--porcelain", "-z"]).await?;
    Ok(parse_worktrees(&out))
}

/// The entries of `git worktree list --porcelain -z` output, in order.
pub fn parse_worktrees(out: &str) -> Vec<Listed> {
    let mut list = Vec::new();
    let mut current: Option<Listed> = None;
    for field in out.split('\0') {
        if field.is_empty() {
            // An empty field ends an entry.
            list.extend(current.take());
            continue;
        }
        if let Some(path) = field.strip_prefix("worktree ") {
            list.extend(current.take());
            current = Some(Listed {
                path: PathBuf::from(path),
                branch: None,
                bare: false,
            });
        } else if let Some(entry) = current.as_mut() {
            if let Some(branch) = field.strip_prefix("branch ") {
                entry.branch = Some(branch.trim_start_matches("refs/heads/").to_string());
            } else if field == "bare" {
                entry.bare = true;
            }
        }
    }
    list.extend(current);
    list
}

/// What `git status --porcelain` lists in `dir` (uncommitted work).
pub async fn uncommitted(dir: &Path) -> Result<Vec<String>, String> {
    let out = query(dir, &["status", "--porcelain", "--untracked-files=normal"]).await?;
    Ok(out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// Commits of `dir`'s HEAD that `base` does not have, one line each.
pub async fn commits_not_on(dir: &Path, base: &str) -> Result<Vec<String>, String> {
    let range = format!("{base}..HEAD");
    let out = query(dir, &["log", "--oneline", "--no-decorate", &range, "--"]).await?;
    Ok(out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_entries_are_split_on_nul_only() {
        let out = "worktree /r\0HEAD abc\0branch refs/heads/main\0\0\
                   worktree /r/.claude/worktrees/a\nworktree /etc\0HEAD def\0detached\0\0";
        let list = parse_worktrees(out);
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!(
            list[1].path,
            PathBuf::from("/r/.claude/worktrees/a\nworktree /etc")
        );
        assert_eq!(list[1].branch, None);
    }
}
