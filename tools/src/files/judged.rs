//! One resolution per path argument and call: the one that was judged.
//!
//! The engine asks a tool for its permission target at several stages (the
//! hooks' view, the rules, the approval prompt) and calls the tool after,
//! but does not hand the judged target to the call. Resolving the path
//! anew at each of those moments would let a link swapped onto it in
//! between make the tool act on a path nobody judged. So the first
//! resolution of a path in a call is kept in the session, keyed by the
//! call's id and the absolute path, and every later stage and the tool's
//! own `call` get that one.
//!
//! Life of an entry: `validate_input`, the first stage every call passes,
//! [`forget`]s what an earlier call with the same id may have left; the
//! permission stage's first question makes it ([`judged`]); the tool
//! [`take`]s it when it runs. Calls that never run (denied, cancelled)
//! leave theirs behind; past [`MAX_ENTRIES`] the oldest go. A call whose
//! entry went (or that nobody judged, as in a direct `call` from a test)
//! resolves the path when it runs — the open that follows still refuses
//! any link on the path.
//!
//! Two calls of one session share an entry only if they run at the same
//! time with the same id and path; the engine refuses repeated ids within
//! a batch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use baton_engine::ToolContext;
use parking_lot::Mutex;

/// Entries kept at most, for calls that were judged but never ran.
pub(crate) const MAX_ENTRIES: usize = 4096;

type Key = (String, PathBuf);

/// The session slot.
#[derive(Debug, Default)]
struct Judged {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    /// Each entry with the order it was made in.
    entries: HashMap<Key, (u64, PathBuf)>,
    next: u64,
}

fn slot(ctx: &ToolContext) -> std::sync::Arc<Judged> {
    ctx.session.slots().get_or_default::<Judged>()
}

fn key(path: &Path, ctx: &ToolContext) -> Key {
    (ctx.call_id.clone(), path.to_path_buf())
}

/// The resolution of the absolute `path` judged in this call: made (and
/// kept) by the first question, the same for every later one.
pub(crate) fn judged(path: &Path, ctx: &ToolContext) -> PathBuf {
    let slot = slot(ctx);
    let key = key(path, ctx);
    if let Some((_, real)) = slot.table.lock().entries.get(&key) {
        return real.clone();
    }
    // Resolved outside the lock: it reads the disk.
    let real = super::paths::resolve_now(path);
    let mut table = slot.table.lock();
    let next = table.next;
    let entry = table.entries.entry(key).or_insert((next, real));
    let real = entry.1.clone();
    table.next += 1;
    if table.entries.len() > MAX_ENTRIES {
        let oldest = table
            .entries
            .iter()
            .min_by_key(|(_, (n, _))| *n)
            .map(|(k, _)| k.clone());
        if let Some(oldest) = oldest {
            table.entries.remove(&oldest);
        }
    }
    real
}

/// The judged resolution of `path` for the tool about to act on it; the
/// entry is done with.
pub(crate) fn take(path: &Path, ctx: &ToolContext) -> PathBuf {
    let taken = slot(ctx).table.lock().entries.remove(&key(path, ctx));
    match taken {
        Some((_, real)) => real,
        None => super::paths::resolve_now(path),
    }
}

/// Forgets what an earlier call with this id left for `path`: a call's
/// judgement starts from the disk as it is when the call is validated.
pub(crate) fn forget(path: &Path, ctx: &ToolContext) {
    slot(ctx).table.lock().entries.remove(&key(path, ctx));
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_engine::{Context, Session};

    #[test]
    fn a_path_is_resolved_once_per_call_whatever_happens_after() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (inside, outside) = (root.join("inside"), root.join("outside"));
        std::fs::create_dir(&inside).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&inside, root.join("link")).unwrap();
        let session = Session::new("s", root.join("state"));
        let ctx = ToolContext::standalone("c1", Context::new(&root), session);
        let asked = root.join("link/f");

        assert_eq!(judged(&asked, &ctx), inside.join("f"));
        // The link now leads elsewhere: the call keeps what was judged.
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        assert_eq!(judged(&asked, &ctx), inside.join("f"));
        assert_eq!(take(&asked, &ctx), inside.join("f"));
        // Taken: a later call with the same id starts afresh.
        assert_eq!(judged(&asked, &ctx), outside.join("f"));
        forget(&asked, &ctx);
        let other = ToolContext::standalone("c2", Context::new(&root), ctx.session.clone());
        assert_eq!(judged(&asked, &other), outside.join("f"));
    }

    #[test]
    fn entries_of_calls_that_never_ran_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("s", dir.path().join("state"));
        let ctx = ToolContext::standalone("c", Context::new(dir.path()), session);
        for n in 0..MAX_ENTRIES + 10 {
            judged(&dir.path().join(format!("f{n}")), &ctx);
        }
        let len = slot(&ctx).table.lock().entries.len();
        assert_eq!(len, MAX_ENTRIES);
    }
}
