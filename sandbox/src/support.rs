//! What this kernel can enforce, probed once.

use std::sync::OnceLock;

use landlock::ABI;

/// The confinement this kernel offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none). 1 confines files; 4 adds TCP
    /// ports; 6 adds signal and abstract-socket scoping.
    pub landlock_abi: i32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether an unprivileged process may create a user namespace (needed
    /// to protect paths inside writable trees).
    pub user_namespaces: bool,
    /// Reported unusable on purpose ([`PRETEND_UNAVAILABLE_VAR`]).
    pub pretended: bool,
}

impl Support {
    /// Whether a [`crate::Policy`] can be enforced here as documented:
    /// Landlock for files and seccomp for sockets.
    pub fn usable(&self) -> bool {
        self.landlock_abi >= 1 && self.seccomp
    }

    /// Why confinement is unavailable, in a sentence (`None` when usable).
    pub fn missing(&self) -> Option<String> {
        if self.pretended {
            return Some(format!("{PRETEND_UNAVAILABLE_VAR} is set"));
        }
        match (self.landlock_abi >= 1, self.seccomp) {
            (true, true) => None,
            (false, true) => Some(
                "this kernel does not offer Landlock (it needs Linux 5.13 or later with Landlock enabled in the `lsm=` list)".into(),
            ),
            (true, false) => Some("seccomp filters cannot be installed here".into()),
            (false, false) => {
                Some("this kernel offers neither Landlock nor seccomp filters".into())
            }
        }
    }

    pub(crate) fn abi(&self) -> ABI {
        ABI::from(self.landlock_abi)
    }
}

/// This kernel's [`Support`], probed on first use.
pub fn support() -> &'static Support {
    static PROBED: OnceLock<Support> = OnceLock::new();
    PROBED.get_or_init(probe)
}

/// Set (to anything) to make [`support`] report a kernel that cannot
/// confine: for testing how a host falls back, and for diagnosing a
/// confinement problem. It can only take confinement away, never add any.
pub const PRETEND_UNAVAILABLE_VAR: &str = "BATON_SANDBOX_UNAVAILABLE";

fn probe() -> Support {
    if std::env::var_os(PRETEND_UNAVAILABLE_VAR).is_some() {
        return Support {
            landlock_abi: 0,
            seccomp: false,
            user_namespaces: false,
            pretended: true,
        };
    }
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no attribute, size 0.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    // SAFETY: a read-only query of this thread's seccomp mode.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    Support {
        landlock_abi: i32::try_from(abi.max(0)).unwrap_or(0),
        // 0: no filter yet; 2: already filtered (more may be stacked).
        seccomp: mode == 0 || mode == 2,
        user_namespaces: user_namespaces(),
        pretended: false,
    }
}

/// Tries it: a child cloned into a new user namespace that exits at once.
fn user_namespaces() -> bool {
    // SAFETY: a fork-like clone whose child only calls `_exit`; the parent
    // reaps it.
    unsafe {
        let pid = libc::syscall(
            libc::SYS_clone,
            (libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::SIGCHLD) as libc::c_ulong,
            std::ptr::null_mut::<libc::c_void>(),
        );
        if pid == 0 {
            libc::_exit(0);
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        libc::waitpid(pid as libc::pid_t, &mut status, 0) == pid as libc::pid_t
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
}
