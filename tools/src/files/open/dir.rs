//! A handle on a judged directory, and everything done relative to it.
//!
//! Once a directory is open, the names below it are looked up in that very
//! directory, whatever its path leads to by then: a file is found, created,
//! renamed and removed there (`openat`, `renameat`, `unlinkat` on the
//! handle), never by a path resolved again. Names are single components
//! and are not followed if they are links.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{fcntl, renameat, FcntlArg, OFlag};
use nix::sys::stat::{mkdirat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};

use super::kernel::{self, Method, Start};
use super::{Changed, Found};

/// Lookups of one name before a file that keeps being replaced between
/// the two opens of [`Dir::find`] counts as changed.
const FIND_ATTEMPTS: usize = 16;

/// An open directory (`O_PATH`), and the judged path it was opened at.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    method: Method,
}

/// Directories [`Dir::create_all`] made, to remove again when the write
/// they were made for fails.
#[derive(Debug, Default)]
#[must_use = "directories made for a failed write are removed with `undo`"]
pub struct Made(Vec<(Dir, OsString)>);

impl Made {
    /// Removes the directories made, innermost first (each only if still
    /// empty), relative to the handle of its parent.
    pub fn undo(self) {
        for (parent, name) in self.0.into_iter().rev() {
            let _ = unlinkat(&parent.fd, name.as_os_str(), UnlinkatFlags::RemoveDir);
        }
    }
}

impl Dir {
    /// Opens the judged directory `path` (absolute), following no link.
    pub fn open(path: &Path) -> io::Result<Dir> {
        Dir::open_by(path, Method::Best)
    }

    pub(super) fn open_by(path: &Path, method: Method) -> io::Result<Dir> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY;
        let fd = kernel::open(Start::Root, path, flags, path, method)?;
        kernel::confirm(&fd, path, path)?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
            method,
        })
    }

    /// Opens `path`, first making the directories it lacks: each one with
    /// `mkdirat` in the handle of its parent, then opened from that handle
    /// without following a link. Returns the directories it made.
    pub fn create_all(path: &Path) -> io::Result<(Dir, Made)> {
        Dir::create_all_by(path, Method::Best)
    }

    pub(super) fn create_all_by(path: &Path, method: Method) -> io::Result<(Dir, Made)> {
        match Dir::open_by(path, method) {
            Ok(dir) => return Ok((dir, Made::default())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} does not exist", path.display()),
            ));
        };
        let (parent, mut made) = Dir::create_all_by(parent, method)?;
        let created = match mkdirat(&parent.fd, name, Mode::from_bits_truncate(0o777)) {
            Ok(()) => true,
            // Made meanwhile by someone else: used, but not ours to remove.
            Err(Errno::EEXIST) => false,
            Err(e) => {
                made.undo();
                return Err(e.into());
            }
        };
        let child = parent.child(name);
        if created {
            made.0.push((parent, name.to_os_string()));
        }
        match child {
            Ok(dir) => Ok((dir, made)),
            Err(e) => {
                made.undo();
                Err(e)
            }
        }
    }

    /// The judged path this directory was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `name` in this one.
    pub fn child(&self, name: &OsStr) -> io::Result<Dir> {
        let path = self.path.join(name);
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY;
        let fd = kernel::open(
            Start::Beneath(self.fd.as_fd()),
            Path::new(name),
            flags,
            &path,
            self.method,
        )?;
        Ok(Dir {
            fd,
            path,
            method: self.method,
        })
    }

    /// `name` in this directory, a link not followed. A regular file comes
    /// open for reading: first opened as a bare handle (`O_PATH`, which
    /// never starts a device or blocks on a FIFO), then, once known to be a
    /// regular file, opened again and checked to be the same inode.
    ///
    /// Another inode the second time is a file replaced at the same name
    /// in between (an editor's or a parallel Edit's atomic rename): still
    /// the judged path, reached without a link, so the lookup is made
    /// again, a bounded number of times.
    pub fn find(&self, name: &OsStr) -> io::Result<Found> {
        for _ in 1..FIND_ATTEMPTS {
            match self.find_once(name)? {
                Some(found) => return Ok(found),
                None => continue,
            }
        }
        self.find_once(name)?
            .ok_or_else(|| Changed::error(&self.path.join(name)))
    }

    /// One lookup; `None` when the file was replaced between its two opens.
    fn find_once(&self, name: &OsStr) -> io::Result<Option<Found>> {
        let shown = self.path.join(name);
        let handle = match self.open_name(name, OFlag::O_PATH) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Some(Found::Missing)),
            Err(e) => return Err(e),
        };
        let meta = File::from(handle).metadata()?;
        if meta.file_type().is_symlink() {
            return Err(Changed::error(&shown));
        }
        if meta.is_dir() {
            return Ok(Some(Found::Dir));
        }
        if !meta.is_file() {
            return Ok(Some(Found::Other));
        }
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
        let fd = self.open_name(name, flags)?;
        // Regular files ignore O_NONBLOCK; it only kept a FIFO swapped in
        // meanwhile from blocking the open. Cleared so reads are plain.
        let _ = fcntl(&fd, FcntlArg::F_SETFL(OFlag::empty()));
        let file = File::from(fd);
        let now = file.metadata()?;
        if !super::same_inode(&meta, &now) {
            return Ok(None);
        }
        Ok(Some(Found::File(file, now)))
    }

    /// The metadata of `name` itself (a link's own, not its target's).
    pub fn metadata(&self, name: &OsStr) -> io::Result<Metadata> {
        File::from(self.open_name(name, OFlag::O_PATH)?).metadata()
    }

    /// Opens `name` without following it: a link at the end is `ELOOP`
    /// ([`Changed`]), or, with `O_PATH`, opened as itself for `find` to see.
    fn open_name(&self, name: &OsStr, flags: OFlag) -> io::Result<OwnedFd> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        match nix::fcntl::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(fd),
            Err(Errno::ELOOP) => Err(Changed::error(&self.path.join(name))),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates `name` as a new file (never through anything already there,
    /// a link included) with `mode` before the umask, open for writing.
    pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::openat(&self.fd, name, flags, Mode::from_bits_truncate(mode))?;
        Ok(File::from(fd))
    }

    /// Renames `from` to `to`, both in this directory; `to` is replaced
    /// atomically (a link there is replaced, not followed).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Removes the file (or link) `name` from this directory.
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        Ok(unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir)?)
    }

    /// Up to `max` names in this directory, in the order the file system
    /// gives them.
    pub fn names(&self, max: usize) -> io::Result<Vec<OsString>> {
        use std::os::unix::ffi::OsStrExt;
        let fd = nix::fcntl::openat(
            &self.fd,
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut listing = nix::dir::Dir::from_fd(fd)?;
        let mut out = Vec::new();
        for entry in listing.iter() {
            if out.len() >= max {
                break;
            }
            let Ok(entry) = entry else { continue };
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                out.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(out)
    }

    /// Opens the regular file at `rel` (relative, no `..`) below this
    /// directory, following no link on the way: how a search reads a file
    /// its walk found by name. A link, a step out, or anything but a
    /// regular file is an error.
    pub fn open_file_beneath(&self, rel: &Path) -> io::Result<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
        let fd = self.open_beneath(rel, flags)?;
        let _ = fcntl(&fd, FcntlArg::F_SETFL(OFlag::empty()));
        let file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.path.join(rel).display()),
            ));
        }
        Ok(file)
    }

    /// The directory at `rel` below this one, reached without a link.
    pub fn dir_beneath(&self, rel: &Path) -> io::Result<Dir> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY;
        Ok(Dir {
            fd: self.open_beneath(rel, flags)?,
            path: self.path.join(rel),
            method: self.method,
        })
    }

    fn open_beneath(&self, rel: &Path, flags: OFlag) -> io::Result<OwnedFd> {
        let shown = self.path.join(rel);
        kernel::open(
            Start::Beneath(self.fd.as_fd()),
            rel,
            flags,
            &shown,
            self.method,
        )
    }

    /// Checks, just before a write lands, that this directory is still at
    /// its judged path.
    pub fn confirm(&self) -> io::Result<()> {
        kernel::confirm(&self.fd, &self.path, &self.path)
    }
}

/// The handle, for what this type does not offer (`mkdirat`, `symlinkat`,
/// `linkat`, …): whatever is done with it must name single components and
/// follow no link, as everything here does.
impl AsFd for Dir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
