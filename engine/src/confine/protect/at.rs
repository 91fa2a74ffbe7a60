//! Directory-handle operations for the protection walk: every entry is
//! reached from a descriptor of its parent, never by a path resolved again,
//! and no link is followed. A sandboxed command still running may swap a
//! directory for a link at any moment; what it can reach through the walk
//! then is only the link itself, never what it points to.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use nix::dir::{Dir, Type};
use nix::fcntl::{AtFlags, OFlag, RenameFlags};
use nix::sys::stat::{FileStat, Mode, SFlag};

/// What an entry is, as `lstat` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    /// A symbolic link, with what it points to.
    Link(OsString),
    Other,
}

/// An entry's kind and identity (`st_dev`, `st_ino`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    pub kind: Kind,
    pub identity: (u64, u64),
}

/// Opens `path` (trusted, so links in it are followed) as a directory.
pub(crate) fn open_trusted(path: &Path) -> nix::Result<OwnedFd> {
    nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the directory `name` in `dir`, refusing a link.
pub(crate) fn open_dir(dir: &OwnedFd, name: &OsStr) -> nix::Result<OwnedFd> {
    nix::fcntl::openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the directory `rel` below `dir`, one component at a time,
/// refusing links.
pub(crate) fn open_below(dir: &OwnedFd, rel: &Path) -> nix::Result<OwnedFd> {
    let mut names = rel.iter();
    let Some(first) = names.next() else {
        return nix::unistd::dup(dir);
    };
    let mut at = open_dir(dir, first)?;
    for name in names {
        at = open_dir(&at, name)?;
    }
    Ok(at)
}

/// The entries of `dir` (not `.` and `..`), each with its type when the
/// file system reports it.
pub(crate) fn list(dir: &OwnedFd) -> nix::Result<Vec<(OsString, Option<Type>)>> {
    let mut listing = Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    for entry in listing.iter() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        out.push((OsString::from_vec(name.to_vec()), entry.file_type()));
    }
    Ok(out)
}

/// `lstat` of `name` in `dir`; `None` when it does not exist (or cannot be
/// looked at).
pub(crate) fn stat(dir: &OwnedFd, name: &OsStr) -> Option<Stat> {
    let st = nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    let kind = match kind_of(&st) {
        Kind::Link(_) => Kind::Link(nix::fcntl::readlinkat(dir, name).ok()?),
        other => other,
    };
    Some(Stat {
        kind,
        identity: (st.st_dev, st.st_ino),
    })
}

/// `lstat` of `rel` below `dir`, walking its directories without links.
pub(crate) fn stat_below(dir: &OwnedFd, rel: &Path) -> Option<Stat> {
    let name = rel.file_name()?;
    let parent = open_below(dir, rel.parent().unwrap_or(Path::new(""))).ok()?;
    stat(&parent, name)
}

fn kind_of(st: &FileStat) -> Kind {
    match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFLNK => Kind::Link(OsString::new()),
        _ => Kind::Other,
    }
}

/// The suffix a refused entry is renamed with: nothing reads a name
/// ending in it (no program looks for `.mcp.json.baton-refused`).
pub(crate) const REFUSED: &str = ".baton-refused";

/// Renames `name` in `dir` to a free `<name>.baton-refused[-N]` beside it,
/// never replacing anything; the new name.
pub(crate) fn rename_aside(dir: &OwnedFd, name: &OsStr) -> nix::Result<OsString> {
    let mut last = nix::errno::Errno::EEXIST;
    for n in 1..=100 {
        let mut aside = name.to_os_string();
        aside.push(REFUSED);
        if n > 1 {
            aside.push(format!("-{n}"));
        }
        match nix::fcntl::renameat2(
            dir,
            name,
            dir,
            aside.as_os_str(),
            RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => return Ok(aside),
            Err(nix::errno::Errno::EEXIST) => last = nix::errno::Errno::EEXIST,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Creates the link `name` → `target` in `dir`.
pub(crate) fn relink(dir: &OwnedFd, name: &OsStr, target: &OsStr) -> nix::Result<()> {
    nix::unistd::symlinkat(target, dir, name)
}

/// Whether `name` is `expected`, ignoring ASCII case (as the protected-path
/// check does, for file systems that ignore it).
pub(crate) fn same_name(name: &OsStr, expected: &str) -> bool {
    name.as_bytes().eq_ignore_ascii_case(expected.as_bytes())
}
