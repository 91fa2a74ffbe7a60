//! A policy made ready in the parent, and the child's half.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use seccompiler::{sock_filter, BpfProgram};

use crate::mounts::{self, Plan, RawPlan};
use crate::netns::{self, Channel, RawNet};
use crate::policy::{Network, Policy};
use crate::support::Support;
use crate::{caps, landlock_rules, seccomp};

/// Why a policy could not be made ready.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The kernel lacks a mechanism the policy needs (what is missing).
    #[error("confinement is unavailable: {0}")]
    Unsupported(String),
    /// Building the Landlock ruleset failed (the library's message).
    #[error("could not build the Landlock ruleset: {0}")]
    Landlock(String),
    /// Compiling the seccomp filter failed (the library's message).
    #[error("could not build the seccomp filter: {0}")]
    Seccomp(String),
}

impl PrepareError {
    pub(crate) fn landlock(err: impl std::fmt::Display) -> PrepareError {
        PrepareError::Landlock(err.to_string())
    }

    pub(crate) fn seccomp(err: impl std::fmt::Display) -> PrepareError {
        PrepareError::Seccomp(err.to_string())
    }
}

/// A [`Policy`] as kernel objects, built where allocation is allowed.
/// Keep it alive until the child has executed its program: [`Entry`]
/// points into it.
#[derive(Debug)]
pub struct Prepared {
    ruleset: OwnedFd,
    programs: std::sync::Arc<Vec<BpfProgram>>,
    mounts: Plan,
    net: Option<Channel>,
    /// The kernel's last capability number, for dropping the bounding set.
    last_cap: u32,
}

impl Prepared {
    /// Builds the ruleset and filters for `policy` on a kernel with
    /// `support`. Fails (rather than confining less) when the kernel lacks
    /// Landlock or seccomp.
    pub fn new(policy: &Policy, support: &Support) -> Result<Prepared, PrepareError> {
        if let Some(why) = support.missing() {
            return Err(PrepareError::Unsupported(why));
        }
        let mounts = Plan::new(policy);
        if !mounts.is_empty() && !support.user_namespaces {
            return Err(PrepareError::Unsupported(
                "protecting paths inside writable trees needs user namespaces, which this system does not allow".into(),
            ));
        }
        if !mounts.fits() {
            return Err(PrepareError::Unsupported(format!(
                "{} entries would have to be protected from writes, more than the {} a command can have",
                mounts.len(),
                mounts::MAX_TARGETS
            )));
        }
        let net = match &policy.network {
            Network::Isolated { listen } => {
                if !support.user_namespaces {
                    return Err(PrepareError::Unsupported(
                        "a network of the command's own needs user namespaces, which this system does not allow".into(),
                    ));
                }
                Some(Channel::new(listen).map_err(|e| {
                    PrepareError::Unsupported(format!("could not create the proxy channel: {e}"))
                })?)
            }
            _ => None,
        };
        let ruleset = above_stdio(landlock_rules::build(policy, support.abi())?)?;
        let programs = seccomp::programs(policy)?;
        Ok(Prepared {
            ruleset,
            programs,
            mounts,
            net,
            last_cap: caps::last_cap(),
        })
    }

    /// The proxy listeners the child opened in its network namespace
    /// ([`Network::Isolated`]); call once the child has executed.
    pub fn take_listeners(&self) -> std::io::Result<Vec<std::net::TcpListener>> {
        match &self.net {
            Some(channel) => channel.receive(),
            None => Ok(Vec::new()),
        }
    }

    /// Extra `clone` flags the child must be created with: new user and
    /// mount namespaces when paths are protected by mounts.
    pub fn clone_flags(&self) -> libc::c_int {
        let mut flags = 0;
        if !self.mounts.is_empty() {
            flags |= libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
        }
        if self.net.is_some() {
            flags |= libc::CLONE_NEWUSER | libc::CLONE_NEWNET;
        }
        flags
    }

    /// What the child needs, as plain numbers and pointers into `self`.
    pub fn entry(&self) -> Entry {
        let mut filters = [(std::ptr::null(), 0u16); MAX_PROGRAMS];
        for (slot, program) in filters.iter_mut().zip(self.programs.iter()) {
            *slot = (program.as_ptr(), program.len() as u16);
        }
        Entry {
            ruleset: self.ruleset.as_raw_fd(),
            filters,
            mounts: if self.clone_flags() & libc::CLONE_NEWUSER != 0 {
                self.mounts.raw()
            } else {
                RawPlan::none()
            },
            net: self.net.as_ref().map_or(RawNet::none(), Channel::raw),
            last_cap: self.last_cap,
        }
    }
}

const MAX_PROGRAMS: usize = 4;

/// The child's view of a [`Prepared`]: copied into the child's arguments,
/// valid while the `Prepared` lives.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    ruleset: RawFd,
    filters: [(*const sock_filter, u16); MAX_PROGRAMS],
    mounts: RawPlan,
    net: RawNet,
    last_cap: u32,
}

// SAFETY: the pointers are read-only views of a `Prepared`'s programs,
// which the holder keeps alive; nothing is written through them.
unsafe impl Send for Entry {}
unsafe impl Sync for Entry {}

/// Which step of [`enter`] failed, with the `errno` it returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnterError {
    /// Making protected paths read-only or pinning entries with mounts.
    Mounts(i32),
    /// Setting up the command's own network.
    Network(i32),
    /// Dropping the command's capabilities.
    Capabilities(i32),
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivileges(i32),
    /// `landlock_restrict_self`.
    Landlock(i32),
    /// Installing one of the seccomp programs.
    Seccomp(i32),
}

impl EnterError {
    /// The `errno` the failing step returned.
    pub fn errno(self) -> i32 {
        match self {
            EnterError::Mounts(e)
            | EnterError::Network(e)
            | EnterError::Capabilities(e)
            | EnterError::NoNewPrivileges(e)
            | EnterError::Landlock(e)
            | EnterError::Seccomp(e) => e,
        }
    }

    /// A sentence saying which step failed, for the error shown to the user.
    pub fn what(self) -> &'static str {
        match self {
            EnterError::Mounts(_) => {
                "could not keep protected paths in place with mounts (\"stale file handle\": one was replaced while the command started)"
            }
            EnterError::Network(_) => "could not set up the command's own network",
            EnterError::Capabilities(_) => "could not drop the command's capabilities",
            EnterError::NoNewPrivileges(_) => "could not forbid privilege gains",
            EnterError::Landlock(_) => "could not enter the Landlock ruleset",
            EnterError::Seccomp(_) => "could not install the seccomp filter",
        }
    }
}

/// Confines the calling thread, for good: the read-only mounts and the
/// network (when the child was cloned with [`Prepared::clone_flags`]: they
/// need the capabilities it has in its new user namespace), every
/// capability dropped, no new privileges (so setuid programs cannot shed
/// the confinement or regain capabilities), the Landlock ruleset, then
/// each seccomp program.
///
/// # Safety
/// Meant for a child between `clone` and `exec`: it makes only raw system
/// calls and touches no memory but `entry`'s. The [`Prepared`] that made
/// `entry` must still be alive.
pub unsafe fn enter(entry: &Entry) -> Result<(), EnterError> {
    let errno = || unsafe { *libc::__errno_location() };
    if entry.mounts.in_user_namespace() && unsafe { mounts::apply(&entry.mounts) }.is_err() {
        return Err(EnterError::Mounts(errno()));
    }
    if entry.net.is_set() && unsafe { netns::apply(&entry.net) }.is_err() {
        return Err(EnterError::Network(errno()));
    }
    if unsafe { caps::drop_all(entry.last_cap) }.is_err() {
        return Err(EnterError::Capabilities(errno()));
    }
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(EnterError::NoNewPrivileges(errno()));
    }
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, entry.ruleset, 0u32) } != 0 {
        return Err(EnterError::Landlock(errno()));
    }
    for &(filter, len) in &entry.filters {
        if filter.is_null() {
            continue;
        }
        let program = libc::sock_fprog {
            len,
            filter: filter as *mut libc::sock_filter,
        };
        let installed = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &program as *const libc::sock_fprog,
            )
        };
        if installed != 0 {
            return Err(EnterError::Seccomp(errno()));
        }
    }
    Ok(())
}

/// `fd` numbered 3 or above: a host that closed its standard streams could
/// get 0–2 for a ruleset, which the child's own `dup2` onto its standard
/// streams would then replace before the sandbox is entered.
pub(crate) fn above_stdio(fd: OwnedFd) -> Result<OwnedFd, PrepareError> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicating a descriptor we own; the copy is owned below.
    let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(PrepareError::Unsupported(format!(
            "could not move a descriptor above the standard streams: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(dup) })
}
