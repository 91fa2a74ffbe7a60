//! Read-only bind mounts for write-protected paths.
//!
//! Landlock cannot take a right away below a directory that has it, and the
//! right to create files in a directory is the same right that lets one be
//! replaced (unlink, then create). A protected file that sits beside files
//! the command may write (`.git/config` beside `.git/index`, `.mcp.json`
//! in the workspace root) is therefore protected the way bubblewrap does
//! it: the command gets its own mount namespace (inside a user namespace,
//! so no privilege is needed) where each protected path is bound onto
//! itself read-only. Writing it fails with `EROFS`; unlinking or renaming
//! it fails with `EBUSY`, as it is a mount point. Landlock then forbids the
//! command to change the mount table, and seccomp refuses `umount2`.
//!
//! A protected path that does not exist when the command starts cannot be
//! a mount point, so it is not protected this way; see the crate docs.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The mount plan, prepared in the parent.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    targets: Vec<(CString, libc::c_ulong)>,
    uid_map: CString,
    gid_map: CString,
}

/// Flags a bind mount inherits that a remount in a user namespace must
/// keep (the kernel refuses to clear flags locked by a more privileged
/// namespace).
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs on a valid, NUL-terminated path into our own struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let mut flags = 0;
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    for (st_flag, ms_flag) in pairs {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    flags
}

impl Plan {
    /// A plan binding each existing path of `protect` read-only. Paths are
    /// taken as given (callers resolve them); symbolic links are skipped,
    /// since a bind mount would follow them to their target.
    pub(crate) fn new(protect: &[PathBuf]) -> Plan {
        let mut targets = Vec::new();
        for path in protect {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                continue;
            }
            if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
                targets.push((c, locked_flags(path)));
            }
        }
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Plan {
            targets,
            // The command keeps its own ids inside the namespace.
            uid_map: CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
            gid_map: CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    pub(crate) fn raw(&self) -> RawPlan {
        let mut targets = [(std::ptr::null(), 0); MAX_TARGETS];
        for (slot, (path, flags)) in targets.iter_mut().zip(&self.targets) {
            *slot = (path.as_ptr(), *flags);
        }
        RawPlan {
            targets,
            count: self.targets.len().min(MAX_TARGETS),
            uid_map: self.uid_map.as_ptr(),
            gid_map: self.gid_map.as_ptr(),
        }
    }

    /// Whether every target fits the child's fixed-size table.
    pub(crate) fn fits(&self) -> bool {
        self.targets.len() <= MAX_TARGETS
    }
}

/// Most protected paths per command (the mandatory list plus the user's).
pub(crate) const MAX_TARGETS: usize = 64;

/// The plan as the child sees it: pointers into a [`Plan`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawPlan {
    targets: [(*const libc::c_char, libc::c_ulong); MAX_TARGETS],
    count: usize,
    uid_map: *const libc::c_char,
    gid_map: *const libc::c_char,
}

impl RawPlan {
    pub(crate) fn none() -> RawPlan {
        RawPlan {
            targets: [(std::ptr::null(), 0); MAX_TARGETS],
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
/// when it also has a mount namespace, binds each target read-only.
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
        for &(path, locked) in &plan.targets[..plan.count] {
            let none = std::ptr::null::<libc::c_char>();
            if libc::mount(
                path,
                path,
                none,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) != 0
            {
                return Err(());
            }
            let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked;
            if libc::mount(none, path, none, flags, std::ptr::null()) != 0 {
                return Err(());
            }
        }
    }
    Ok(())
}
