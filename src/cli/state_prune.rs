//! Bounding the session directories by count and total size, not only age.
//!
//! Each session leaves a directory of spilled results and shell logs that
//! later turns may read, so they are kept for a while ([`KEEP_FOR`]). Age
//! alone was a weak bound: an hour of short `baton run` calls left 395
//! directories. At each start, once old directories are gone, the oldest
//! of the rest are removed while there are more than
//! [`DEFAULT_MAX_SESSIONS`] or they hold more than [`DEFAULT_MAX_BYTES`].
//! A directory whose process still runs is never removed (it may be live),
//! nor the new session's own. At exit, a session directory left empty is
//! removed.
//!
//! [`KEEP_FOR`]: super::state_dir::KEEP_FOR

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Session directories kept at most (`BATON_STATE_MAX_SESSIONS`).
pub(super) const DEFAULT_MAX_SESSIONS: usize = 100;
/// Bytes all kept session directories may hold (`BATON_STATE_MAX_BYTES`).
pub(super) const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// The bounds in force: the defaults, or the environment's when it names a
/// number (anything else is ignored with a warning; 0 keeps none).
pub(super) struct Bounds {
    pub max_sessions: usize,
    pub max_bytes: u64,
}

impl Bounds {
    pub(super) fn from_env() -> Bounds {
        Bounds {
            max_sessions: number("BATON_STATE_MAX_SESSIONS").map_or(DEFAULT_MAX_SESSIONS, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            max_bytes: number("BATON_STATE_MAX_BYTES").unwrap_or(DEFAULT_MAX_BYTES),
        }
    }
}

fn number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    match value.trim().parse() {
        Ok(n) => Some(n),
        Err(_) => {
            eprintln!("baton: {name}={value:?} is not a number; the default is used");
            None
        }
    }
}

struct Entry {
    path: PathBuf,
    modified: SystemTime,
    bytes: u64,
}

/// Removes the oldest session directories under `base` until at most
/// `bounds` remain. Directories of running processes and `live` are kept
/// (and counted). Best effort: what cannot be removed is left for next time.
pub(super) fn prune(base: &Path, live: &Path, bounds: &Bounds) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // The new session takes a place even before its directory exists.
    let mut kept_count = 1usize;
    let mut kept_bytes = 0u64;
    let mut candidates = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        // Only session directories (`<pid>-<start>`), never a symlink.
        let Some(pid) = session_pid(&path) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let bytes = size_of(&path);
        if path == live {
            kept_bytes += bytes;
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            kept_count += 1;
            kept_bytes += bytes;
            continue;
        }
        candidates.push(Entry {
            path,
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            bytes,
        });
    }
    // Newest first: they are kept while they fit.
    candidates.sort_by_key(|e| std::cmp::Reverse(e.modified));
    for entry in candidates {
        let fits = kept_count < bounds.max_sessions
            && kept_bytes.saturating_add(entry.bytes) <= bounds.max_bytes;
        if fits {
            kept_count += 1;
            kept_bytes += entry.bytes;
        } else {
            let _ = std::fs::remove_dir_all(&entry.path);
        }
    }
}

/// The pid part of a session directory's name, if it is one.
fn session_pid(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let (pid, started) = name.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(started)).then_some(pid)
}

/// Bytes of the files below `dir` (symlinks are not followed; unreadable
/// parts count as nothing).
fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

/// The session directory this process chose (not one given with
/// `--state-dir`, which belongs to the user).
static CHOSEN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

pub(super) fn remember(dir: &Path) {
    let _ = CHOSEN.set(dir.to_path_buf());
}

/// At exit: the chosen session directory goes if nothing was left in it.
pub(super) fn at_exit() {
    if let Some(dir) = CHOSEN.get() {
        remove_if_empty(dir);
    }
}

/// Removes `dir` if nothing was left in it (empty subdirectories do not
/// count).
pub(super) fn remove_if_empty(dir: &Path) {
    if size_of(dir) == 0 && no_files(dir) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn no_files(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().all(|e| {
        e.file_type()
            .map(|t| t.is_dir() && no_files(&e.path()))
            .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn session(base: &Path, name: &str, bytes: usize, age_s: u64) -> PathBuf {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("tool-results")).unwrap();
        std::fs::write(dir.join("tool-results/r.txt"), vec![b'x'; bytes]).unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        let file = std::fs::File::open(&dir).unwrap();
        file.set_modified(when).unwrap();
        dir
    }

    /// A pid no process has (pids are below 2^22 on Linux).
    const GONE: u32 = 4_000_000;

    #[test]
    fn the_oldest_go_beyond_the_count_never_a_live_one() {
        let base = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..150)
            .map(|i| {
                session(
                    base.path(),
                    &format!("{}-{i}", GONE + i),
                    10,
                    1000 - i as u64,
                )
            })
            .collect();
        // The oldest of all belongs to a running process (this one).
        let running = session(base.path(), &format!("{}-1", std::process::id()), 10, 5000);
        let live = base.path().join(format!("{}-2", GONE + 999));
        let other = base.path().join("notes");
        std::fs::create_dir_all(&other).unwrap();
        let bounds = Bounds {
            max_sessions: 100,
            max_bytes: u64::MAX,
        };
        prune(base.path(), &live, &bounds);
        let left: Vec<&PathBuf> = dirs.iter().filter(|d| d.exists()).collect();
        // 100 in all: the new session, the running one and the 98 newest.
        assert_eq!(left.len(), 98);
        assert!(dirs[52..].iter().all(|d| d.exists()), "the newest stay");
        assert!(running.exists() && other.exists());
    }

    #[test]
    fn the_oldest_go_beyond_the_size() {
        let base = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..10)
            .map(|i| {
                session(
                    base.path(),
                    &format!("{}-{i}", GONE + i),
                    1000,
                    100 - i as u64,
                )
            })
            .collect();
        let live = session(base.path(), &format!("{}-1", GONE + 50), 2500, 0);
        let bounds = Bounds {
            max_sessions: 1000,
            max_bytes: 5_000,
        };
        prune(base.path(), &live, &bounds);
        // The live session's 2,500 bytes count: two more of 1,000 fit.
        let left: Vec<usize> = (0..10).filter(|&i| dirs[i].exists()).collect();
        assert_eq!(left, vec![8, 9]);
        assert!(live.exists());
    }

    #[test]
    fn the_live_session_counts_and_stays() {
        let base = tempfile::tempdir().unwrap();
        let old = session(base.path(), &format!("{}-1", GONE), 100, 100);
        let live = session(base.path(), &format!("{}-2", GONE + 1), 100, 200);
        let bounds = Bounds {
            max_sessions: 1,
            max_bytes: u64::MAX,
        };
        prune(base.path(), &live, &bounds);
        assert!(live.exists(), "the live session is never removed");
        assert!(!old.exists(), "the live one takes the only place");
    }

    #[test]
    fn an_empty_session_directory_is_removed_at_exit() {
        let base = tempfile::tempdir().unwrap();
        let empty = base.path().join("1-1");
        std::fs::create_dir_all(empty.join("tool-results")).unwrap();
        remove_if_empty(&empty);
        assert!(!empty.exists());
        let full = session(base.path(), "1-2", 1, 0);
        remove_if_empty(&full);
        assert!(full.exists());
    }
}
