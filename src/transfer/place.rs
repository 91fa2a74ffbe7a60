//! Putting what arrived in place whole, or not at all.
//!
//! A file is written to a temporary file in its target's directory and
//! renamed over the target; a directory is extracted into a temporary
//! directory beside its target and renamed onto it (exchanged with the
//! directory it replaces, which is then removed). Both temporaries are
//! created by name in the handle of the judged directory and renamed in
//! it, so a link swapped onto the path meanwhile cannot redirect them.
//! Nothing takes the target's name before the body has arrived complete
//! and its checksum matched.
//!
//! A temporary is removed when its guard is dropped without being kept:
//! on any error, and also when the request is dropped halfway (the client
//! went away), since the blocking side then fails to read the rest of the
//! body. Parent directories made for a placement that failed are removed
//! again.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use baton_tools::files::open::{self, Dir};
use nix::fcntl::{renameat2, RenameFlags};
use nix::sys::stat::{mkdirat, Mode};

use super::digest::{Expected, HashingReader, HashingWriter};
use super::judge::Judge;
use super::{untar, walk, Placed, TransferError};

/// Writes `body` to the judged path `target` as a regular file. `mode`
/// sets its permission bits; without it a replaced file keeps its own and
/// a new one gets 0666 minus the umask. `expect` is the checksum the
/// client announced.
pub(crate) fn file(
    target: &Path,
    body: impl Read,
    expect: &Expected,
    mode: Option<u32>,
) -> Result<Placed, TransferError> {
    in_parent(target, |dir, name| {
        file_in(dir, name, target, body, expect, mode)
    })
}

/// Runs `place` in `target`'s parent directory (made as needed); the
/// directories made for it are removed again when it fails.
fn in_parent(
    target: &Path,
    place: impl FnOnce(&Dir, &OsStr) -> Result<Placed, TransferError>,
) -> Result<Placed, TransferError> {
    let (parent, name) = parent_and_name(target)?;
    let (dir, made) =
        Dir::create_all(parent).map_err(|e| TransferError::io(parent.display(), e))?;
    let placed = place(&dir, name);
    if placed.is_err() {
        made.undo();
    }
    placed
}

fn file_in(
    dir: &Dir,
    name: &OsStr,
    target: &Path,
    body: impl Read,
    expect: &Expected,
    mode: Option<u32>,
) -> Result<Placed, TransferError> {
    let keep = match existing(dir, name, target)? {
        None => None,
        Some(meta) if meta.is_file() => Some(meta.permissions()),
        Some(meta) if meta.is_dir() => {
            return Err(TransferError::Conflict(format!(
                "`{}` is a directory; a file cannot replace it (send a tar archive, with \
                 Content-Type: application/x-tar, to replace a directory)",
                target.display()
            )))
        }
        Some(_) => {
            return Err(TransferError::Conflict(format!(
                "`{}` is not a regular file (a device, socket or FIFO)",
                target.display()
            )))
        }
    };
    let (temp, file) = Temp::file(dir, name)?;
    let mut writer = HashingWriter::new(file);
    let bytes =
        io::copy(&mut { body }, &mut writer).map_err(|e| TransferError::io(target.display(), e))?;
    let (mut file, digest) = writer.finish();
    expect.check(digest)?;
    let perms = mode.map(Permissions::from_mode).or(keep);
    let shown = |e| TransferError::io(target.display(), e);
    file.flush().map_err(shown)?;
    if let Some(perms) = perms {
        file.set_permissions(perms).map_err(shown)?;
    }
    file.sync_all().map_err(shown)?;
    drop(file);
    dir.confirm().map_err(shown)?;
    dir.rename(&temp.name, name).map_err(shown)?;
    temp.keep();
    Ok(Placed {
        digest,
        bytes,
        entries: 1,
    })
}

/// Extracts the tar archive `body` to the judged path `target`, judging
/// each entry's path with `judge`. A directory already there is replaced
/// as a whole (its removal judged entry by entry); anything else there
/// is a conflict.
pub(crate) fn dir(
    target: &Path,
    body: impl Read,
    expect: &Expected,
    judge: &dyn Judge,
) -> Result<Placed, TransferError> {
    if judge.is_root(target) {
        return Err(TransferError::Conflict(format!(
            "`{}` is a workspace root, which a transfer does not replace; send the \
             directories inside it instead",
            target.display()
        )));
    }
    in_parent(target, |dir, name| {
        dir_in(dir, name, target, body, expect, judge)
    })
}

fn dir_in(
    dir: &Dir,
    name: &OsStr,
    target: &Path,
    body: impl Read,
    expect: &Expected,
    judge: &dyn Judge,
) -> Result<Placed, TransferError> {
    let replaces = match existing(dir, name, target)? {
        None => false,
        Some(meta) if meta.is_dir() => true,
        Some(_) => {
            return Err(TransferError::Conflict(format!(
                "`{}` is not a directory; an archive does not replace it (DELETE it first)",
                target.display()
            )))
        }
    };
    let (temp, tree) = Temp::dir(dir, name)?;
    let mut reader = HashingReader::new(body);
    let entries = untar::extract(&mut reader, &tree, target, judge)?;
    let (digest, bytes) = reader
        .finish()
        .map_err(|e| TransferError::io(target.display(), e))?;
    expect.check(digest)?;
    let shown = |e: io::Error| TransferError::io(target.display(), e);
    if replaces {
        // Judged as late as can be, just before it goes: what is removed
        // is what was judged (entries added to it since stay, with it).
        let old = dir.child(name).map_err(shown)?;
        let judged = walk::judge_removal(&old, target, judge)?;
        dir.confirm().map_err(shown)?;
        renameat2(
            dir,
            temp.name.as_os_str(),
            dir,
            name,
            RenameFlags::RENAME_EXCHANGE,
        )
        .map_err(|e| shown(e.into()))?;
        // The old tree now has the temporary name, and `old` still holds
        // it by handle.
        let leftover = temp.name.clone();
        temp.keep();
        walk::remove_walked(dir, &leftover, &old, &judged).map_err(|e| {
            TransferError::Io(format!(
                "the new `{}` is in place, but the directory it replaced could not be removed \
                 ({e}); it is left at `{}`",
                target.display(),
                dir.path().join(&leftover).display()
            ))
        })?;
    } else {
        dir.confirm().map_err(shown)?;
        renameat2(
            dir,
            temp.name.as_os_str(),
            dir,
            name,
            RenameFlags::RENAME_NOREPLACE,
        )
        .map_err(|e| shown(e.into()))?;
        temp.keep();
    }
    Ok(Placed {
        digest,
        bytes,
        entries,
    })
}

fn parent_and_name(target: &Path) -> Result<(&Path, &OsStr), TransferError> {
    match open::parent_and_name(target) {
        Ok(Some(pair)) => Ok(pair),
        Ok(None) => Err(TransferError::Conflict("`/` cannot be replaced".into())),
        Err(e) => Err(TransferError::Invalid(e.to_string())),
    }
}

/// The metadata of what is at `name` in `dir` (its own: a link is not
/// followed, and one there now was not there when the path was judged);
/// `None` when nothing is.
fn existing(
    dir: &Dir,
    name: &OsStr,
    target: &Path,
) -> Result<Option<std::fs::Metadata>, TransferError> {
    match dir.metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => Err(TransferError::Conflict(format!(
            "`{}` became a symbolic link after it was judged; nothing was placed",
            target.display()
        ))),
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TransferError::io(target.display(), e)),
    }
}

/// A temporary file or directory in a judged directory, removed on drop
/// unless kept.
struct Temp<'a> {
    dir: &'a Dir,
    name: OsString,
    kept: bool,
}

impl<'a> Temp<'a> {
    /// A new, empty file beside `name`, open for writing.
    fn file(dir: &'a Dir, name: &OsStr) -> Result<(Temp<'a>, File), TransferError> {
        Temp::make(dir, name, |tmp| dir.create_new(tmp, 0o666))
    }

    /// A new, empty directory beside `name`, and its handle.
    fn dir(dir: &'a Dir, name: &OsStr) -> Result<(Temp<'a>, Dir), TransferError> {
        Temp::make(dir, name, |tmp| {
            // The umask applies, as to any new directory; an archive's
            // `./` entry sets the mode it travelled with.
            mkdirat(dir, tmp, Mode::from_bits_truncate(0o777))?;
            dir.child(tmp)
        })
    }

    /// `.<name>.<pid>-<n>.baton-transfer`, made with `make`; a name that
    /// is taken (left by another process, or chosen to collide) is skipped.
    fn make<T>(
        dir: &'a Dir,
        name: &OsStr,
        make: impl Fn(&OsStr) -> io::Result<T>,
    ) -> Result<(Temp<'a>, T), TransferError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Short enough that the temporary's name fits where the target's
        // did (names are at most 255 bytes).
        let stem: String = name.to_string_lossy().chars().take(64).collect();
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let tmp = OsString::from(format!(".{stem}.{}-{n}.baton-transfer", std::process::id()));
            match make(&tmp) {
                Ok(made) => {
                    let temp = Temp {
                        dir,
                        name: tmp,
                        kept: false,
                    };
                    return Ok((temp, made));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(TransferError::io(dir.path().display(), e)),
            }
        }
        Err(TransferError::Io(format!(
            "no free temporary name in {}",
            dir.path().display()
        )))
    }

    /// It took the target's name: nothing to remove.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if !self.kept {
            let _ = walk::remove_all(self.dir, &self.name);
        }
    }
}
