//! `isolation: "worktree"`: the subagent works in a git worktree of its own.
//!
//! The worktree goes under the session's state directory on a new branch
//! `baton/<agent id>` from the current HEAD. When the agent ends it is
//! removed if nothing changed (clean and still at the starting commit);
//! otherwise it stays, and the result names its path and branch so the
//! parent can look at or merge the work.

use std::path::{Path, PathBuf};

use tokio::process::Command;

pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    repo: PathBuf,
    base: String,
}

async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Worktree {
    /// Creates the worktree of `agent_id` for the repository holding `cwd`.
    pub async fn create(cwd: &Path, state_dir: &Path, agent_id: &str) -> Result<Worktree, String> {
        let repo = git(cwd, &["rev-parse", "--show-toplevel"])
            .await
            .map_err(|_| {
                format!(
                    "isolation \"worktree\" needs a git repository, and {} is not in one",
                    cwd.display()
                )
            })?;
        let repo = PathBuf::from(repo);
        let base = git(&repo, &["rev-parse", "HEAD"])
            .await
            .map_err(|e| format!("the repository has no commit to start a worktree from ({e})"))?;
        let dir = state_dir.join("worktrees");
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(agent_id);
        let branch = format!("baton/{agent_id}");
        let target = path.to_string_lossy().to_string();
        git(
            &repo,
            &["worktree", "add", "-q", "-b", &branch, &target, &base],
        )
        .await?;
        Ok(Worktree {
            path,
            branch,
            repo,
            base,
        })
    }

    /// The working directory inside the worktree matching `cwd` in the repo.
    pub fn cwd_for(&self, cwd: &Path) -> PathBuf {
        match cwd.strip_prefix(&self.repo) {
            Ok(rel) => self.path.join(rel),
            Err(_) => self.path.clone(),
        }
    }

    /// Removes the worktree if unchanged; otherwise says where it is.
    pub async fn finish(self) -> Option<String> {
        let status = git(&self.path, &["status", "--porcelain"]).await;
        let head = git(&self.path, &["rev-parse", "HEAD"]).await;
        let unchanged =
            matches!((&status, &head), (Ok(s), Ok(h)) if s.is_empty() && *h == self.base);
        if unchanged {
            let target = self.path.to_string_lossy().to_string();
            let removed = git(&self.repo, &["worktree", "remove", "--force", &target]).await;
            let _ = git(&self.repo, &["branch", "-D", &self.branch]).await;
            if removed.is_ok() {
                return None;
            }
        }
        Some(format!(
            "worktreePath: {}\nworktreeBranch: {}",
            self.path.display(),
            self.branch
        ))
    }
}
