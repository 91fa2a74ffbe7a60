//! Processes that end with their call: starting a command so that all of
//! it can be found again, and stopping all of it.
//!
//! Used by the shell tool, by command hooks and by anything else that runs
//! programs for a call (MCP stdio servers). The pieces:
//! - [`configure`]: how a command is started — its own session or group,
//!   a tag in its environment that its descendants inherit, and
//!   `PR_SET_PDEATHSIG`, so the command dies with Baton even on SIGKILL;
//! - [`ProcessTree`]: finding every process the command started (session,
//!   group, tag, parent links; see [`tree`]) and stopping them, without
//!   waiting for zombies;
//! - [`TreeGuard`]: kills a tree when dropped, and keeps a registry so that
//!   [`kill_all_now`] can end every tree at once (a second Ctrl-C);
//! - [`install_orphan_guard`]: for programs like the `baton` CLI — makes
//!   the process a child subreaper (orphans re-parent to it, so a container
//!   without a reaping init does not fill with zombies) and starts a small
//!   sentinel that kills every tagged process if Baton dies without
//!   cleaning up (SIGKILL), catching grandchildren that PDEATHSIG misses;
//! - [`runtime_workers`]: how many runtime workers a program that starts
//!   commands needs (each start suspends its worker for a moment).

mod children;
mod count;
mod descriptors;
mod guard;
mod init;
pub mod scan;
mod spawn;
pub mod table;
mod tree;
mod workers;

#[cfg(test)]
mod tests;

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

pub use count::PROCESS_TREES;
pub use guard::{install_orphan_guard, kill_all_now, TreeGuard};
pub use init::{split_off_init, under_init};
pub use spawn::{Child, Launch};
pub use tree::{ProcessTree, StopReport};
pub use workers::runtime_workers;

/// The environment variable that marks a tree's processes.
pub const TAG_VAR: &str = "BATON_TREE";

/// How a command is separated from Baton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// A new session without a controlling terminal (shells: a program
    /// that opens /dev/tty fails at once instead of hanging).
    Session,
    /// A new process group in Baton's session (hooks).
    Group,
}

static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

/// The tag prefix of every tree this process starts: `<pid>-`.
pub(crate) fn tag_prefix() -> String {
    format!("{}-", table::own_pid())
}

/// A tag no other tree of this process has.
pub(crate) fn new_tag() -> String {
    format!(
        "{}{}",
        tag_prefix(),
        NEXT_TAG.fetch_add(1, Ordering::Relaxed)
    )
}

/// Prepares `cmd` to be tracked as a [`ProcessTree`]; returns the tag to
/// pass to [`ProcessTree::new`] with the child's pid.
///
/// PDEATHSIG fires when the *thread* that spawned the child ends, so spawn
/// from a thread that lives as long as the command should (a tokio worker
/// or the thread running `block_on`), never from a `spawn_blocking` task.
pub fn configure(cmd: &mut tokio::process::Command, isolation: Isolation) -> String {
    let tag = new_tag();
    cmd.env(TAG_VAR, &tag);
    let parent = table::own_pid();
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls (setsid/setpgid, prctl,
    // getppid); it does not allocate or touch memory shared with the
    // parent.
    unsafe {
        cmd.pre_exec(move || {
            match isolation {
                Isolation::Session => nix::unistd::setsid().map(|_| ())?,
                Isolation::Group => nix::unistd::setpgid(
                    nix::unistd::Pid::from_raw(0),
                    nix::unistd::Pid::from_raw(0),
                )?,
            }
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            // Baton may have died between fork and prctl: then nobody
            // would ever send the signal.
            if nix::unistd::getppid().as_raw() != parent {
                return Err(io::Error::other("baton exited while starting the command"));
            }
            Ok(())
        });
    }
    tag
}
