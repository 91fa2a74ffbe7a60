//! One sealed git: every git process Baton starts for itself (the
//! worktrees of `EnterWorktree`/`ExitWorktree` and of `Agent` with
//! `isolation: "worktree"`, their status checks and their cleanup).
//!
//! A repository is input the model may have written: a sandboxed command
//! can plant a hook, a filter in `.git/config` or `.git/info/attributes`,
//! an fsmonitor command, a `GIT_*` variable in an approved shell's
//! profile. Baton's own git runs outside any sandbox and outside the
//! permission rules, so it must run nothing the repository names
//! ([`seal`]) and, as a second wall, write only where the operation must
//! ([`Writes`]): it is started under the kernel sandbox with the whole
//! file system readable and only the repository's git directory (and, for
//! a worktree being added or removed, that worktree) writable. Where the
//! kernel cannot confine, the seal alone holds; docs/sandbox.md says so.

mod queries;
mod run;
mod seal;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use queries::{commits_not_on, parse_worktrees, toplevel, uncommitted, worktrees, Listed};

/// Where one git operation may write.
#[derive(Clone, Debug)]
pub enum Writes<'a> {
    /// Nowhere: queries (`rev-parse`, `status`, `log`, `worktree list`).
    /// Optional locks (the index refresh of `git status`) are turned off.
    Nothing,
    /// The repository's common git directory (refs, objects, logs):
    /// `branch -D`.
    GitDir,
    /// The git directory and the directory holding one worktree, which is
    /// being added or removed.
    GitDirAnd(&'a Path),
}

/// Runs `git -C dir args…` sealed and confined to `writes`; stdout on
/// success, the error output on failure.
pub async fn git(dir: &Path, args: &[&str], writes: Writes<'_>) -> Result<String, String> {
    let seal = seal::Seal::for_repository(dir).await?;
    let write = match writes {
        Writes::Nothing => Vec::new(),
        Writes::GitDir => vec![common_dir(dir, &seal).await?],
        Writes::GitDirAnd(tree) => vec![common_dir(dir, &seal).await?, writable_tree(tree)?],
    };
    run::run(dir, args, &seal, &write).await
}

/// Shorthand for a query: [`git`] with [`Writes::Nothing`].
pub async fn query(dir: &Path, args: &[&str]) -> Result<String, String> {
    git(dir, args, Writes::Nothing).await
}

/// The common git directory of the repository holding `dir` (shared by
/// all its worktrees), resolved.
async fn common_dir(dir: &Path, seal: &seal::Seal) -> Result<PathBuf, String> {
    let out = run::run(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        seal,
        &[],
    )
    .await?;
    let path = PathBuf::from(out.trim_end_matches('\n'));
    std::fs::canonicalize(&path).map_err(|e| {
        format!(
            "the git directory {} cannot be resolved: {e}",
            path.display()
        )
    })
}

/// The existing directory a worktree operation on `tree` may write: its
/// parent (adding creates `tree` in it, removing deletes `tree` from it),
/// created here if missing, since a kernel rule needs an existing
/// directory.
fn writable_tree(tree: &Path) -> Result<PathBuf, String> {
    let parent = tree
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", tree.display()))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    std::fs::canonicalize(parent)
        .map_err(|e| format!("{} cannot be resolved: {e}", parent.display()))
}
