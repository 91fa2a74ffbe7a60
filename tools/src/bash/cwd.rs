//! Carrying `cd` over to later calls.
//!
//! Each call gets a fresh shell, so a `cd` would be forgotten; models expect
//! it to stick. The shell reports its final directory (see the wrapper in
//! `process`), and the call returns a context modifier when it moved —
//! but only inside the workspace roots, so a `cd /` cannot quietly widen
//! where later relative paths point. The report covers `cd` anywhere in the
//! line (`cd build && make`), which is what a person at a terminal would
//! see too.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use baton_engine::Context;

/// Where the shell of call `call_id` writes its final directory; unique
/// even if two running calls share an id.
pub(crate) fn report_path(state_dir: &Path, call_id: &str) -> PathBuf {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    state_dir
        .join("shell")
        .join(format!("{}.{n}.cwd", file_safe(call_id)))
}

/// A name usable as a file name whatever the id contains.
pub(crate) fn file_safe(id: &str) -> String {
    let safe: String = id
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "call".to_string()
    } else {
        safe
    }
}

/// What became of the working directory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CwdChange {
    Unchanged,
    Moved(PathBuf),
    /// The shell ended outside the workspace roots; later calls stay put.
    Refused(PathBuf),
}

/// Reads (and removes) the report, and judges it against `context`.
pub(crate) fn take_change(report: &Path, context: &Context) -> CwdChange {
    let reported = std::fs::read_to_string(report);
    // No report: the shell ended where it started.
    if !matches!(&reported, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
        let _ = std::fs::remove_file(report);
    }
    let Ok(reported) = reported else {
        return CwdChange::Unchanged;
    };
    let path = PathBuf::from(reported.trim_end_matches('\n'));
    // Most commands end where they started: no file system calls then.
    if path == context.cwd {
        return CwdChange::Unchanged;
    }
    if !path.is_absolute() || !path.is_dir() {
        return CwdChange::Unchanged;
    }
    let current = std::fs::canonicalize(&context.cwd).unwrap_or_else(|_| context.cwd.clone());
    if path == current {
        return CwdChange::Unchanged;
    }
    if context.is_inside_roots(&path) {
        CwdChange::Moved(path)
    } else {
        CwdChange::Refused(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_safe_file_names() {
        assert_eq!(file_safe("toolu_01AbC-9"), "toolu_01AbC-9");
        assert_eq!(file_safe("../../etc/passwd"), "______etc_passwd");
        assert_eq!(file_safe(""), "call");
    }

    #[test]
    fn judges_moves_against_the_roots() {
        let root = tempfile::tempdir().unwrap();
        let root_path = std::fs::canonicalize(root.path()).unwrap();
        let sub = root_path.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let outside_path = std::fs::canonicalize(outside.path()).unwrap();
        let ctx = Context::new(&root_path);
        let report = root_path.join("report");

        std::fs::write(&report, format!("{}\n", sub.display())).unwrap();
        assert_eq!(take_change(&report, &ctx), CwdChange::Moved(sub.clone()));
        assert!(!report.exists());

        std::fs::write(&report, format!("{}\n", outside_path.display())).unwrap();
        assert_eq!(take_change(&report, &ctx), CwdChange::Refused(outside_path));

        std::fs::write(&report, format!("{}\n", root_path.display())).unwrap();
        assert_eq!(take_change(&report, &ctx), CwdChange::Unchanged);

        std::fs::write(&report, "relative/path\n").unwrap();
        assert_eq!(take_change(&report, &ctx), CwdChange::Unchanged);
        assert_eq!(take_change(&report, &ctx), CwdChange::Unchanged);
    }
}
