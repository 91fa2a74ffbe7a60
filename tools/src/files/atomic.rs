//! Replacing a file so that readers see the old content or the new, never half.
//!
//! The new content goes to a temporary file in the same directory (same file
//! system, so the rename is atomic), is flushed, takes the old file's
//! permission bits, and is renamed over the target. A crash or a full disk
//! leaves the old file as it was. Directories created for a new file are
//! removed again if the write fails, so a failed call changes nothing.
//!
//! Every step happens relative to one handle on the target's directory,
//! opened at the judged path without following a link ([`open::Dir`]): the
//! temporary file is created there with `O_CREAT | O_EXCL | O_NOFOLLOW`, and
//! renamed over the target in that same directory, so a link swapped onto
//! the path meanwhile cannot redirect the write.
//!
//! Known limits: the rename gives the path a new inode, so hard links to the
//! old file keep the old content, and ownership is that of this process.

use std::ffi::{OsStr, OsString};
use std::fs::Permissions;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::open::{self, Dir};

/// Writes `bytes` to `target` (a judged path) atomically. `keep` are the
/// permissions of the file being replaced; new files get 0666 minus the
/// umask, like any editor.
pub(crate) fn write_atomic(
    target: &Path,
    bytes: &[u8],
    keep: Option<Permissions>,
) -> io::Result<()> {
    let Some((dir, name)) = open::parent_and_name(target)? else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has no parent",
        ));
    };
    let (dir, made) = Dir::create_all(dir)?;
    let result = write_in(&dir, name, bytes, keep);
    if result.is_err() {
        made.undo();
    }
    result
}

fn write_in(dir: &Dir, name: &OsStr, bytes: &[u8], keep: Option<Permissions>) -> io::Result<()> {
    let (tmp, mut file) = create_temp(dir, name)?;
    let written = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Some(perms) = keep {
            file.set_permissions(perms)?;
        }
        drop(file);
        // The directory must still be where it was judged when the new
        // content takes the name.
        dir.confirm()?;
        dir.rename(&tmp, name)
    })();
    if written.is_err() {
        let _ = dir.remove(&tmp);
    }
    written
}

/// A new, empty temporary file next to `name`: `.<name>.<unique>.baton-tmp`.
fn create_temp(dir: &Dir, name: &OsStr) -> io::Result<(OsString, std::fs::File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stem = name.to_string_lossy();
    let mut last = None;
    for _ in 0..100 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = OsString::from(format!(".{stem}.{}-{n}.baton-tmp", std::process::id()));
        match dir.create_new(&tmp, 0o666) {
            Ok(file) => return Ok((tmp, file)),
            // Left by another process, or a name chosen to collide.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}
