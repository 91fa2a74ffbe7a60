//! One shell, in its own session and process group, and how to stop all of it.
//!
//! Killing only the shell would leave its children running: `make` keeps
//! compiling, `sleep 100 &` outlives the call, and a pipe held open by a
//! grandchild would keep a reader waiting. So every command runs in a fresh
//! `bash` that leads a new process group, and stopping means signalling the
//! group: SIGTERM first so programs can clean up, SIGKILL after a short
//! grace period. A guard kills the group if the owner is dropped without
//! stopping it (the pipeline drops a tool's future when it ignores
//! cancellation). Processes that leave the group on purpose (`setsid`,
//! daemons) are out of reach; that is the price of not needing cgroups.
//!
//! The shell's stdout and stderr are the same pipe, so the output reaches
//! Baton in the order it was written.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// Runs the model's command with `eval`, so the line is parsed by bash
/// exactly as typed, and reports the final working directory from an EXIT
/// trap (which also runs after an explicit `exit`). The shell's exit status
/// is the command's: bash keeps `$?` across an EXIT trap.
const WRAPPER: &str = r#"__baton_cwd_file=$1; __baton_command=$2; shift 2
trap 'builtin pwd -P >"$__baton_cwd_file" 2>/dev/null' EXIT
eval "$__baton_command""#;

/// A process group, named by its leader's pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcessGroup {
    pgid: Pid,
}

impl ProcessGroup {
    /// Whether any process (zombies included) is still in the group.
    pub(crate) fn is_alive(&self) -> bool {
        !matches!(killpg(self.pgid, None), Err(Errno::ESRCH))
    }

    pub(crate) fn signal(&self, signal: Signal) {
        // ESRCH (already gone) is the common, happy case.
        let _ = killpg(self.pgid, signal);
    }

    pub(crate) fn id(&self) -> i32 {
        self.pgid.as_raw()
    }
}

/// Kills its group when dropped, unless disarmed.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    group: Option<ProcessGroup>,
}

impl GroupGuard {
    pub(crate) fn new(group: ProcessGroup) -> Self {
        GroupGuard { group: Some(group) }
    }

    pub(crate) fn group(&self) -> Option<ProcessGroup> {
        self.group
    }

    /// Forget the group: it is known to be gone.
    pub(crate) fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            group.signal(Signal::SIGKILL);
        }
    }
}

/// A running shell: the child, its group guard and the read end of its
/// output pipe.
pub(crate) struct Shell {
    pub(crate) child: Child,
    guard: GroupGuard,
    pub(crate) output: pipe::Receiver,
}

impl Shell {
    /// Starts `bash` on `command` in `cwd`. `cwd_report` receives the final
    /// working directory.
    pub(crate) fn spawn(
        command: &str,
        cwd: &Path,
        cwd_report: &Path,
        env: &[(String, String)],
    ) -> io::Result<Shell> {
        let (writer, reader) = pipe::pipe()?;
        let stdout = writer.into_blocking_fd()?;
        let stderr = stdout.try_clone()?;
        let mut cmd = Command::new("bash");
        // The settings' `env` block first, so Baton's own settings below win.
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.arg("-c")
            .arg(WRAPPER)
            .arg("bash")
            .arg(cwd_report)
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            // Nothing may wait for a person: pagers and prompts would hang
            // until the timeout.
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .kill_on_drop(true);
        // A new session (and so a new process group led by the shell),
        // without a controlling terminal: a program that opens /dev/tty to
        // ask for a password fails at once instead of being stopped by
        // SIGTTIN and hanging until the timeout.
        //
        // SAFETY: the closure runs in the forked child before exec and only
        // calls setsid(2), which is async-signal-safe; it touches no memory
        // shared with the parent and does not allocate.
        unsafe {
            cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(io::Error::from));
        }
        let child = cmd.spawn()?;
        // The command owned our copies of the pipe's write end; only the
        // shell and its descendants hold it now, so EOF means they closed it.
        drop(cmd);
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| io::Error::other("the shell exited before it could be tracked"))?;
        Ok(Shell {
            child,
            guard: GroupGuard::new(ProcessGroup {
                pgid: Pid::from_raw(pid),
            }),
            output: reader,
        })
    }

    pub(crate) fn group(&self) -> Option<ProcessGroup> {
        self.guard.group()
    }

    /// SIGTERM to the group, up to `grace` for it to go, then SIGKILL.
    /// Returns the shell's exit status when it could be collected.
    pub(crate) async fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        let Some(group) = self.guard.group() else {
            return self.child.wait().await.ok();
        };
        group.signal(Signal::SIGTERM);
        // A stopped process only acts on SIGTERM once continued.
        group.signal(Signal::SIGCONT);
        // Bash may be blocked waiting for a foreground child; it exits once
        // that child dies of the SIGTERM.
        let deadline = tokio::time::Instant::now() + grace;
        let mut status = tokio::time::timeout_at(deadline, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        while group.is_alive() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        group.signal(Signal::SIGKILL);
        if status.is_none() {
            status = self.child.wait().await.ok();
        }
        self.guard.disarm();
        status
    }

    /// Hands the group guard over (to outlive this shell), leaving this one
    /// unarmed.
    pub(crate) fn take_guard(&mut self) -> GroupGuard {
        GroupGuard {
            group: self.guard.group.take(),
        }
    }
}
