//! What a sandboxed command may not change in the trees it may write:
//! repositories and the files that turn a later, harmless-looking command
//! or session into code execution (see `permission::protected`).
//!
//! Protection is by what an entry does, not by its name at the root:
//!
//! - **Found at any depth.** Before each command, the workspace roots are
//!   walked ([`walk`], bounded by [`scan_limit`] entries) for `.git`
//!   directories and files, directories git would take for a repository
//!   (`HEAD` beside `objects`, `refs` or `commondir`: bare repositories, the
//!   git directories of submodules and worktrees), and the protected names.
//! - **Kept by the kernel.** Each git directory is bound onto itself in the
//!   command's mount namespace (so it cannot be renamed, removed or replaced:
//!   `EBUSY`), writable inside, because git writes its index, objects, refs
//!   and lock files (`index.lock`, `HEAD.lock`, `packed-refs.lock`) right
//!   there; its parts that name programs or other repositories (`config`,
//!   `config.worktree`, `hooks`, `info`, `commondir`, `gitdir`,
//!   `objects/info/alternates`, …) are bound read-only. Every `.git` file
//!   and every entry with a protected name is bound read-only (see
//!   `baton_sandbox::Pinned`).
//! - **Not created.** A name that does not exist cannot be a mount point,
//!   and the kernel has no rule for "any file but this name" in a writable
//!   directory. So what the walk found is remembered ([`Guard`]), and after
//!   the command the walk runs again: whatever protected entry it did not
//!   know is moved aside (`<name>.baton-refused`), and the result says so.
//!
//! A walk that cannot finish (more entries than the limit, a directory too
//! deep, or one the command could have made unreadable) fails closed: the
//! command is not run sandboxed, since it could not be protected.

mod at;
mod gate;
mod guard;
mod walk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_sandbox::Pinned;

pub use gate::Starting;
use guard::Fixed;
pub use guard::Guard;
use walk::{Memo, Names, Role, Scan};

use crate::settings::SandboxConfig;

/// The environment variable that sets how many entries the walk of the
/// workspace may list ([`DEFAULT_SCAN_LIMIT`] when unset).
pub const SCAN_LIMIT_VAR: &str = "BATON_SANDBOX_SCAN_LIMIT";

/// Entries listed per walk by default: a walk this long takes about a
/// tenth of a second.
pub const DEFAULT_SCAN_LIMIT: usize = 200_000;

/// The walk's limit, from [`SCAN_LIMIT_VAR`] (a number; anything else is
/// the default).
pub fn scan_limit() -> usize {
    std::env::var(SCAN_LIMIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_SCAN_LIMIT)
}

/// What the walks of each workspace root listed (see [`walk`]), kept for
/// the session so that each walk lists again only what changed.
#[derive(Debug, Default)]
pub struct Memory(parking_lot::Mutex<HashMap<PathBuf, Arc<Memo>>>);

impl Memory {
    /// Walks `root` (see [`walk::scan`]) with what earlier walks listed,
    /// and keeps what this one listed.
    pub(crate) fn walk(&self, root: &Path, names: &Names, budget: &mut usize) -> Scan {
        let previous = self.0.lock().get(root).cloned();
        let (scan, next) = walk::scan(root, names, budget, previous.as_deref());
        self.0.lock().insert(root.to_path_buf(), Arc::new(next));
        scan
    }
}

/// What one sandboxed command gets: the entries its mount namespace keeps
/// in place, the check to run after it, and its place in the gate (to
/// drop once its child runs).
pub(crate) struct Protection {
    pub pinned: Vec<Pinned>,
    pub guard: Arc<Guard>,
    pub starting: Starting,
}

/// Walks the workspace `roots` for what `config` protects. `write` are the
/// command's writable trees (resolved) and `deny_write` the named paths
/// the sandbox protects (their directories resolved, the entries
/// themselves not): those outside the roots are checked after the command
/// too. `None` when nothing is protected by name; an
/// error (the reason) when the walk could not finish.
pub(crate) fn prepare(
    config: &SandboxConfig,
    roots: &[PathBuf],
    write: &[PathBuf],
    deny_write: &[PathBuf],
    memory: &Arc<Memory>,
) -> Result<Option<Protection>, String> {
    let names = Names::new(&config.protected_names);
    if names.is_empty() {
        return Ok(None);
    }
    let starting = Starting::begin();
    let limit = scan_limit();
    let mut budget = limit;
    let mut scans = Vec::new();
    let mut pinned = Vec::new();
    for root in outermost(roots) {
        let scan = memory.walk(&root, &names, &mut budget);
        if let Some(gap) = &scan.gap {
            return Err(format!(
                "the workspace {} could not be searched for repositories and protected files ({gap}; the limit is {limit} entries, set {SCAN_LIMIT_VAR} to change it), so they could not be protected",
                root.display()
            ));
        }
        for found in &scan.entries {
            if matches!(found.stat.kind, at::Kind::Link(_)) {
                // A mount would follow the link; the check after the
                // command puts it back if it goes.
                continue;
            }
            pinned.push(Pinned {
                path: root.join(&found.rel),
                read_only: found.role != Role::GitDir,
                identity: found.stat.identity,
            });
        }
        scans.push((root, scan));
    }
    let fixed = fixed_paths(&names, roots, write, deny_write);
    Ok(Some(Protection {
        pinned,
        guard: Arc::new(Guard::new(names, limit, scans, fixed, memory.clone())),
        starting,
    }))
}

/// `roots` without those inside another (walked with it).
fn outermost(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        if roots.iter().any(|r| r != root && root.starts_with(r)) || out.contains(root) {
            continue;
        }
        out.push(root.clone());
    }
    out
}

/// The protected paths in writable trees outside the workspace roots (the
/// home directory's start-up files when the home directory is writable),
/// each reached from above its outermost writable tree.
fn fixed_paths(
    names: &Names,
    roots: &[PathBuf],
    write: &[PathBuf],
    deny_write: &[PathBuf],
) -> Vec<Fixed> {
    let protected = |path: &Path| {
        path.file_name().is_some_and(|n| names.is_protected(n))
            || names
                .git_parts()
                .iter()
                .any(|part| path.ends_with(Path::new(".git").join(part)))
    };
    let mut out = Vec::new();
    for path in deny_write {
        if roots.iter().any(|r| path.starts_with(r)) || !protected(path) {
            continue;
        }
        let Some(tree) = write
            .iter()
            .filter(|w| path.starts_with(w))
            .min_by_key(|w| w.components().count())
        else {
            continue;
        };
        let anchor = tree.parent().unwrap_or(Path::new("/")).to_path_buf();
        let Ok(rel) = path.strip_prefix(&anchor).map(Path::to_path_buf) else {
            continue;
        };
        let known = at::open_trusted(&anchor)
            .ok()
            .and_then(|fd| at::stat_below(&fd, &rel))
            .map(|s| (s.identity, s.kind));
        out.push(Fixed { anchor, rel, known });
    }
    out
}

#[cfg(test)]
mod tests;
