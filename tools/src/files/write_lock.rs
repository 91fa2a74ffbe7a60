//! One writer per file at a time, across every session of this process.
//!
//! A writing tool checks the file against what the model read, then replaces
//! it. Two such calls on the same file — from parallel subagents, or from two
//! sessions of one engine — could both pass the check on the same old content,
//! and the second rename would silently drop the first change. Holding a lock
//! on the resolved path from the check to the rename makes the pair atomic for
//! Baton's own writers. (Other programs are not stopped by it; the content
//! check still catches most of their changes.)

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use parking_lot::{Condvar, Mutex};

struct Table {
    held: Mutex<HashSet<PathBuf>>,
    released: Condvar,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| Table {
    held: Mutex::new(HashSet::new()),
    released: Condvar::new(),
});

/// Held while a file is checked and replaced; released on drop.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub(crate) struct PathLock {
    path: PathBuf,
}

/// Blocks (call it on a blocking thread) until no other writer holds `path`.
pub(crate) fn lock(path: &Path) -> PathLock {
    let mut held = TABLE.held.lock();
    while held.contains(path) {
        TABLE.released.wait(&mut held);
    }
    held.insert(path.to_path_buf());
    PathLock {
        path: path.to_path_buf(),
    }
}

impl Drop for PathLock {
    fn drop(&mut self) {
        TABLE.held.lock().remove(&self.path);
        TABLE.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn excludes_writers_of_the_same_path_only() {
        let inside = Arc::new(AtomicUsize::new(0));
        let max_seen = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (inside, max_seen) = (inside.clone(), max_seen.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _g = lock(Path::new("/baton-test/same"));
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        max_seen.fetch_max(now, Ordering::SeqCst);
                        // A different path is never blocked by the held one.
                        drop(lock(&PathBuf::from(format!("/baton-test/other-{i}"))));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(max_seen.load(Ordering::SeqCst), 1);
    }
}
