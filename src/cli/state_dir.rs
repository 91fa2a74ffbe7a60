//! Where a session keeps spilled results and shell output.
//!
//! By default each session gets its own directory under the user's state
//! directory (`$XDG_STATE_HOME/baton/sessions`, else
//! `~/.local/state/baton/sessions`, else the system temp dir), named by pid
//! and start time; directories of sessions that ended more than
//! [`KEEP_FOR`] ago are removed when the next session starts, so they do
//! not pile up the way per-run directories in `/tmp` did. `--state-dir`
//! wins; a relative one is taken relative to where `baton` was started, not
//! to `--cwd` (the shell runs in `--cwd`, and must still find the files).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::CliError;

/// How long a finished session's files stay (results name them, so the
/// model may still read them in a later turn).
pub(super) const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

pub(super) fn choose(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(dir) = flag {
        return std::path::absolute(dir)
            .map_err(|e| CliError::Usage(format!("--state-dir {}: {e}", dir.display())));
    }
    let base = sessions_root();
    clean_old(&base, KEEP_FOR);
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = base.join(format!("{}-{started}", std::process::id()));
    // Age is not enough of a bound: count and size too (state_prune.rs).
    super::state_prune::prune(&base, &dir, &super::state_prune::Bounds::from_env());
    super::state_prune::remember(&dir);
    Ok(dir)
}

/// Where session directories go by default (`--resume ID` looks here).
pub(super) fn sessions_root() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/state"))
        });
    match state {
        Some(dir) => dir.join("baton/sessions"),
        None => std::env::temp_dir().join("baton-sessions"),
    }
}

/// Removes session directories older than `keep` whose process is gone.
/// Best effort: a directory that cannot be removed is left for next time.
pub(super) fn clean_old(base: &Path, keep: Duration) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, _)) = name.to_str().and_then(|n| n.split_once('-')) else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue; // maybe still running (or a reused pid: keep, to be safe)
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > keep);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_sessions_of_ended_processes_are_removed() {
        let base = tempfile::tempdir().unwrap();
        // pid 0 never has a /proc entry; our own pid does.
        let gone = base.path().join("0-1");
        let live = base.path().join(format!("{}-1", std::process::id()));
        let other = base.path().join("notes");
        for d in [&gone, &live, &other] {
            std::fs::create_dir_all(d.join("shell")).unwrap();
        }
        clean_old(base.path(), Duration::from_secs(3600));
        assert!(gone.exists(), "young directories stay");
        clean_old(base.path(), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(10));
        clean_old(base.path(), Duration::ZERO);
        assert!(!gone.exists());
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn a_relative_state_dir_is_made_absolute() {
        let dir = choose(Some(Path::new("rel/state"))).unwrap();
        assert!(dir.is_absolute());
        assert!(dir.ends_with("rel/state"));
    }
}
