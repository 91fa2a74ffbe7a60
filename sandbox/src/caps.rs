//! Dropping every capability before the command executes.
//!
//! Baton often runs as root (CI, containers). A confined child would keep
//! root's capabilities: `CAP_NET_RAW` opens packet sockets, and
//! `CAP_SYS_PTRACE` (with a permitted set no smaller than Baton's) reads
//! `/proc/<baton>/environ`. So the child empties each set before it enters
//! Landlock and seccomp:
//! - the bounding set, cap by cap up to the kernel's last one (otherwise a
//!   root program would get its capabilities back at `execve`); this needs
//!   `CAP_SETPCAP`, which root has, and which a child in a user namespace
//!   of its own has there. A process without it has no capabilities to
//!   lose, and `PR_SET_NO_NEW_PRIVS` keeps `execve` from granting any;
//! - the ambient set;
//! - effective, permitted and inheritable (`capset`).
//!
//! In a child cloned into a user namespace, this comes after the mounts
//! and the network set-up, which need `CAP_SYS_ADMIN` and `CAP_NET_ADMIN`
//! in that namespace.

use std::sync::OnceLock;

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;
/// An unused `prctl` argument, as the full-width zero the kernel checks
/// (a variadic `0` is only an `int`).
const NONE: libc::c_ulong = 0;

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The highest capability number this kernel knows (`CAP_LAST_CAP`),
/// asked once in the parent: `PR_CAPBSET_READ` fails with `EINVAL` past
/// it. (Asking the kernel rather than using a compiled-in constant drops
/// capabilities newer than this program too.)
pub(crate) fn last_cap() -> u32 {
    static LAST: OnceLock<u32> = OnceLock::new();
    *LAST.get_or_init(|| {
        let mut last = 0;
        for cap in 0..64 {
            // SAFETY: a read-only query about this thread's bounding set.
            if unsafe {
                libc::prctl(
                    libc::PR_CAPBSET_READ,
                    cap as libc::c_ulong,
                    NONE,
                    NONE,
                    NONE,
                )
            } < 0
            {
                break;
            }
            last = cap;
        }
        last
    })
}

/// This thread's capability sets (raw call, no allocation).
unsafe fn get() -> Result<[Data; 2], ()> {
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    let got = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if got != 0 {
        return Err(());
    }
    Ok(data)
}

unsafe fn set(data: &[Data; 2]) -> Result<(), ()> {
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let set = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if set != 0 {
        return Err(());
    }
    Ok(())
}

/// Empties the calling thread's capability sets: bounding (when it may),
/// ambient, effective, permitted, inheritable. `errno` tells why on error.
///
/// # Safety
/// Raw system calls only, stack memory only: safe in the child of a
/// `clone(CLONE_VM | CLONE_VFORK)`.
pub(crate) unsafe fn drop_all(last_cap: u32) -> Result<(), ()> {
    unsafe {
        let mut data = get()?;
        let setpcap = 1u32 << CAP_SETPCAP;
        // Permitted but not effective: raise it, to be allowed to shrink
        // the bounding set.
        if data[0].permitted & setpcap != 0 && data[0].effective & setpcap == 0 {
            data[0].effective |= setpcap;
            set(&data)?;
        }
        if data[0].permitted & setpcap != 0 {
            for cap in 0..=last_cap {
                if libc::prctl(
                    libc::PR_CAPBSET_DROP,
                    cap as libc::c_ulong,
                    NONE,
                    NONE,
                    NONE,
                ) != 0
                {
                    return Err(());
                }
            }
        }
        // Kernels before 4.3 have no ambient set (EINVAL): nothing to clear.
        // (Emptying permitted and inheritable below would clear it too.)
        let cleared = libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            NONE,
            NONE,
            NONE,
        );
        if cleared != 0 && *libc::__errno_location() != libc::EINVAL {
            return Err(());
        }
        set(&[Data::default(); 2])
    }
}
