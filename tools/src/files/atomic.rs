//! Replacing a file so that readers see the old content or the new, never half.
//!
//! The new content goes to a temporary file in the same directory (same file
//! system, so the rename is atomic), is flushed, takes the old file's
//! permission bits, and is renamed over the target. A crash or a full disk
//! leaves the old file as it was. Directories created for a new file are
//! removed again if the write fails, so a failed call changes nothing.
//!
//! Known limits: the rename gives the path a new inode, so hard links to the
//! old file keep the old content, and ownership is that of this process.

use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `target` atomically. `keep` are the permissions of the
/// file being replaced; new files get 0666 minus the umask, like any editor.
pub fn write_atomic(target: &Path, bytes: &[u8], keep: Option<Permissions>) -> io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no parent"))?;
    let created = create_parents(dir)?;
    let result = write_in(dir, target, bytes, keep);
    if result.is_err() {
        for made in created.iter().rev() {
            let _ = fs::remove_dir(made);
        }
    }
    result
}

fn write_in(dir: &Path, target: &Path, bytes: &[u8], keep: Option<Permissions>) -> io::Result<()> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".baton-tmp")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(perms) = keep {
        fs::set_permissions(tmp.path(), perms)?;
    }
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Creates the missing ancestors of `dir`, returning those it created,
/// outermost first.
fn create_parents(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(p) = cur {
        if p.exists() {
            break;
        }
        missing.push(p.to_path_buf());
        cur = p.parent();
    }
    missing.reverse();
    let mut created = Vec::new();
    for p in &missing {
        match fs::create_dir(p) {
            Ok(()) => created.push(p.clone()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && p.is_dir() => {}
            Err(e) => {
                for made in created.iter().rev() {
                    let _ = fs::remove_dir(made);
                }
                return Err(e);
            }
        }
    }
    Ok(created)
}
