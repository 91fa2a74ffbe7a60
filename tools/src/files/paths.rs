//! Turning a tool's path argument into the file the tool really touches.
//!
//! File tools take absolute paths only: a relative path would silently depend
//! on a working directory the model may have lost track of. The path the
//! permission stage judges and the path the tool opens are the same resolved
//! path (`..` folded, symlinks followed), so a link inside the workspace that
//! points outside is seen — and judged — as the outside file. Paths outside the
//! workspace are not refused here: that is the permission stage's decision.
//!
//! A path is resolved once per call: the first resolution is kept
//! ([`judged`]) and every later question of the permission stage, and the
//! tool itself, get that one. Resolving again could give another answer
//! after a link was swapped onto the path; the tool then opens the judged
//! path without following any link ([`super::open`]).

use std::path::{Path, PathBuf};

use baton_engine::permission::FileAccess;
use baton_engine::{PermissionTarget, ToolContext};

pub(crate) use super::judged::{forget, judged, take};

/// Checks the shape of a path argument without touching the disk.
pub(crate) fn check_absolute(param: &str, raw: &str, ctx: &ToolContext) -> Result<(), String> {
    if raw.trim().is_empty() {
        return Err(format!(
            "`{param}` is empty; give the absolute path of the file."
        ));
    }
    if raw.contains('\0') {
        return Err(format!(
            "`{param}` contains a NUL byte, which no path may contain."
        ));
    }
    if !Path::new(raw).is_absolute() {
        let guess = ctx.cwd().join(raw);
        return Err(format!(
            "`{param}` must be an absolute path (starting with `/`), but `{raw}` is relative. \
             The working directory is {}, so you may mean {}.",
            ctx.cwd().display(),
            guess.display()
        ));
    }
    Ok(())
}

/// The judged location of `raw` in this call: see [`judged`].
pub(crate) fn resolve(raw: &str, ctx: &ToolContext) -> PathBuf {
    judged(&ctx.context.absolute(raw), ctx)
}

/// The judged location of `raw` for the tool about to act on it; the
/// call's entry is done with (see [`take`]).
pub(crate) fn acting_on(raw: &str, ctx: &ToolContext) -> PathBuf {
    take(&ctx.context.absolute(raw), ctx)
}

/// For `validate_input`: `raw` is judged afresh in this call (see
/// [`forget`]).
pub(crate) fn new_call(raw: &str, ctx: &ToolContext) {
    forget(&ctx.context.absolute(raw), ctx);
}

/// The real location of the absolute `path` now: `..` folded, symlinks
/// followed.
///
/// A dangling symlink is followed too: writing through `link -> /elsewhere/new`
/// creates `/elsewhere/new`, so that is the path the permission stage must
/// judge (the link's own location could be inside the workspace).
pub(crate) fn resolve_now(path: &Path) -> PathBuf {
    let mut path = baton_engine::paths::resolve(path);
    // The same bound the kernel puts on a chain of links; a loop stops here.
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else {
            return path;
        };
        let next = match path.parent() {
            Some(dir) => dir.join(target),
            None => target,
        };
        path = baton_engine::paths::resolve(&next);
    }
    path
}

/// What the permission stage judges for a file tool's call.
pub(crate) fn target(raw: &str, ctx: &ToolContext, access: FileAccess) -> PermissionTarget {
    PermissionTarget::Path {
        path: resolve(raw, ctx),
        access,
    }
}

/// A human-readable line naming both paths when a symlink was followed.
pub(crate) fn shown(raw: &str, real: &Path) -> String {
    if Path::new(raw) == real {
        raw.to_string()
    } else {
        format!("{raw} (resolved to {})", real.display())
    }
}
