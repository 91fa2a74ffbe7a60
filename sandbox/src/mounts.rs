//! Bind mounts that keep protected entries in place.
//!
//! Landlock cannot take a right away below a directory that has it, and the
//! right to create files in a directory is the same right that lets one be
//! replaced (unlink, then create). A protected entry that sits beside files
//! the command may write (`.git/config` beside `.git/index`, `.mcp.json` in
//! the workspace root) is therefore protected the way bubblewrap does it:
//! the command gets its own mount namespace (inside a user namespace, so no
//! privilege is needed) where each protected entry is bound onto itself. A
//! mount point cannot be unlinked or renamed (`EBUSY`); a read-only one
//! cannot be written either (`EROFS`). Landlock then forbids the command to
//! change the mount table, and seccomp refuses `umount2`.
//!
//! The child does not trust a path twice. It reaches each entry from the
//! directory above the outermost write tree that holds it (a path the
//! command cannot change), one component at a time with `O_NOFOLLOW`, checks
//! that it is the object the parent found (device and inode), and binds that
//! object through its descriptor with the new mount API (`open_tree`,
//! `mount_setattr`, `move_mount`, Linux 5.12, older than any Landlock): a
//! directory swapped for a link while the command starts fails the start
//! instead of moving the protection elsewhere. Entries are bound deepest
//! first and every bind is recursive, so that a `.git` kept in place
//! carries the read-only `config` bound inside it.
//!
//! An entry that does not exist when the command starts cannot be a mount
//! point; the engine checks for those after the command (see
//! `baton_engine::confine`).

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::policy::Policy;

/// Most entries bound for one command. Each costs a few system calls in
/// the child; a plan over this fails to prepare (rather than protecting
/// only some).
pub(crate) const MAX_TARGETS: usize = 1024;

/// One entry to bind, as the child reads it: pointers into a [`Plan`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawTarget {
    /// Where the walk starts (an absolute directory path).
    anchor: *const libc::c_char,
    /// The entry below `anchor`, components separated by `/`.
    rel: *const libc::c_char,
    dev: u64,
    ino: u64,
    read_only: bool,
}

/// The mount plan, prepared in the parent.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    // The strings the raw targets point into (a `CString`'s bytes do not
    // move when the vector grows).
    _strings: Vec<CString>,
    raw: Vec<RawTarget>,
    uid_map: CString,
    gid_map: CString,
}

// SAFETY: the raw targets point only into `_strings`, owned by the same
// plan and never changed after it is built; nothing writes through them.
unsafe impl Send for Plan {}
unsafe impl Sync for Plan {}

/// An entry before it is made raw.
struct Candidate {
    path: PathBuf,
    read_only: bool,
    identity: (u64, u64),
}

impl Plan {
    /// The plan for `policy`: its `pinned` entries as given, and each
    /// `deny_write` path that exists and is not a link, bound read-only. Entries outside every write tree need no mount
    /// (Landlock refuses writes there) and are left out, and so is anything
    /// inside a directory that is itself bound read-only.
    pub(crate) fn new(policy: &Policy) -> Plan {
        let mut found: Vec<Candidate> = policy
            .pinned
            .iter()
            .map(|p| Candidate {
                path: p.path.clone(),
                read_only: p.read_only,
                identity: p.identity,
            })
            .collect();
        for path in &policy.deny_write {
            // Links on the way are followed once, here; the entry itself
            // is never followed (a mount would follow it to its target).
            let path = &match (path.parent().map(Path::canonicalize), path.file_name()) {
                (Some(Ok(parent)), Some(name)) => parent.join(name),
                _ => continue,
            };
            if let Some(c) = found.iter_mut().find(|c| &c.path == path) {
                c.read_only = true;
                continue;
            }
            let Some((anchor, rel)) = anchor_of(&policy.write, path) else {
                continue;
            };
            if let Some(identity) = identity_below(&anchor, &rel) {
                found.push(Candidate {
                    path: path.clone(),
                    read_only: true,
                    identity,
                });
            }
        }
        // Deepest first: a directory's own bind (recursive) must carry the
        // binds made inside it.
        found.sort_by(|a, b| b.path.cmp(&a.path));
        let read_only_dirs: Vec<PathBuf> = found
            .iter()
            .filter(|c| c.read_only)
            .map(|c| c.path.clone())
            .collect();
        let mut plan = Plan::default();
        for c in found {
            let covered = read_only_dirs
                .iter()
                .any(|d| c.path != *d && c.path.starts_with(d));
            if covered {
                continue;
            }
            let Some((anchor, rel)) = anchor_of(&policy.write, &c.path) else {
                continue;
            };
            let (Ok(anchor), Ok(rel)) = (
                CString::new(anchor.as_os_str().as_bytes()),
                CString::new(rel.as_os_str().as_bytes()),
            ) else {
                continue;
            };
            plan.raw.push(RawTarget {
                anchor: anchor.as_ptr(),
                rel: rel.as_ptr(),
                dev: c.identity.0,
                ino: c.identity.1,
                read_only: c.read_only,
            });
            plan._strings.push(anchor);
            plan._strings.push(rel);
        }
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        // The command keeps its own ids inside the namespace.
        plan.uid_map = CString::new(format!("{uid} {uid} 1")).unwrap_or_default();
        plan.gid_map = CString::new(format!("{gid} {gid} 1")).unwrap_or_default();
        plan
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// How many entries the child will bind.
    pub(crate) fn len(&self) -> usize {
        self.raw.len()
    }

    pub(crate) fn raw(&self) -> RawPlan {
        RawPlan {
            targets: self.raw.as_ptr(),
            count: self.raw.len().min(MAX_TARGETS),
            uid_map: self.uid_map.as_ptr(),
            gid_map: self.gid_map.as_ptr(),
        }
    }

    /// Whether the plan stays within [`MAX_TARGETS`].
    pub(crate) fn fits(&self) -> bool {
        self.raw.len() <= MAX_TARGETS
    }
}

/// Where the child's walk to `path` starts, and the rest of the path: the
/// directory above the outermost write tree holding `path` (so that every
/// component the command could change is walked without following links).
/// `None` when no write tree holds it.
fn anchor_of(write: &[PathBuf], path: &Path) -> Option<(PathBuf, PathBuf)> {
    let tree = write
        .iter()
        .filter(|w| w.is_absolute() && path.starts_with(w))
        .min_by_key(|w| w.components().count())?;
    let anchor = tree.parent().unwrap_or(Path::new("/"));
    let rel = path.strip_prefix(anchor).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    Some((anchor.to_path_buf(), rel.to_path_buf()))
}

/// `(st_dev, st_ino)` of `anchor/rel`, reached without following any link
/// below `anchor`; `None` if it is missing, a link, or behind one.
fn identity_below(anchor: &Path, rel: &Path) -> Option<(u64, u64)> {
    let open = |dir: Option<&OwnedFd>, name: &CStr, flags: libc::c_int| -> Option<OwnedFd> {
        let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
        // SAFETY: a valid, NUL-terminated name; the result is owned below.
        let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC) };
        // SAFETY: a fresh descriptor nobody else owns.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let anchor = CString::new(anchor.as_os_str().as_bytes()).ok()?;
    let mut dir = open(None, &anchor, libc::O_PATH | libc::O_DIRECTORY)?;
    let names: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let (last, within) = names.split_last()?;
    for name in within {
        let name = CString::new(name.as_bytes()).ok()?;
        dir = open(
            Some(&dir),
            &name,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )?;
    }
    let name = CString::new(last.as_bytes()).ok()?;
    // SAFETY: fstatat into our own struct, on a descriptor we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let done = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if done != 0 || st.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return None;
    }
    Some((st.st_dev, st.st_ino))
}

/// The plan as the child sees it: pointers into a [`Plan`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawPlan {
    targets: *const RawTarget,
    count: usize,
    uid_map: *const libc::c_char,
    gid_map: *const libc::c_char,
}

impl RawPlan {
    pub(crate) fn none() -> RawPlan {
        RawPlan {
            targets: std::ptr::null(),
            count: 0,
            uid_map: std::ptr::null(),
            gid_map: std::ptr::null(),
        }
    }

    /// Whether this plan belongs to a child in a user namespace of its
    /// own (its ids must be mapped).
    pub(crate) fn in_user_namespace(&self) -> bool {
        !self.uid_map.is_null()
    }
}

/// Writes `text` to the `/proc/self` file `file` (raw calls only).
unsafe fn write_proc(file: &[u8], text: *const libc::c_char) -> bool {
    let fd = unsafe { libc::open(file.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let len = unsafe { libc::strlen(text) };
    let written = unsafe { libc::write(fd, text.cast(), len) };
    unsafe { libc::close(fd) };
    written == len as isize
}

/// In a child that was cloned into a new user namespace: maps its ids and,
/// when it also has a mount namespace, binds each target.
///
/// # Safety
/// Raw system calls only; `plan`'s pointers must be alive.
pub(crate) unsafe fn apply(plan: &RawPlan) -> Result<(), ()> {
    unsafe {
        if !write_proc(b"/proc/self/setgroups\0", c"deny".as_ptr())
            || !write_proc(b"/proc/self/uid_map\0", plan.uid_map)
            || !write_proc(b"/proc/self/gid_map\0", plan.gid_map)
        {
            return Err(());
        }
        if plan.count == 0 {
            return Ok(());
        }
        for target in std::slice::from_raw_parts(plan.targets, plan.count) {
            bind(target)?;
        }
        reenter_cwd()
    }
}

/// The working directory was entered before the mounts existed, so it
/// names the entry below any mount stacked on it since: a command started
/// in `.claude/` would write through the read-only bind. Enter it again by
/// its path, which crosses the mounts, and check it is the same directory
/// (raw calls only).
unsafe fn reenter_cwd() -> Result<(), ()> {
    unsafe {
        let mut before: libc::stat = std::mem::zeroed();
        let mut after: libc::stat = std::mem::zeroed();
        let mut path = [0u8; libc::PATH_MAX as usize];
        if libc::stat(c".".as_ptr(), &mut before) != 0
            || libc::getcwd(path.as_mut_ptr().cast(), path.len()).is_null()
            || libc::chdir(path.as_ptr().cast()) != 0
            || libc::stat(c".".as_ptr(), &mut after) != 0
        {
            return Err(());
        }
        if (before.st_dev, before.st_ino) != (after.st_dev, after.st_ino) {
            *libc::__errno_location() = libc::ESTALE;
            return Err(());
        }
    }
    Ok(())
}

/// Closes `fd` without losing the `errno` of the failure being reported.
unsafe fn close_quietly(fd: libc::c_int) {
    unsafe {
        let errno = *libc::__errno_location();
        libc::close(fd);
        *libc::__errno_location() = errno;
    }
}

/// Binds one target onto itself (raw calls only).
unsafe fn bind(target: &RawTarget) -> Result<(), ()> {
    unsafe {
        let anchor = libc::open(
            target.anchor,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if anchor < 0 {
            return Err(());
        }
        let fd = walk(anchor, target.rel);
        if fd < 0 {
            return Err(());
        }
        let result = attach(fd, target);
        close_quietly(fd);
        result
    }
}

/// Opens `rel` below `dir` (which it closes) one component at a time,
/// following no link; the final entry as an `O_PATH` descriptor, or -1.
unsafe fn walk(mut dir: libc::c_int, rel: *const libc::c_char) -> libc::c_int {
    let mut name = [0u8; 256];
    let mut at = rel.cast::<u8>();
    unsafe {
        loop {
            let mut len = 0;
            while *at != 0 && *at != b'/' {
                if len == name.len() - 1 {
                    close_quietly(dir);
                    *libc::__errno_location() = libc::ENAMETOOLONG;
                    return -1;
                }
                name[len] = *at;
                len += 1;
                at = at.add(1);
            }
            name[len] = 0;
            let last = *at == 0;
            let mut flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            if !last {
                flags |= libc::O_DIRECTORY;
            }
            let next = libc::openat(dir, name.as_ptr().cast(), flags);
            close_quietly(dir);
            if next < 0 || last {
                return next;
            }
            dir = next;
            at = at.add(1);
        }
    }
}

/// Checks that `fd` is the target's object, then stacks a recursive copy
/// of it onto itself, read-only when asked (raw calls only).
unsafe fn attach(fd: libc::c_int, target: &RawTarget) -> Result<(), ()> {
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(());
        }
        if st.st_dev != target.dev || st.st_ino != target.ino {
            *libc::__errno_location() = libc::ESTALE;
            return Err(());
        }
        let empty = c"".as_ptr();
        let tree = libc::syscall(
            libc::SYS_open_tree,
            fd,
            empty,
            libc::OPEN_TREE_CLONE
                | libc::OPEN_TREE_CLOEXEC
                | libc::AT_EMPTY_PATH as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint,
        ) as libc::c_int;
        if tree < 0 {
            return Err(());
        }
        if target.read_only {
            let attr = libc::mount_attr {
                attr_set: libc::MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            let set = libc::syscall(
                libc::SYS_mount_setattr,
                tree,
                empty,
                (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
                &attr as *const libc::mount_attr,
                std::mem::size_of::<libc::mount_attr>(),
            );
            if set != 0 {
                close_quietly(tree);
                return Err(());
            }
        }
        let moved = libc::syscall(
            libc::SYS_move_mount,
            tree,
            empty,
            fd,
            empty,
            libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH,
        );
        close_quietly(tree);
        if moved != 0 {
            return Err(());
        }
    }
    Ok(())
}
