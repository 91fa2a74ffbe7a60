//! Starting a session's program: on a fresh PTY (`tty: true`) or on a pipe,
//! always as a Baton process tree.
//!
//! The program runs in a new session like every `Bash` command, tagged so
//! that everything it starts is found and stopped with it, and killed if
//! Baton dies. With a PTY the slave side is its stdin, stdout, stderr and
//! controlling terminal (so Ctrl-C written to it interrupts, and `/dev/tty`
//! opens); without one its stdin is `/dev/null` and its output one pipe, as
//! codex does: a program that waits for input ends instead of hanging.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use baton_engine::process::{Child, TreeGuard};
use baton_engine::sandbox::proxy::Proxy;
use nix::libc;
use tokio::io::unix::AsyncFd;

use crate::bash::confine::Confined;
use crate::bash::process::model_shell;

/// What to start.
pub(crate) struct Spec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The shell program (`bash` or `sh`, as validated).
    pub shell: &'a str,
    pub login: bool,
    pub tty: bool,
    /// Input to the program is judged as command lines (`judge`): on a
    /// PTY, bash then reads plain lines (see [`SHELL_ENV`]).
    pub shell_input: bool,
    /// The settings' `env` block.
    pub env: &'a [(String, String)],
    pub confine: Option<&'a Confined>,
}

/// A started program.
pub(crate) struct Started {
    pub child: Child,
    pub guard: TreeGuard,
    /// Output (the PTY master, or the pipe's read end), non-blocking.
    pub output: AsyncFd<OwnedFd>,
    /// The PTY master again, for input; `None` without a PTY.
    pub input: Option<AsyncFd<OwnedFd>>,
    /// A third copy of the master, for asking the kernel about the
    /// terminal, and the slave's device number; `None` without a PTY.
    pub terminal: Option<(OwnedFd, u64)>,
    pub egress: Option<Proxy>,
    /// The sandbox's check (see `Confined::guard`), held as long as the
    /// program: its last holder checks when letting go.
    pub _protect: Option<std::sync::Arc<baton_engine::confine::protect::Guard>>,
}

/// The environment of a session whose input is judged as command lines,
/// so that every bash started in it reads lines as the judge does:
/// - `TERM=dumb` with `INSIDE_EMACS` set makes an interactive bash start
///   without readline (no completion on tab, no key bindings: the terminal
///   delivers the line as typed);
/// - `histchars` moves history expansion and quick substitution to Ctrl-A
///   and Ctrl-B, which are never typed into a shell (`input`). A startup
///   file may set them back, so `input` still refuses `!` and `^` where
///   bash's defaults would expand them.
pub(crate) const SHELL_ENV: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("INSIDE_EMACS", "baton"),
    ("histchars", "\u{1}\u{2}#"),
];

pub(crate) fn start(spec: &Spec<'_>) -> io::Result<Started> {
    let mut launch = model_shell(spec.shell, spec.env);
    launch
        .arg(if spec.login { "-lc" } else { "-c" })
        .arg(spec.command)
        .current_dir(spec.cwd);
    let (output, input, terminal) = if spec.tty {
        let pty = nix::pty::openpty(Some(&window()), None).map_err(io::Error::from)?;
        let slave = device_of(&pty.slave)?;
        launch
            .stdin(dup(&pty.slave)?)
            .stdout(dup(&pty.slave)?)
            .stderr(pty.slave)
            .controlling_terminal()
            .env("TERM", "xterm-256color");
        if spec.shell_input {
            for (key, value) in SHELL_ENV {
                launch.env(key, value);
            }
        }
        let master = pty.master;
        set_flags(&master)?;
        let inspect = dup(&master)?;
        let writer = dup(&master)?;
        (master, Some(writer), Some((inspect, slave)))
    } else {
        let (read, write) = pipe()?;
        launch
            .stdout(dup(&write)?)
            .stderr(write)
            // Nothing may wait for a person, nor paint for one.
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GH_PAGER", "cat")
            .env("NO_COLOR", "1")
            .env("CLICOLOR", "0")
            .env("TERM", "dumb")
            .env_remove("COLORTERM");
        (read, None, None)
    };
    if let Some(confined) = spec.confine {
        confined.apply(&mut launch);
    }
    // `launch` owns our copies of the slave / the pipe's write end and
    // drops them once the program started: EOF (or EIO on a PTY) then
    // means the program's tree closed them.
    let (child, tree) = launch.spawn()?;
    let guard = TreeGuard::new(tree);
    let egress = spec
        .confine
        .map(Confined::start_egress)
        .transpose()?
        .flatten();
    let input = match input {
        Some(fd) => {
            set_flags(&fd)?;
            Some(register(fd)?)
        }
        None => None,
    };
    Ok(Started {
        child,
        guard,
        output: register(output)?,
        input,
        terminal,
        egress,
        _protect: spec.confine.and_then(|c| c.guard.clone()),
    })
}

fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the AsyncFd owns the descriptor, which stays open until the
    // AsyncFd (and with it the registration) is dropped.
    unsafe { AsyncFd::register(fd) }.map_err(|e| io::Error::other(e.to_string()))
}

/// 24 rows of 80 columns, what programs assume of an unknown terminal.
fn window() -> nix::pty::Winsize {
    nix::pty::Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// The device number of the special file `fd` is open on.
fn device_of(fd: &OwnedFd) -> io::Result<u64> {
    // SAFETY: fstat fills a stat we own, from a descriptor we own; zeroed
    // is a valid stat to start from.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(st.st_rdev)
    }
}

fn dup(fd: &OwnedFd) -> io::Result<OwnedFd> {
    fd.try_clone()
}

/// Non-blocking (read through tokio) and close-on-exec (no other child
/// may inherit the master: it would keep the terminal open).
fn set_flags(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `(read end, non-blocking; write end, blocking)`, both close-on-exec.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 into our own array; the fds are owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors nobody else owns.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_flags(&read)?;
    Ok((read, write))
}

/// Reads what is there: `Ok(0)` at the end (EOF, or EIO once a PTY's slave
/// side is closed everywhere).
pub(crate) async fn read(fd: &AsyncFd<OwnedFd>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut ready = fd.readable().await?;
        // SAFETY: reading into our own buffer from our own descriptor.
        let res = ready.try_io(|inner| {
            let n = unsafe { libc::read(inner.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        });
        match res {
            Ok(Err(err)) if err.raw_os_error() == Some(libc::EIO) => return Ok(0),
            Ok(result) => return result,
            Err(_would_block) => continue,
        }
    }
}

/// Writes all of `bytes`.
pub(crate) async fn write_all(fd: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let mut ready = fd.writable().await?;
        // SAFETY: writing from our own buffer to our own descriptor.
        let res = ready.try_io(|inner| {
            let n = unsafe { libc::write(inner.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        });
        match res {
            Ok(Ok(n)) => bytes = &bytes[n..],
            Ok(Err(err)) => return Err(err),
            Err(_would_block) => continue,
        }
    }
    Ok(())
}
