//! Opening the object that was judged, and nothing else.
//!
//! The permission stage judges a file tool's call on a resolved path (`..`
//! folded, links followed; see [`super::paths`]), and the tool acts later.
//! Opening that path by name again would let another process — a command
//! the model left running in the background — swap a directory on it for a
//! link in between, and the open would follow the link to an object nobody
//! judged: a write would land outside the workspace, a read would print a
//! file a deny rule covers.
//!
//! The judged path is fully resolved, so reaching it needs no link. Every
//! open here follows none: `openat2` with `RESOLVE_NO_SYMLINKS` (and
//! `RESOLVE_BENEATH` below a search root), or a walk of `O_NOFOLLOW` opens
//! on kernels without `openat2` ([`kernel`]). A link that appeared after
//! judging makes the open fail with [`Changed`]; the tool reports it and
//! changes nothing. A directory opened at a judged path is then checked
//! against `/proc/self/fd` (it must still be at that path), and
//! everything below it is done relative to its handle ([`Dir`]): reading,
//! creating the temporary file, the rename over the target, removing.
//!
//! Not covered: a hard link (not a symbolic one) made inside the workspace
//! to a file elsewhere is that file, by any path; the sandbox's own rules
//! decide whether a command may make one.

mod dir;
mod kernel;

#[cfg(test)]
mod tests;

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

pub use dir::{Dir, Made};

/// The path is not the one judged: a link appeared on it, or the object
/// opened is no longer at it. Carried inside an [`io::Error`]; see
/// [`is_changed`].
#[derive(Debug)]
pub(crate) struct Changed {
    path: PathBuf,
}

impl Changed {
    pub(crate) fn error(path: &Path) -> io::Error {
        io::Error::other(Changed {
            path: path.to_path_buf(),
        })
    }
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the path {} changed while it was being opened, or leads through symbolic links \
             that were not judged (a directory on it is now a link, or a link on it loops or \
             leads nowhere); Baton only opens the object it judged",
            self.path.display()
        )
    }
}

impl std::error::Error for Changed {}

/// Whether `err` says the path is not the one judged: a link appeared on
/// it, or the object opened is no longer at it.
pub fn is_changed(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<Changed>())
}

/// What is at a judged path.
#[derive(Debug)]
pub enum Found {
    /// Nothing is there (or its directory is missing).
    Missing,
    /// A regular file, open for reading, and its metadata.
    File(File, Metadata),
    /// A directory.
    Dir,
    /// A device, socket or FIFO: never opened beyond a bare handle.
    Other,
}

/// What is at the judged path `path` (absolute), found without following
/// a link. A missing parent directory is [`Found::Missing`] too.
pub(crate) fn find(path: &Path) -> io::Result<Found> {
    let Some((dir, name)) = parent_and_name(path)? else {
        return Ok(Found::Dir);
    };
    match Dir::open(dir) {
        Ok(dir) => dir.find(name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Missing),
        Err(e) => Err(e),
    }
}

/// The metadata of the object at the judged path `path`.
pub(crate) fn metadata(path: &Path) -> io::Result<Metadata> {
    match parent_and_name(path)? {
        Some((dir, name)) => Dir::open(dir)?.metadata(name),
        None => std::fs::metadata("/"),
    }
}

/// The whole content of the regular file at the judged path `path`;
/// `None` when nothing is there.
pub(crate) fn read(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match find(path)? {
        Found::Missing => Ok(None),
        Found::File(mut file, meta) => {
            let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }
        Found::Dir => Err(io::Error::from(io::ErrorKind::IsADirectory)),
        Found::Other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, socket or pipe)",
        )),
    }
}

/// Removes the file at the judged path `path`, relative to its directory's
/// handle.
pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    match parent_and_name(path)? {
        Some((dir, name)) => Dir::open(dir)?.remove(name),
        None => Err(io::Error::from(io::ErrorKind::IsADirectory)),
    }
}

/// `path`'s directory and last name; `None` for `/`. Judged paths are
/// absolute and folded (no `.` or `..`), so anything else is refused.
pub fn parent_and_name(path: &Path) -> io::Result<Option<(&Path, &std::ffi::OsStr)>> {
    let folded = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !path.is_absolute() || !folded {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute, folded path", path.display()),
        ));
    }
    Ok(path.parent().zip(path.file_name()))
}

/// Same device and inode: the same file, whatever its name now.
fn same_inode(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}
