//! Extracting a tar archive that may be hostile.
//!
//! Everything lands below one directory handle (a temporary directory the
//! caller made), each entry created by name in its parent's handle with
//! `O_EXCL`/`O_NOFOLLOW`, never through a path. An archive is refused
//! whole, never partly skipped, if any entry:
//! - has a path that is absolute, holds `..`, or is more than
//!   [`MAX_DEPTH`] directories deep;
//! - is a device, a FIFO or a sparse file;
//! - is a symbolic link whose target is absolute or leads out of the
//!   archive's tree (judged lexically from the link's place);
//! - is a hard link to anything but a regular file extracted earlier from
//!   the same archive;
//! - lies below a link (`lnk/file`, where `lnk` is a link entry: opening
//!   a parent never follows a link);
//! - names a path twice (except directories);
//! - is refused by the judgement of its final path (see [`super::judge`]).
//!
//! Modes keep their permission bits (set-id and sticky bits dropped);
//! directories always keep the owner's `rwx`, so the tree can be filled
//! and removed. Modification times of files are kept; owners are not.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::Permissions;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use baton_tools::files::open::Dir;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fchmod, mkdirat, Mode};
use nix::unistd::{linkat, symlinkat};

use super::judge::Judge;
use super::walk::{dir_at, split, MAX_DEPTH, MAX_ENTRIES};
use super::TransferError;

/// Extracts the archive `reader` holds into `root`, whose contents will
/// end up at `target` (the judged, resolved path): each entry is judged
/// as a write of `target` joined with its path.
pub(crate) fn extract(
    reader: impl Read,
    root: &Dir,
    target: &Path,
    judge: &dyn Judge,
) -> Result<usize, TransferError> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(bad)?;
    let mut files: HashSet<PathBuf> = HashSet::new();
    let mut count = 0;
    for entry in entries {
        let mut entry = entry.map_err(bad)?;
        let kind = entry.header().entry_type();
        // Metadata for the whole archive (`git archive` writes one), not
        // a member.
        if kind == tar::EntryType::XGlobalHeader {
            continue;
        }
        count += 1;
        if count > MAX_ENTRIES {
            return Err(TransferError::TooLarge(format!(
                "the archive holds more than {MAX_ENTRIES} entries, more than one transfer takes"
            )));
        }
        let rel = member_path(&entry.path_bytes())?;
        if rel.as_os_str().is_empty() {
            // `./` itself: the directory being placed.
            if kind != tar::EntryType::Directory {
                return unsafe_entry(&rel, "has an empty path but is not a directory");
            }
            let mode = entry.header().mode().unwrap_or(0o755) & 0o777;
            chmod_dir(root, OsStr::new("."), mode | 0o700, &rel)?;
            continue;
        }
        judge.write_at(&target.join(&rel))?;
        let (within, name) = split(&rel);
        let parent = parent_dir(root, within)?;
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        let shown = || root.path().join(&rel).display().to_string();
        match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut file = parent
                    .create_new(name, 0o600)
                    .map_err(|e| created(&rel, e))?;
                io::copy(&mut entry, &mut file).map_err(|e| TransferError::io(shown(), e))?;
                file.set_permissions(Permissions::from_mode(mode))
                    .map_err(|e| TransferError::io(shown(), e))?;
                if let Ok(secs) = entry.header().mtime() {
                    let _ = file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
                }
                files.insert(rel);
            }
            tar::EntryType::Directory => make_dir(&parent, name, mode | 0o700, &rel)?,
            tar::EntryType::Symlink => {
                let link = entry
                    .link_name_bytes()
                    .ok_or_else(|| bad_entry(&rel, "is a link without a target"))?;
                let link = Path::new(OsStr::from_bytes(&link)).to_path_buf();
                stays_inside(&rel, &link)?;
                symlinkat(&link, &parent, name).map_err(|e| created(&rel, e.into()))?;
            }
            tar::EntryType::Link => {
                let link = entry
                    .link_name_bytes()
                    .ok_or_else(|| bad_entry(&rel, "is a hard link without a target"))?;
                let source = member_path(&link)?;
                if !files.contains(&source) {
                    return unsafe_entry(
                        &rel,
                        &format!(
                            "is a hard link to `{}`, which is not a regular file extracted \
                             earlier from this archive",
                            source.display()
                        ),
                    );
                }
                let (source_within, source_name) = split(&source);
                let source_dir = parent_dir(root, source_within)?;
                linkat(
                    &source_dir,
                    source_name,
                    &parent,
                    name,
                    nix::fcntl::AtFlags::empty(),
                )
                .map_err(|e| created(&rel, e.into()))?;
            }
            other => {
                return unsafe_entry(
                    &rel,
                    &format!(
                        "is a {} entry; only files, directories and links are accepted",
                        describe(other)
                    ),
                )
            }
        }
    }
    Ok(count)
}

/// A member's path as a relative path of plain names (`./` dropped), or
/// why it is refused.
fn member_path(bytes: &[u8]) -> Result<PathBuf, TransferError> {
    let path = Path::new(OsStr::from_bytes(bytes));
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => return unsafe_entry(path, "holds `..`"),
            Component::RootDir | Component::Prefix(_) => {
                return unsafe_entry(path, "is an absolute path")
            }
        }
    }
    if out.components().count() > MAX_DEPTH {
        return unsafe_entry(path, &format!("is more than {MAX_DEPTH} directories deep"));
    }
    Ok(out)
}

/// A link at `rel` pointing to `link` must stay in the archive's tree,
/// followed lexically from the link's directory.
fn stays_inside(rel: &Path, link: &Path) -> Result<(), TransferError> {
    if link.has_root() {
        return unsafe_entry(
            rel,
            &format!("is a link to the absolute path `{}`", link.display()),
        );
    }
    let mut depth = rel.components().count() - 1;
    for part in link.components() {
        match part {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => {
                return unsafe_entry(
                    rel,
                    &format!("is a link to `{}`, outside the archive", link.display()),
                )
            }
        }
    }
    Ok(())
}

/// The directory `within` below `root`, made (with its parents) when the
/// archive did not list it first. A link on the way is refused.
fn parent_dir(root: &Dir, within: &Path) -> Result<Dir, TransferError> {
    match dir_at(root, within) {
        Ok(dir) => return Ok(dir),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(through_link(within, e)),
    }
    let mut dir = dir_at(root, Path::new("")).map_err(|e| through_link(within, e))?;
    let mut rel = PathBuf::new();
    for part in within.components() {
        let name = part.as_os_str();
        rel.push(name);
        match dir.child(name) {
            Ok(next) => dir = next,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                make_dir(&dir, name, 0o755, &rel)?;
                dir = dir.child(name).map_err(|e| through_link(&rel, e))?;
            }
            Err(e) => return Err(through_link(&rel, e)),
        }
    }
    Ok(dir)
}

fn make_dir(parent: &Dir, name: &OsStr, mode: u32, rel: &Path) -> Result<(), TransferError> {
    match mkdirat(parent, name, Mode::from_bits_truncate(0o700)) {
        Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
        Err(e) => return Err(TransferError::io(rel.display(), e.into())),
    }
    chmod_dir(parent, name, mode, rel)
}

/// Sets the mode of the directory `name` in `parent`, opened without
/// following: a link or file by that name is refused.
fn chmod_dir(parent: &Dir, name: &OsStr, mode: u32, rel: &Path) -> Result<(), TransferError> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(parent, name, flags, Mode::empty()).map_err(|e| {
        through_link(
            rel,
            if e == nix::errno::Errno::ENOTDIR {
                io::Error::from(io::ErrorKind::AlreadyExists)
            } else {
                e.into()
            },
        )
    })?;
    fchmod(&fd, Mode::from_bits_truncate(mode))
        .map_err(|e| TransferError::io(rel.display(), e.into()))
}

/// Creating the entry `rel` failed: a name already there is the archive
/// naming it twice.
fn created(rel: &Path, err: io::Error) -> TransferError {
    if err.kind() == io::ErrorKind::AlreadyExists {
        return bad_entry(rel, "is named twice");
    }
    TransferError::io(rel.display(), err)
}

/// An open below the archive's tree failed: a link or a file where a
/// directory must be is the archive's doing.
fn through_link(rel: &Path, err: io::Error) -> TransferError {
    if baton_tools::files::open::is_changed(&err)
        || err.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32)
    {
        return TransferError::UnsafeArchive(format!(
            "the archive places something below `{}`, which it made a link",
            rel.display()
        ));
    }
    if matches!(
        err.kind(),
        io::ErrorKind::NotADirectory | io::ErrorKind::AlreadyExists
    ) {
        return TransferError::UnsafeArchive(format!(
            "the archive uses `{}` as a directory, but it is a file",
            rel.display()
        ));
    }
    TransferError::io(rel.display(), err)
}

fn describe(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "FIFO",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "unknown kind of",
    }
}

fn unsafe_entry<T>(path: &Path, why: &str) -> Result<T, TransferError> {
    Err(bad_entry(path, why))
}

fn bad_entry(path: &Path, why: &str) -> TransferError {
    TransferError::UnsafeArchive(format!(
        "the archive's entry `{}` {why}; nothing was placed",
        path.display()
    ))
}

fn bad(err: io::Error) -> TransferError {
    match TransferError::io("the archive", err) {
        TransferError::Io(text) => {
            TransferError::Invalid(format!("{text} (not a readable tar archive)"))
        }
        other => other,
    }
}
