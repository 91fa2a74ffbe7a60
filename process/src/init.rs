//! Baton as PID 1 (the documented container setup, `docker run baton …`).
//!
//! PID 1 inherits every orphan of its namespace, and a zombie stays until
//! PID 1 collects it. Baton's own code collects only what it knows: the
//! processes it spawned (each through its owner, e.g. tokio's `Child`)
//! and the zombies of trees it stops. A command whose background job ends
//! later, or a tool that double-forks, leaves zombies nobody else would
//! collect. Reaping every child blindly (`waitpid(-1)`) inside Baton would
//! steal the exit status its spawners wait for.
//!
//! So, like `tini`, a PID 1 Baton splits in two before anything starts:
//! the parent stays PID 1 and does only two things, reap every child and
//! forward signals to the other half; the child runs Baton. The child is
//! not made a subreaper, so orphans go straight to the parent, and its tree
//! tracking falls back to scanning `/proc`. When Baton exits, the parent
//! exits with its status, and the kernel ends whatever is left in the
//! namespace.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{kill, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

/// Set in the child of the split: orphans go to the parent, not to us.
static UNDER_INIT: AtomicBool = AtomicBool::new(false);

/// Whether this process runs under the PID 1 half of [`split_off_init`].
pub fn under_init() -> bool {
    UNDER_INIT.load(Ordering::Relaxed)
}

/// The signals PID 1 passes on to Baton.
const FORWARDED: [Signal; 7] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGWINCH,
];

/// When this process is PID 1, forks: returns in the child (which runs
/// Baton), while the parent reaps and forwards signals until the child
/// exits, then exits with its status. Elsewhere does nothing. Returns a
/// problem to report when PID 1 could not split (Baton then runs as PID 1,
/// without the reaper).
///
/// Call before any thread is started: `fork` copies only the calling
/// thread.
pub fn split_off_init() -> Option<String> {
    if std::process::id() != 1 {
        return None;
    }
    // SAFETY: called before any other thread exists (see above), so the
    // child is a complete copy of the process.
    match unsafe { fork() } {
        Err(e) => Some(format!(
            "running as PID 1, could not start the reaper ({e}); orphans may stay zombies"
        )),
        Ok(ForkResult::Child) => {
            UNDER_INIT.store(true, Ordering::Relaxed);
            None
        }
        Ok(ForkResult::Parent { child }) => reap_and_forward(child),
    }
}

fn reap_and_forward(child: Pid) -> ! {
    let mut set = SigSet::empty();
    set.add(Signal::SIGCHLD);
    for signal in FORWARDED {
        set.add(signal);
    }
    // Blocked, then taken one at a time with sigwait: no handler runs, so
    // nothing here is restricted to async-signal-safe calls.
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
    loop {
        // Every child that ended, ours or adopted; a SIGCHLD that came
        // before the mask was set is covered by this first sweep.
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) if pid == child => std::process::exit(code),
                Ok(WaitStatus::Signaled(pid, signal, _)) if pid == child => {
                    std::process::exit(128 + signal as i32)
                }
                Ok(WaitStatus::StillAlive) => break,
                Ok(_) => continue,
                // No children left at all: Baton is gone.
                Err(nix::errno::Errno::ECHILD) => std::process::exit(1),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
        match set.wait() {
            Ok(Signal::SIGCHLD) => {}
            Ok(signal) => {
                let _ = kill(child, signal);
            }
            Err(_) => {}
        }
    }
}
