//! One interactive session: a running program, the output it produced
//! since the model last looked, its input, and its end.
//!
//! A tokio task (the driver) reads the program's output into a bounded
//! [`HeadTail`] for as long as it runs, so the program never blocks on a
//! full pipe while the model thinks. When the program exits, the driver
//! reads what is left for a moment, then stops whatever it left running
//! (`server &` inside a session does not outlive the session's program),
//! and records the exit code. Asking the session to stop (pruning, the
//! engine ending) stops the whole tree: SIGTERM, a grace period, SIGKILL.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::{CancelReason, CancelScope};
use parking_lot::Mutex;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::buffer::{HeadTail, Taken};
use super::input::PendingLine;
use super::process::{self, Started};
use super::terminal::Terminal;

/// Time between SIGTERM and SIGKILL when a session is stopped.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// Output kept for the host's look at a session (`task_output`).
pub(crate) const RECENT_BYTES: usize = 8 * 1024;
/// How long output is still read after the program exited.
const DRAIN: Duration = Duration::from_millis(300);

pub(crate) struct ExecSession {
    pub id: i32,
    pub command: String,
    /// The program reads shell commands: what is written to it is judged
    /// line by line like `Bash` (see `judge`).
    pub shell_input: bool,
    pub started: Instant,
    last_used: Mutex<Instant>,
    /// Calls using the session now; a busy session is never pruned.
    busy: AtomicUsize,
    buffer: Mutex<HeadTail>,
    /// The last [`RECENT_BYTES`] of output, read or not (for the host's
    /// task list).
    recent: Mutex<std::collections::VecDeque<u8>>,
    /// The line a shell is in the middle of: judged together with what
    /// completes it.
    pub pending: Mutex<PendingLine>,
    /// The terminal of a shell session, asked who reads it before text is
    /// typed (`None` without a PTY or for other programs).
    pub terminal: Option<Arc<Terminal>>,
    /// The command line the rules judged for a call (by call id), and
    /// whether every look at it saw the same: a call types only what was
    /// judged for it.
    judged: Mutex<Option<Judged>>,
    /// Held by a call from its last look at the terminal until its text
    /// is written.
    pub typing: tokio::sync::Mutex<()>,
    input: Option<AsyncFd<OwnedFd>>,
    exit: watch::Sender<Option<i32>>,
    /// Bumped whenever output arrives (wakes a call waiting for it).
    output_seen: watch::Sender<u64>,
    stop: CancelScope,
}

struct Judged {
    call_id: String,
    text: String,
    consistent: bool,
}

/// Held by a call while it uses a session.
pub(crate) struct InUse<'a>(&'a ExecSession);

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        *self.0.last_used.lock() = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ExecSession {
    /// Starts driving `started`; the session is live from now on.
    pub(crate) fn launch(
        id: i32,
        command: &str,
        shell_input: bool,
        buffer_bytes: usize,
        mut started: Started,
        terminal: Option<Arc<Terminal>>,
        owner: &Arc<baton_engine::Session>,
    ) -> Arc<ExecSession> {
        let (exit, _) = watch::channel(None);
        let session = Arc::new(ExecSession {
            id,
            command: command.to_string(),
            shell_input,
            started: Instant::now(),
            last_used: Mutex::new(Instant::now()),
            busy: AtomicUsize::new(0),
            buffer: Mutex::new(HeadTail::new(buffer_bytes)),
            recent: Mutex::new(std::collections::VecDeque::new()),
            pending: Mutex::new(PendingLine::default()),
            terminal,
            judged: Mutex::new(None),
            typing: tokio::sync::Mutex::new(()),
            input: started.input.take(),
            exit,
            output_seen: watch::channel(0).0,
            stop: CancelScope::new(),
        });
        tokio::spawn(drive(session.clone(), started, Arc::downgrade(owner)));
        session
    }

    /// The command line the rules judge for typing `chars` now: the
    /// pending line joined with them, with the shell's directory made
    /// explicit when it is not `cwd` (as for `exec_command`'s `workdir`).
    pub(crate) fn command_for(&self, chars: &str, cwd: &std::path::Path) -> String {
        let line = self.pending.lock().with(chars);
        let dir = self.terminal.as_ref().and_then(|t| t.shell_dir());
        super::judge::command_target(&line, dir.as_deref(), cwd)
    }

    /// Notes that the rules looked at `text` for call `call_id`.
    pub(crate) fn note_judged(&self, call_id: &str, text: &str) {
        let mut judged = self.judged.lock();
        match judged.as_mut() {
            Some(j) if j.call_id == call_id => j.consistent &= j.text == text,
            _ => {
                *judged = Some(Judged {
                    call_id: call_id.to_string(),
                    text: text.to_string(),
                    consistent: true,
                })
            }
        }
    }

    /// Whether `text` is what the rules judged for `call_id`, every time
    /// they looked; forgets the note.
    pub(crate) fn was_judged(&self, call_id: &str, text: &str) -> bool {
        self.judged
            .lock()
            .take()
            .is_some_and(|j| j.call_id == call_id && j.consistent && j.text == text)
    }

    pub(crate) fn use_now(&self) -> InUse<'_> {
        self.busy.fetch_add(1, Ordering::SeqCst);
        InUse(self)
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst) > 0
    }

    pub(crate) fn last_used(&self) -> Instant {
        *self.last_used.lock()
    }

    pub(crate) fn exit_code(&self) -> Option<i32> {
        *self.exit.borrow()
    }

    pub(crate) fn has_input(&self) -> bool {
        self.input.is_some()
    }

    /// The last output (at most [`RECENT_BYTES`]) and the bytes of output
    /// so far.
    pub(crate) fn recent_output(&self) -> (Vec<u8>, u64) {
        let recent = self.recent.lock().iter().copied().collect();
        (recent, self.buffer.lock().total())
    }

    fn push(&self, bytes: &[u8]) {
        self.buffer.lock().push(bytes);
        self.output_seen.send_modify(|n| *n += 1);
        let mut recent = self.recent.lock();
        let keep = &bytes[bytes.len().saturating_sub(RECENT_BYTES)..];
        let over = (recent.len() + keep.len()).saturating_sub(RECENT_BYTES);
        recent.drain(..over);
        recent.extend(keep);
    }

    /// Asks the session to stop its whole tree; returns at once.
    pub(crate) fn request_stop(&self) {
        self.stop.cancel(CancelReason::Shutdown);
    }

    /// Waits until the program has exited and its tree is gone.
    pub(crate) async fn ended(&self) -> i32 {
        let mut rx = self.exit.subscribe();
        let code = match rx.wait_for(Option::is_some).await {
            Ok(code) => code.unwrap_or(-1),
            // The sender lives in `self`: cannot happen, but never hang.
            Err(_) => -1,
        };
        code
    }

    /// Writes `bytes` to the program's terminal.
    pub(crate) async fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        match &self.input {
            Some(fd) => process::write_all(fd, bytes).await,
            None => Err(std::io::Error::other("stdin is closed")),
        }
    }

    /// Waits `yield_for` (less if the program exits or `cancel` fires),
    /// then takes the new output and the exit code, if it exited. With
    /// `settle`, it answers earlier: once output has come and then nothing
    /// more for `settle` (a REPL that printed its answer and its prompt).
    pub(crate) async fn collect(
        &self,
        yield_for: Duration,
        settle: Option<Duration>,
        cancel: &CancelScope,
    ) -> (Taken, Option<i32>) {
        let deadline = tokio::time::Instant::now() + yield_for;
        let mut seen = self.output_seen.subscribe();
        seen.borrow_and_update();
        let quiet = async {
            let Some(settle) = settle else {
                return std::future::pending().await;
            };
            if seen.changed().await.is_err() {
                return std::future::pending().await;
            }
            // Output came: wait until it pauses.
            while let Ok(Ok(())) = tokio::time::timeout(settle, seen.changed()).await {}
        };
        tokio::select! {
            _ = self.ended() => {}
            _ = tokio::time::sleep_until(deadline) => {}
            _ = cancel.cancelled() => {}
            _ = quiet => {}
        }
        let taken = self.buffer.lock().take();
        (taken, self.exit_code())
    }
}

async fn drive(
    session: Arc<ExecSession>,
    mut started: Started,
    owner: std::sync::Weak<baton_engine::Session>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let status: Option<ExitStatus> = loop {
        tokio::select! {
            read = process::read(&started.output, &mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => session.push(&buf[..n]),
            },
            status = started.child.wait() => break status.ok(),
            _ = session.stop.cancelled() => {
                if let Some(tree) = started.guard.tree() {
                    tree.stop(STOP_GRACE).await;
                }
                break tokio::time::timeout(Duration::from_secs(1), started.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
        }
    };
    // What the program printed just before it exited is still on its way.
    let until = tokio::time::Instant::now() + DRAIN;
    while !eof {
        match tokio::time::timeout_at(until, process::read(&started.output, &mut buf)).await {
            Ok(Ok(n)) if n > 0 => session.push(&buf[..n]),
            _ => eof = true,
        }
    }
    // Nothing the program started outlives it. A stop says itself whether
    // anything survived; only then is the tree looked for again on drop.
    let gone = match started.guard.tree() {
        Some(tree) if tree.is_alive_async().await => tree.stop(STOP_GRACE).await.survivors == 0,
        _ => true,
    };
    if gone {
        // Known to be gone: no need to look for it again on drop.
        started.guard.disarm();
    }
    drop(started.egress.take());
    let code = status.map_or(-1, |s| {
        s.code()
            .or_else(|| s.signal().map(|n| 128 + n))
            .unwrap_or(-1)
    });
    session.exit.send_replace(Some(code));
    if let Some(owner) = owner.upgrade() {
        crate::tasks::changed(&owner);
    }
}
