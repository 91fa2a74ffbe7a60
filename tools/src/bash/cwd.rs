//! Carrying `cd` over to later calls.
//!
//! Each call gets a fresh shell, so a `cd` would be forgotten; models expect
//! it to stick. The shell reports its final directory (see the wrapper in
//! `process`), and the call returns a context modifier when it moved —
//! but only inside the workspace roots, so a `cd /` cannot quietly widen
//! where later relative paths point. The report covers `cd` anywhere in the
//! line (`cd build && make`), which is what a person at a terminal would
//! see too.

use std::path::PathBuf;

use baton_engine::Context;

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

/// Judges the shell's report (empty: it ended where it started) against
/// `context`.
pub(crate) fn judge(reported: &str, context: &Context) -> CwdChange {
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
        let line = |p: &std::path::Path| format!("{}\n", p.display());
        assert_eq!(judge(&line(&sub), &ctx), CwdChange::Moved(sub.clone()));
        assert_eq!(
            judge(&line(&outside_path), &ctx),
            CwdChange::Refused(outside_path.clone())
        );
        assert_eq!(judge(&line(&root_path), &ctx), CwdChange::Unchanged);
        assert_eq!(judge("relative/path\n", &ctx), CwdChange::Unchanged);
        assert_eq!(judge("", &ctx), CwdChange::Unchanged);
    }
}
