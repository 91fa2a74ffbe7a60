//! Where the session stands with respect to worktrees, and the context
//! changes that move it in and out.
//!
//! The state rides in the context's extensions, so it travels exactly like
//! the working directory it describes: a call sees the state of the calls
//! before it, and a change lands (through a [`ContextModifier`] of a call
//! that runs alone) before the next call starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::{Context, ContextModifier};

/// The worktree the session is in, and the place it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entered {
    /// The working directory before the first EnterWorktree.
    pub original_cwd: PathBuf,
    /// The workspace roots before the first EnterWorktree.
    pub original_roots: Arc<Vec<PathBuf>>,
    /// The worktree (symlinks resolved).
    pub path: PathBuf,
    pub branch: Option<String>,
    /// Made by EnterWorktree (so ExitWorktree may remove it); a worktree
    /// entered by `path` is never removed.
    pub created: bool,
    /// What "commits not on the original branch" is measured against:
    /// `refs/heads/<branch>` of the original checkout, or its commit when
    /// it was detached.
    pub base: String,
}

/// The session's worktree state (`None`: not in a worktree session).
#[derive(Clone, Debug, Default)]
pub(crate) struct WorktreeSession(pub Option<Entered>);

pub(crate) fn current(context: &Context) -> Option<Entered> {
    context
        .extensions
        .get::<WorktreeSession>()
        .and_then(|s| s.0.clone())
}

/// Moves the session into `entered.path`: the working directory, and the
/// write access of the root it worked in, go there; other roots stay.
pub(crate) fn enter(entered: Entered) -> ContextModifier {
    ContextModifier::new(move |mut context: Context| {
        let mut roots = vec![entered.path.clone()];
        roots.extend(
            entered
                .original_roots
                .iter()
                .filter(|r| !holds(r, &entered.original_cwd))
                .cloned(),
        );
        context.cwd = entered.path.clone();
        context.roots = Arc::new(roots);
        context.extensions = context.extensions.with(WorktreeSession(Some(entered)));
        context
    })
}

/// Back to where the session was before the first EnterWorktree.
pub(crate) fn leave(entered: &Entered) -> ContextModifier {
    let cwd = entered.original_cwd.clone();
    let roots = entered.original_roots.clone();
    ContextModifier::new(move |mut context: Context| {
        context.cwd = cwd;
        context.roots = roots;
        context.extensions = context.extensions.with(WorktreeSession(None));
        context
    })
}

fn holds(root: &Path, dir: &Path) -> bool {
    let resolve = baton_engine::paths::resolve;
    resolve(dir).starts_with(resolve(root))
}
