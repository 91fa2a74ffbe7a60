//! Who will read what is typed into a shell session's terminal, asked of
//! the kernel just before Baton types it.
//!
//! Text judged as a command line must reach bash as one, at its prompt.
//! It does not when another program holds the terminal (`cat` takes the
//! text, and a Ctrl-D it is given hands the rest to bash), when bash is
//! busy with the previous line (a program it is about to start reads the
//! text first), when bash edits lines itself (readline: tab completes,
//! meta keys rewrite the line), or when the terminal's settings change
//! what it passes on (`stty` can make any character erase, end a line or
//! strip the eighth bit of UTF-8 into ASCII). So text is typed only when
//! all of this holds, each read from the kernel, not from what the
//! session was started with:
//! - the terminal's foreground process group (`tcgetpgrp` on the master)
//!   is one process, running the `bash` on the session's `PATH` (the same
//!   file, by device and inode);
//! - that bash sleeps in `read(2)` on this terminal, asking for more than
//!   one byte: its prompt, or a builtin taking a whole line (`mapfile -d`
//!   reads byte by byte and could stop mid-line);
//! - the terminal is in canonical mode (no readline, no raw program) with
//!   input translation off, and no character of the text is one of its
//!   special keys;
//! - no process of the session outside the terminal's own session holds
//!   it open (job control stops background readers; it cannot stop those).

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use baton_engine::process::table::{self, ProcInfo};
use baton_engine::process::ProcessTree;
use nix::libc;

/// How long a write waits for the shell to come back to its prompt (it
/// may be starting, or finishing the previous line) before it is refused.
pub(crate) const READY_WAIT: Duration = Duration::from_secs(1);
const READY_POLL: Duration = Duration::from_millis(25);

/// Why text cannot be typed now.
#[derive(Debug)]
pub(crate) enum NotReady {
    /// What may pass in a moment (the shell is starting, or finishing a
    /// line): worth waiting for.
    Busy(String),
    /// What waiting does not change.
    Refused(String),
}

impl NotReady {
    fn why(self) -> String {
        match self {
            NotReady::Busy(why) | NotReady::Refused(why) => why,
        }
    }
}

/// A file, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// The `bash` a session's `PATH` names, the one shell whose reading of a
/// line Baton knows. `path` is the `PATH` the session gets.
pub(crate) fn bash_on(path: Option<&std::ffi::OsStr>) -> Option<FileId> {
    std::env::split_paths(path?)
        .map(|dir| dir.join("bash"))
        .find(|p| p.is_file())
        .and_then(|p| FileId::of(&p))
}

/// A shell session's terminal, as Baton can inspect it.
pub(crate) struct Terminal {
    /// A copy of the PTY master (the kernel answers for the slave).
    master: OwnedFd,
    /// The slave's device number: what "this terminal" is in `/proc`.
    slave: u64,
    /// The bash that may read command lines.
    bash: Option<FileId>,
    /// The session's processes.
    tree: Option<Arc<ProcessTree>>,
}

impl Terminal {
    pub(crate) fn new(
        master: OwnedFd,
        slave: u64,
        bash: Option<FileId>,
        tree: Option<Arc<ProcessTree>>,
    ) -> Terminal {
        Terminal {
            master,
            slave,
            bash,
            tree,
        }
    }

    /// The process group that holds the terminal.
    fn foreground(&self) -> Result<i32, String> {
        // SAFETY: an ioctl on a descriptor we own.
        let pgrp = unsafe { libc::tcgetpgrp(self.master.as_raw_fd()) };
        if pgrp <= 0 {
            return Err(format!(
                "Which program holds this session's terminal cannot be told ({}), so nothing is \
                 typed into it.",
                std::io::Error::last_os_error()
            ));
        }
        Ok(pgrp)
    }

    fn modes(&self) -> Result<libc::termios, String> {
        // SAFETY: tcgetattr fills a termios we own, from a descriptor we
        // own; a zeroed termios is a valid value to start from.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(self.master.as_raw_fd(), &mut t) != 0 {
                return Err(format!(
                    "This session's terminal settings cannot be read ({}), so nothing is typed \
                     into it.",
                    std::io::Error::last_os_error()
                ));
            }
            Ok(t)
        }
    }

    /// Whether a Ctrl-C typed now drops the line being typed: the terminal
    /// turns it into an interrupt and flushes its input.
    pub(crate) fn interrupt_clears_line(&self) -> bool {
        self.modes().is_ok_and(|t| {
            t.c_lflag & libc::ISIG != 0
                && t.c_lflag & libc::NOFLSH == 0
                && t.c_cc[libc::VINTR] == super::input::INTERRUPT as u8
        })
    }

    /// The working directory of the bash holding the terminal, if one
    /// does: where a line typed now runs.
    pub(crate) fn shell_dir(&self) -> Option<PathBuf> {
        let pgrp = self.foreground().ok()?;
        std::fs::read_link(format!("/proc/{pgrp}/cwd")).ok()
    }

    /// Whether `text` typed now reaches bash's prompt as one line, as its
    /// bytes; `Err` says why not. Reads `/proc`: call it off the runtime.
    pub(crate) fn ready_for(&self, text: &str) -> Result<(), NotReady> {
        let pgrp = self.foreground().map_err(NotReady::Refused)?;
        let procs = table::snapshot();
        let group: Vec<&ProcInfo> = procs
            .iter()
            .filter(|p| p.pgrp == pgrp && p.is_live())
            .collect();
        if let Some(other) = group.iter().find(|p| p.pid != pgrp) {
            return Err(NotReady::Busy(format!(
                "`{}` (pid {}) runs in the foreground of this session's terminal, so text typed \
                 now could go to it instead of the shell. Wait until it ends (write_stdin with \
                 empty `chars` polls), or interrupt it with Ctrl-C (\\u0003).",
                name(other.pid),
                other.pid
            )));
        }
        if group.is_empty() {
            return Err(NotReady::Busy(
                "The program holding this session's terminal has ended.".into(),
            ));
        }
        let bash = self.bash.ok_or_else(|| {
            NotReady::Refused(
                "No `bash` was found on this session's PATH, so no program's reading of command \
                 lines is known here; text is not typed into it."
                    .into(),
            )
        })?;
        if FileId::of(Path::new(&format!("/proc/{pgrp}/exe"))) != Some(bash) {
            return Err(NotReady::Busy(format!(
                "`{}` (pid {pgrp}) holds this session's terminal, not bash: input to it is not \
                 judged like a Bash command line, so it is not typed. Wait until it ends, or \
                 interrupt it with Ctrl-C (\\u0003).",
                name(pgrp)
            )));
        }
        self.modes_pass(text).map_err(NotReady::Refused)?;
        self.reading_a_line(pgrp).map_err(NotReady::Busy)?;
        self.no_reader_outside(&procs).map_err(NotReady::Refused)
    }

    /// Waits (at most [`READY_WAIT`]) while the terminal is busy, until
    /// [`ready_for`](Self::ready_for) holds; why not when it never did.
    pub(crate) async fn wait_ready(self: &Arc<Self>, text: &str) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + READY_WAIT;
        loop {
            let me = self.clone();
            let owned = text.to_string();
            let now = tokio::task::spawn_blocking(move || me.ready_for(&owned))
                .await
                .unwrap_or_else(|e| {
                    Err(NotReady::Refused(format!("The terminal check failed: {e}")))
                });
            match now {
                Ok(()) => return Ok(()),
                Err(NotReady::Busy(_)) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(READY_POLL).await
                }
                Err(not) => return Err(not.why()),
            }
        }
    }

    /// Bash sleeps in `read` on this terminal, for more than one byte.
    fn reading_a_line(&self, pid: i32) -> Result<(), String> {
        let busy = || {
            Err(format!(
                "bash (pid {pid}) is not waiting at its prompt for a line from this terminal \
                 (it is busy, or something it runs reads input), so text typed now could be read \
                 by something else. Wait until it is done, or interrupt it with Ctrl-C \
                 (\\u0003)."
            ))
        };
        let Ok(call) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
            return Err(format!(
                "What bash (pid {pid}) is doing cannot be read from /proc, so text is not typed \
                 into this session."
            ));
        };
        let fields: Vec<&str> = call.split_whitespace().collect();
        let number = fields.first().and_then(|n| n.parse::<i64>().ok());
        let arg = |i: usize| {
            fields
                .get(i)
                .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        };
        let (Some(libc::SYS_read), Some(fd), Some(count)) = (number, arg(1), arg(3)) else {
            return busy();
        };
        let on_terminal =
            std::fs::metadata(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|m| m.rdev() == self.slave);
        if !on_terminal || count < 2 {
            return busy();
        }
        Ok(())
    }

    /// The terminal passes `text` on as typed, and as one line.
    fn modes_pass(&self, text: &str) -> Result<(), String> {
        let t = self.modes()?;
        if t.c_lflag & libc::ICANON == 0 {
            return Err(
                "This session's terminal is not in line mode: bash edits lines itself \
                 (readline: tab completes, keys rewrite the line) or a full-screen program runs. \
                 Text is typed only into a bash reading plain lines; start it with \
                 `bash --noediting` or run `set +o emacs +o vi` in it."
                    .into(),
            );
        }
        let translated = libc::ISTRIP | libc::INLCR | libc::IGNCR | libc::IUCLC;
        if t.c_iflag & translated != 0 || t.c_lflag & (libc::XCASE | libc::EXTPROC) != 0 {
            return Err(
                "This session's terminal translates input (stty istrip, inlcr, igncr, iuclc, \
                 xcase or extproc), so bash would not read the text as typed."
                    .into(),
            );
        }
        let keys = [
            libc::VINTR,
            libc::VQUIT,
            libc::VERASE,
            libc::VKILL,
            libc::VEOF,
            libc::VEOL,
            libc::VEOL2,
            libc::VSTART,
            libc::VSTOP,
            libc::VSUSP,
            libc::VREPRINT,
            libc::VDISCARD,
            libc::VWERASE,
            libc::VLNEXT,
        ];
        // 0 disables a key on Linux (_POSIX_VDISABLE).
        if let Some(b) = text
            .bytes()
            .find(|b| keys.iter().any(|&k| t.c_cc[k] != 0 && t.c_cc[k] == *b))
        {
            return Err(format!(
                "This session's terminal treats {:?} as a special key (stty), so it would not \
                 reach bash as typed.",
                b as char
            ));
        }
        Ok(())
    }

    /// No process of the session outside the terminal's session holds the
    /// terminal open: job control cannot keep it from reading.
    fn no_reader_outside(&self, procs: &[ProcInfo]) -> Result<(), String> {
        let Some(tree) = &self.tree else {
            return Ok(());
        };
        let mut sid: libc::pid_t = 0;
        // SAFETY: TIOCGSID writes one pid_t into our variable.
        if unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCGSID, &mut sid) } != 0 {
            return Err(format!(
                "This session's terminal cannot be matched to its processes ({}), so nothing is \
                 typed into it.",
                std::io::Error::last_os_error()
            ));
        }
        for p in tree.members_in(procs) {
            if p.session == sid || !p.is_live() {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", p.pid)) else {
                continue;
            };
            let holds = fds
                .filter_map(Result::ok)
                .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| m.rdev() == self.slave));
            if holds {
                return Err(format!(
                    "`{}` (pid {}) left this session's terminal session but still has the \
                     terminal open, so it could read text meant for the shell.",
                    name(p.pid),
                    p.pid
                ));
            }
        }
        Ok(())
    }
}

/// A process's command name, for messages.
fn name(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "a program".into())
}
