//! Descriptors a command must not inherit.
//!
//! Baton's host may hand it descriptors without close-on-exec (a shell's
//! `exec 7>file`, a service manager's sockets), and libraries may open
//! some without the flag. A command would inherit them all, and a command
//! judged harmless could write through one (`echo x >&7` reached a file
//! outside the workspace in plan mode). So the child of every
//! [`super::Launch`], confined or not, marks every descriptor above the
//! standard streams close-on-exec before it executes the program; only
//! the descriptors it placed itself (standard streams and the one extra
//! descriptor, placed after this) reach the program.

use std::os::fd::RawFd;

use nix::libc;

/// Marks every descriptor above the standard streams close-on-exec: a
/// descriptor Baton inherited from its host without the flag (or that a
/// library opened without it) must not reach the program, where a command
/// judged harmless could write through it (`echo x >&7`). Marking rather
/// than closing leaves the sandbox's own descriptors usable until `exec`.
///
/// `close_range(CLOSE_RANGE_CLOEXEC)` does it in one call (Linux 5.11);
/// before that, each descriptor listed in `/proc/self/fd` is marked. False
/// when neither works (then the command does not start).
///
/// # Safety
/// Raw system calls and stack memory only: runs in the child of
/// `clone(CLONE_VM | CLONE_VFORK)`.
pub(crate) unsafe fn close_inherited() -> bool {
    unsafe {
        let marked = libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        marked == 0 || mark_listed()
    }
}

/// The fallback of [`close_inherited`]: `getdents64` on `/proc/self/fd`
/// into a stack buffer (no `opendir`, which allocates).
pub(crate) unsafe fn mark_listed() -> bool {
    unsafe {
        let dir = libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return false;
        }
        // 8-byte aligned, as `struct linux_dirent64` needs.
        let mut buf = [0u64; 512];
        let ok = loop {
            let n = libc::syscall(
                libc::SYS_getdents64,
                dir,
                buf.as_mut_ptr(),
                std::mem::size_of_val(&buf),
            );
            if n <= 0 {
                break n == 0;
            }
            let base = buf.as_ptr().cast::<u8>();
            let mut offset = 0usize;
            while offset < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen,
                // u8 type, then the NUL-terminated name.
                let entry = base.add(offset);
                let reclen = std::ptr::read_unaligned(entry.add(16).cast::<u16>()) as usize;
                if let Some(fd) = fd_number(entry.add(19)) {
                    if fd > 2 && fd != dir {
                        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                    }
                }
                offset += reclen.max(1);
            }
        };
        libc::close(dir);
        ok
    }
}

/// A directory entry's name read as a descriptor number (`.` and `..`
/// are not).
unsafe fn fd_number(name: *const u8) -> Option<RawFd> {
    let mut fd: RawFd = 0;
    let mut i = 0;
    loop {
        let c = unsafe { *name.add(i) };
        match c {
            0 if i > 0 => return Some(fd),
            b'0'..=b'9' if i < 10 => fd = fd.checked_mul(10)?.checked_add(RawFd::from(c - b'0'))?,
            _ => return None,
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;

    use nix::libc;

    /// The fallback alone (as on a kernel without `close_range`), in a
    /// forked child: a descriptor without close-on-exec does not reach the
    /// program; without the fallback it does.
    #[test]
    fn the_listing_fallback_marks_every_descriptor() {
        let file = tempfile::tempfile().unwrap();
        // SAFETY: F_DUPFD (no close-on-exec) of a descriptor we hold.
        let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 60) };
        assert!(fd >= 0);
        // SAFETY: a fresh descriptor nobody else owns.
        let held = unsafe { OwnedFd::from_raw_fd(fd) };
        let listing = |fallback: bool| {
            let mut cmd = std::process::Command::new("ls");
            cmd.arg("/proc/self/fd");
            if fallback {
                // SAFETY: `mark_listed` makes only raw system calls.
                unsafe {
                    cmd.pre_exec(|| {
                        if super::mark_listed() {
                            Ok(())
                        } else {
                            Err(std::io::Error::last_os_error())
                        }
                    });
                }
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap()
        };
        let number = fd.to_string();
        assert!(listing(false).lines().any(|l| l == number));
        assert!(!listing(true).lines().any(|l| l == number));
        drop(held);
    }
}
