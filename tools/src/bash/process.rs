//! One shell, in its own session, and how to stop all of it.
//!
//! Killing only the shell would leave its children running: `make` keeps
//! compiling, `sleep 100 &` outlives the call, and a pipe held open by a
//! grandchild would keep a reader waiting. So every command runs in a fresh
//! `bash` started as a [`ProcessTree`] (its session, its group, a tag its
//! descendants inherit, and death with Baton), and stopping means
//! signalling the whole tree — also what left the group with `set -m`,
//! `setsid` or `setpgid`: SIGTERM first so programs can clean up, SIGKILL
//! after a short grace period. A guard kills the tree if the owner is
//! dropped without stopping it (the pipeline drops a tool's future when it
//! ignores cancellation).
//!
//! The shell's stdout and stderr are the same pipe, so the output reaches
//! Baton in the order it was written. When the host asked for stderr apart
//! (`BashConfig::separate_stderr`), stderr has a pipe of its own; the model
//! still reads both in one text, in the order Baton read them, so writes to
//! the two streams in the same instant may swap places.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use baton_engine::process::{Child, Isolation, Launch, ProcessTree, StopReport, TreeGuard};
use baton_engine::sandbox::proxy::Proxy;

use super::confine::Confined;
use tokio::net::unix::pipe;

/// Runs the model's command with `eval`, so the line is parsed by bash
/// exactly as typed, and reports the final working directory from an EXIT
/// trap (which also runs after an explicit `exit`). The shell's exit status
/// is the command's: bash keeps `$?` across an EXIT trap.
///
/// The report goes to descriptor [`REPORT_FD`], a pipe Baton reads once
/// the shell has exited, and only when `$PWD` changed (most commands stay
/// where they started). A pipe rather than a file: nothing is created per
/// call, and under the OS sandbox the command needs no writable file. A
/// command that writes to that descriptor itself, or closes it, can only
/// claim a directory, which is then judged against the workspace like any
/// report (or lose its own `cd`). The wrapper's variables are read-only,
/// so that `printf -v __baton_start …` cannot change what it compares.
const WRAPPER: &str = r#"declare -r __baton_command="$1" __baton_start="$PWD"; shift
trap '[[ $PWD == "$__baton_start" ]] || builtin pwd -P >&100 2>/dev/null' EXIT
eval "$__baton_command""#;

/// The descriptor the wrapper reports the final directory on (high, so
/// that the model's own redirections, usually 3 to 9, do not meet it).
const REPORT_FD: i32 = 100;

/// A running shell: the child, its tree guard and the read end of its
/// output pipe.
pub(crate) struct Shell {
    pub(crate) child: Child,
    guard: TreeGuard,
    pub(crate) output: pipe::Receiver,
    /// The read end of stderr's own pipe, when it has one.
    pub(crate) errors: Option<pipe::Receiver>,
    _egress: Option<Proxy>,
    /// The sandbox's check (see `Confined::guard`), held as long as the
    /// shell.
    protect: Option<std::sync::Arc<baton_engine::confine::protect::Guard>>,
}

/// `program` (a shell) for a model's command: a new session without a
/// controlling terminal (see [`Shell::spawn`]), the settings' `env` block
/// first so that what the caller sets after it wins, and git never asking
/// for credentials (nobody could answer).
pub(crate) fn model_shell(program: &str, env: &[(String, String)]) -> Launch {
    let mut launch = Launch::new(program, Isolation::Session);
    for (key, value) in env {
        launch.env(key, value);
    }
    launch.env("GIT_TERMINAL_PROMPT", "0");
    launch
}

impl Shell {
    /// Starts `bash` on `command` in `cwd`. `cwd_report`, when given,
    /// receives the final working directory (see [`read_report`]).
    pub(crate) fn spawn(
        command: &str,
        cwd: &Path,
        cwd_report: Option<OwnedFd>,
        env: &[(String, String)],
        confine: Option<&Confined>,
        separate_stderr: bool,
    ) -> io::Result<Shell> {
        let (writer, reader) = pipe::pipe()?;
        let stdout = writer.into_blocking_fd()?;
        let (stderr, err_reader) = if separate_stderr {
            let (err_writer, err_reader) = pipe::pipe()?;
            (err_writer.into_blocking_fd()?, Some(err_reader))
        } else {
            (stdout.try_clone()?, None)
        };
        // A new session (and so a new process group led by the shell),
        // without a controlling terminal: a program that opens /dev/tty to
        // ask for a password fails at once instead of being stopped by
        // SIGTTIN and hanging until the timeout. Stdin is /dev/null.
        let mut launch = model_shell("bash", env);
        launch
            .arg("-c")
            .arg(WRAPPER)
            .arg("bash")
            .arg(command)
            .current_dir(cwd)
            .stdout(stdout)
            .stderr(stderr)
            // Nothing may wait for a person: a pager would hang until the
            // timeout.
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat");
        if let Some(report) = cwd_report {
            launch.fd(REPORT_FD, report);
        }
        if let Some(confined) = confine {
            confined.apply(&mut launch);
        }
        // `launch` owned our copies of the pipes' write ends; only the shell
        // and its descendants hold them now, so EOF means they closed them.
        let (child, tree) = launch.spawn()?;
        let guard = TreeGuard::new(tree);
        // The command's network, if it has one, lives as long as the shell.
        let egress = match confine.map(Confined::start_egress).transpose() {
            Ok(proxy) => proxy.flatten(),
            // The guard stops the command: it must not run without it.
            Err(err) => return Err(err),
        };
        Ok(Shell {
            child,
            guard,
            output: reader,
            errors: err_reader,
            _egress: egress,
            protect: confine.and_then(|c| c.guard.clone()),
        })
    }

    /// The sandbox's check for what the command created, if it has one.
    pub(crate) fn protection(
        &self,
    ) -> Option<std::sync::Arc<baton_engine::confine::protect::Guard>> {
        self.protect.clone()
    }

    pub(crate) fn tree(&self) -> Option<&ProcessTree> {
        self.guard.tree().map(|t| &**t)
    }

    /// SIGTERM to the whole tree, up to `grace` for it to go, then SIGKILL.
    /// Returns the shell's exit status when it could be collected, and
    /// whether anything survived.
    pub(crate) async fn stop(&mut self, grace: Duration) -> (Option<ExitStatus>, StopReport) {
        let report = match self.guard.tree() {
            Some(tree) => tree.stop(grace).await,
            None => StopReport::default(),
        };
        self.guard.disarm();
        // The shell is dead (or a zombie): this returns at once.
        let status = tokio::time::timeout(Duration::from_secs(1), self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        (status, report)
    }

    /// Hands the tree guard over (to outlive this shell), leaving this one
    /// unarmed.
    pub(crate) fn take_guard(&mut self) -> TreeGuard {
        self.guard.take()
    }
}

/// A pipe for the final-directory report: `(read end, write end)`, both
/// close-on-exec (the child gets its copy at [`REPORT_FD`]).
pub(crate) fn report_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 into our own array; the fds are owned below.
    if unsafe {
        nix::libc::pipe2(
            fds.as_mut_ptr(),
            nix::libc::O_CLOEXEC | nix::libc::O_NONBLOCK,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors nobody else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What the shell reported, once it has exited: the report is written by
/// its EXIT trap, so it is in the pipe by then. Read without waiting (a
/// background job may hold the write end open forever), at most a path's
/// worth.
pub(crate) fn read_report(read: &OwnedFd) -> String {
    let mut buf = [0u8; 4096];
    let mut len = 0;
    while len < buf.len() {
        // SAFETY: reading into our own buffer from our own descriptor.
        let n = unsafe {
            nix::libc::read(
                read.as_raw_fd(),
                buf[len..].as_mut_ptr().cast(),
                buf.len() - len,
            )
        };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    String::from_utf8_lossy(&buf[..len]).into_owned()
}
