//! Opening a path without following any link: the two ways the kernel
//! offers, and the one check after.
//!
//! `openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (Linux 5.6
//! and later) refuses a link anywhere on the path in one call, and with
//! `RESOLVE_BENEATH` also any step out of the directory it starts from.
//! Where the kernel lacks it (`ENOSYS`), or a seccomp filter of the host
//! refuses it (`EPERM`), the same is done by hand: one `openat` per
//! component with `O_NOFOLLOW`, each directory held by its handle
//! (`O_PATH | O_DIRECTORY`), so a link on the way fails the walk. Both
//! report a link as `ELOOP`, which [`open`] turns into
//! [`Changed`](super::Changed).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{openat, openat2, OFlag, OpenHow, ResolveFlag, AT_FDCWD};
use nix::sys::stat::{fstat, Mode, SFlag};

use super::Changed;

/// Set once the kernel said it has no `openat2`; every later open walks.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Where a path is resolved from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Start<'a> {
    /// An absolute path, from `/`.
    Root,
    /// A relative path that must stay below this directory.
    Beneath(BorrowedFd<'a>),
}

/// How to resolve: with `openat2` when the kernel has it, or always by
/// the walk (tests use that to cover kernels without `openat2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    Best,
    #[cfg_attr(not(test), allow(dead_code))]
    Walk,
}

/// Opens `path` from `start` with `flags` (`O_CLOEXEC` added), following
/// no link on the way or at the end. A link, or a step out of a
/// `Beneath` directory, is a [`Changed`] error naming `shown`.
pub(super) fn open(
    start: Start<'_>,
    path: &Path,
    flags: OFlag,
    shown: &Path,
    method: Method,
) -> io::Result<OwnedFd> {
    let flags = flags | OFlag::O_CLOEXEC;
    let result = if method == Method::Best && !NO_OPENAT2.load(Ordering::Relaxed) {
        match openat2_retrying(start, path, flags) {
            Err(Errno::ENOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                walk(start, path, flags)
            }
            // A host's seccomp filter may refuse the newer call; the walk
            // answers for itself (a real EPERM comes back from it too).
            Err(Errno::EPERM) => walk(start, path, flags),
            other => other.map_err(io::Error::from),
        }
    } else {
        walk(start, path, flags)
    };
    result.map_err(|e| changed_or(e, shown))
}

/// How often `openat2` is asked again after `EAGAIN`, which it returns
/// when a rename or mount anywhere on the system raced with a scoped
/// lookup (the man page invites a retry); only a race that persists
/// counts as a changed path.
const EAGAIN_RETRIES: usize = 8;

fn openat2_retrying(start: Start<'_>, path: &Path, flags: OFlag) -> Result<OwnedFd, Errno> {
    let mut result = by_openat2(start, path, flags);
    for _ in 0..EAGAIN_RETRIES {
        if !matches!(result, Err(Errno::EAGAIN)) {
            break;
        }
        result = by_openat2(start, path, flags);
    }
    result
}

/// `ELOOP` (a link where none may be), `EXDEV` (a step out of the start
/// directory) and `EAGAIN` (`openat2` could not rule out a race) all mean
/// the path is not the one judged.
fn changed_or(err: io::Error, shown: &Path) -> io::Error {
    match err.raw_os_error() {
        Some(code)
            if code == Errno::ELOOP as i32
                || code == Errno::EXDEV as i32
                || code == Errno::EAGAIN as i32 =>
        {
            Changed::error(shown)
        }
        _ => err,
    }
}

fn by_openat2(start: Start<'_>, path: &Path, flags: OFlag) -> nix::Result<OwnedFd> {
    let no_links = ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS;
    let how = OpenHow::new().flags(flags);
    match start {
        Start::Root => openat2(AT_FDCWD, path, how.resolve(no_links)),
        Start::Beneath(dir) => openat2(
            dir,
            path,
            how.resolve(no_links | ResolveFlag::RESOLVE_BENEATH),
        ),
    }
}

/// The component-by-component open: each directory by handle with
/// `O_NOFOLLOW`, the last one with the caller's flags and `O_NOFOLLOW`.
fn walk(start: Start<'_>, path: &Path, flags: OFlag) -> io::Result<OwnedFd> {
    let mut names: Vec<&OsStr> = Vec::new();
    for part in path.components() {
        match (part, start) {
            (Component::RootDir, Start::Root) | (Component::CurDir, _) => {}
            (Component::Normal(name), _) => names.push(name),
            // `..` (or an absolute path below a directory) could step out;
            // the paths given here never hold one, so refuse it as
            // RESOLVE_BENEATH does.
            _ => return Err(Errno::EXDEV.into()),
        }
    }
    let dir_flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut dir = match start {
        Start::Root => openat(AT_FDCWD, "/", dir_flags, Mode::empty())?,
        Start::Beneath(fd) => openat(fd, ".", dir_flags, Mode::empty())?,
    };
    let Some((last, parents)) = names.split_last() else {
        return Ok(openat(&dir, ".", flags, Mode::empty())?);
    };
    for name in parents {
        dir = step(dir.as_fd(), name, dir_flags)?;
    }
    step(dir.as_fd(), last, flags)
}

/// Opens one name in `dir` without following it. A bare handle
/// (`O_PATH`) is opened with `O_NOFOLLOW` and without `O_DIRECTORY`, so
/// that a link comes back as itself, and then judged by its own `fstat`:
/// a link is `ELOOP`, anything but a directory where one is wanted is
/// `ENOTDIR`. (Asking again by name after a failure could meet another
/// object: the swap may have been undone meanwhile.) Other opens fail on
/// a link with `ELOOP` by themselves.
fn step(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlag) -> io::Result<OwnedFd> {
    if !flags.contains(OFlag::O_PATH) {
        return Ok(openat(dir, name, flags | OFlag::O_NOFOLLOW, Mode::empty())?);
    }
    let bare = (flags - OFlag::O_DIRECTORY) | OFlag::O_NOFOLLOW;
    let fd = openat(dir, name, bare, Mode::empty())?;
    let kind = SFlag::from_bits_truncate(fstat(&fd)?.st_mode) & SFlag::S_IFMT;
    if kind == SFlag::S_IFLNK {
        return Err(Errno::ELOOP.into());
    }
    if flags.contains(OFlag::O_DIRECTORY) && kind != SFlag::S_IFDIR {
        return Err(Errno::ENOTDIR.into());
    }
    Ok(fd)
}

/// Whether the object behind `fd` is, by the kernel's account, at `judged`
/// (`/proc/self/fd/N`). A mismatch — the object was moved, or is not the
/// one the path named — is [`Changed`]. Without a readable `/proc` the
/// link-free open stands alone.
pub(super) fn confirm(fd: &OwnedFd, judged: &Path, shown: &Path) -> io::Result<()> {
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    match std::fs::read_link(link) {
        Ok(at) if at == judged => Ok(()),
        Ok(_) => Err(Changed::error(shown)),
        Err(_) => Ok(()),
    }
}
