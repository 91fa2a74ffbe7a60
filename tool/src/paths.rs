//! Path resolution shared by permission checks and file tools.
//!
//! A path is judged by where it really points: `..` is folded and symlinks are
//! followed, otherwise `root/link-to-etc/passwd` would pass a prefix check.
//! Paths that do not exist yet (a file about to be written) resolve through
//! their longest existing ancestor.

use std::path::{Component, Path, PathBuf};

/// Lexically folds `.` and `..` (no I/O).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The real location of an absolute `path`: symlinks of its longest existing
/// ancestor resolved, the missing rest appended after folding `..`.
pub fn resolve(path: &Path) -> PathBuf {
    let normalized = normalize(path);
    let mut existing = normalized.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return normalized,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_dots_and_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        let through_link = resolve(&root.join("link/new/file.txt"));
        assert!(through_link.starts_with(outside.path().canonicalize().unwrap()));
        assert_eq!(resolve(&root.join("a/../b")), root.join("b"));
    }
}
