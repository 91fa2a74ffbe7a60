//! The few git commands the worktree tools run, bounded and sealed.
//!
//! Every run has a time limit, dies with the call (`kill_on_drop`), and is
//! kept away from what the repository itself could make git do: no
//! repository hooks (`core.hooksPath=/dev/null`; `git worktree add` would
//! otherwise run a `post-checkout` hook the model may have written), no
//! fsmonitor command, and none of the `GIT_*` variables that would point
//! git at another repository than the one the session is in.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

/// Longest one git command may take (a checkout of a large tree).
const GIT_LIMIT: Duration = Duration::from_secs(120);

/// Variables that redirect git to another repository or index.
const REDIRECTS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Runs `git -C dir args…`; stdout on success, the stderr on failure.
pub async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor="])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    for var in REDIRECTS {
        command.env_remove(var);
    }
    let run = command.output();
    let out = match tokio::time::timeout(GIT_LIMIT, run).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("cannot run git: {e}")),
        Err(_) => {
            return Err(format!(
                "git {} did not finish within {} s",
                args.first().unwrap_or(&""),
                GIT_LIMIT.as_secs()
            ))
        }
    };
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The top of the working tree holding `dir`.
pub async fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    let out = git(dir, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| format!("{} is not inside a git repository", dir.display()))?;
    Ok(PathBuf::from(out.trim_end_matches('\n')))
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: PathBuf,
    /// `refs/heads/…` stripped; `None` when detached.
    pub branch: Option<String>,
    pub bare: bool,
}

/// The worktrees of the repository holding `dir`, the main one first.
/// NUL-separated output, so a path with a newline in it cannot forge an
/// entry.
pub async fn worktrees(dir: &Path) -> Result<Vec<Listed>, String> {
    let out = git(dir, &["worktree", "list", "--porcelain", "-z"]).await?;
    Ok(parse_worktrees(&out))
}

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
    let out = git(dir, &["status", "--porcelain", "--untracked-files=normal"]).await?;
    Ok(out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// Commits of `dir`'s HEAD that `base` does not have, one line each.
pub async fn commits_not_on(dir: &Path, base: &str) -> Result<Vec<String>, String> {
    let range = format!("{base}..HEAD");
    let out = git(dir, &["log", "--oneline", "--no-decorate", &range, "--"]).await?;
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
