//! `isolation: "worktree"`: the subagent works in a git worktree of its own.
//!
//! The worktree goes under the session's state directory on a new branch
//! `baton/<agent id>` from the current HEAD. When the agent ends it is
//! removed if nothing changed (clean and still at the starting commit);
//! otherwise it stays, and the result names its path and branch so the
//! parent can look at or merge the work.

use std::path::{Path, PathBuf};

use crate::git::{self, Writes};

pub(super) struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    repo: PathBuf,
    base: String,
}

impl Worktree {
    /// Creates the worktree of `agent_id` for the repository holding `cwd`.
    pub(super) async fn create(
        cwd: &Path,
        state_dir: &Path,
        agent_id: &str,
    ) -> Result<Worktree, String> {
        let repo = git::toplevel(cwd).await.map_err(|_| {
            format!(
                "isolation \"worktree\" needs a git repository, and {} is not in one",
                cwd.display()
            )
        })?;
        let base = git::query(&repo, &["rev-parse", "HEAD"])
            .await
            .map(|out| out.trim().to_string())
            .map_err(|e| format!("the repository has no commit to start a worktree from ({e})"))?;
        let dir = state_dir.join("worktrees");
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(agent_id);
        let branch = format!("baton/{agent_id}");
        let target = path.to_string_lossy().to_string();
        git::git(
            &repo,
            &["worktree", "add", "-q", "-b", &branch, &target, &base],
            Writes::GitDirAnd(&path),
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
    pub(super) fn cwd_for(&self, cwd: &Path) -> PathBuf {
        match cwd.strip_prefix(&self.repo) {
            Ok(rel) => self.path.join(rel),
            Err(_) => self.path.clone(),
        }
    }

    /// Removes the worktree if unchanged; otherwise says where it is.
    pub(super) async fn finish(self) -> Option<String> {
        let status = git::query(&self.path, &["status", "--porcelain"]).await;
        let head = git::query(&self.path, &["rev-parse", "HEAD"]).await;
        let unchanged = matches!((&status, &head), (Ok(s), Ok(h)) if s.trim().is_empty() && h.trim() == self.base);
        if unchanged {
            let target = self.path.to_string_lossy().to_string();
            let removed = git::git(
                &self.repo,
                &["worktree", "remove", "--force", &target],
                Writes::GitDirAnd(&self.path),
            )
            .await;
            let _ = git::git(&self.repo, &["branch", "-D", &self.branch], Writes::GitDir).await;
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
