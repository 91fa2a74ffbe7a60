//! Driving one shell from start to end.
//!
//! The call ends when the shell exits, not when its output pipe closes: a
//! grandchild started with `&` holds the pipe open for as long as it runs,
//! and must not hold the call with it. After the exit, output already in
//! the pipe is read for a short moment, then reading stops. A timeout or a
//! cancellation stops the whole process tree and keeps the output so far:
//! once nothing of the tree runs, nothing can hold the pipe open, so it is
//! read to its end — what the command printed before it was stopped is in
//! its result, however slow the machine is to deliver it.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::CancelScope;
use parking_lot::Mutex;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::{Instant, MissedTickBehavior};

use super::output::{Capture, Stream};
use super::process::Shell;
use super::progress::Reporter;
use baton_engine::process::StopReport;

/// Bytes read from the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ending {
    Exited(ExitStatus),
    /// The time limit (as the call asked for it) ran out.
    TimedOut {
        limit: Duration,
        stop: StopReport,
    },
    Cancelled(StopReport),
    /// The shell goes on as a background task: its time limit ran out
    /// (with `timeout_detaches`), or the host asked for it. Nothing was
    /// stopped and the pipe was not drained; the caller hands the shell on.
    Detached(Detach),
    /// The shell could not be waited for (it is stopped regardless).
    Lost(String),
}

/// Why a run handed its shell on instead of ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Detach {
    /// The call's time limit ran out; the value is that limit.
    AtTimeout(Duration),
    /// The host sent the call to the background.
    ByHost,
}

pub(crate) struct Limits {
    /// `None`: no time limit (background tasks).
    pub timeout: Option<Duration>,
    pub stop_grace: Duration,
    /// How long to keep reading after the shell exited.
    pub drain: Duration,
    /// At the time limit, hand the shell on ([`Ending::Detached`]) rather
    /// than stop it.
    pub timeout_detaches: bool,
    /// Fires when the host sends the call to the background.
    pub detach: Option<CancelScope>,
}

/// Runs `shell` to its end, feeding `capture`. Returns the ending and how
/// long it took.
pub(crate) async fn run(
    shell: &mut Shell,
    capture: &Arc<Mutex<Capture>>,
    cancel: &CancelScope,
    limits: &Limits,
    reporter: Option<&Reporter>,
) -> (Ending, Duration) {
    let start = Instant::now();
    let deadline = limits.timeout.map(|t| start + t);
    let mut ticker = reporter.map(|r| {
        let mut t =
            tokio::time::interval_at(start + r.delay, r.every.max(Duration::from_millis(10)));
        t.set_missed_tick_behavior(MissedTickBehavior::Delay);
        t
    });
    // Capacity, not zeroed memory, and small at first: most commands print
    // little (a 64 KiB buffer per call cost the allocator a heap growth and
    // a trim each time); it grows when a read fills it.
    let mut buf = Vec::with_capacity(CHUNK / 8);
    let mut err_buf = Vec::with_capacity(CHUNK / 8);
    let mut eof = false;
    let mut err_eof = shell.errors.is_none();
    let ending = loop {
        tokio::select! {
            read = read_chunk(&mut shell.output, &mut buf), if !eof => match read {
                Ok(0) => eof = true,
                Ok(_) => capture.lock().push_from(Stream::Stdout, &buf),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            },
            read = read_optional(shell.errors.as_mut(), &mut err_buf), if !err_eof => match read {
                Ok(0) => err_eof = true,
                Ok(_) => capture.lock().push_from(Stream::Stderr, &err_buf),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => err_eof = true,
            },
            status = shell.child.wait() => {
                break match status {
                    Ok(status) => Ending::Exited(status),
                    Err(err) => {
                        shell.stop(limits.stop_grace).await;
                        Ending::Lost(err.to_string())
                    }
                };
            }
            _ = sleep_until(deadline) => {
                if limits.timeout_detaches {
                    let limit = limits.timeout.unwrap_or_default();
                    return (Ending::Detached(Detach::AtTimeout(limit)), start.elapsed());
                }
                let (_, stop) = shell.stop(limits.stop_grace).await;
                break Ending::TimedOut {
                    limit: limits.timeout.unwrap_or_default(),
                    stop,
                };
            }
            _ = cancel.cancelled() => {
                let (_, stop) = shell.stop(limits.stop_grace).await;
                break Ending::Cancelled(stop);
            }
            _ = detach_requested(limits.detach.as_ref()) => {
                return (Ending::Detached(Detach::ByHost), start.elapsed());
            }
            _ = tick(&mut ticker) => {
                if let Some(reporter) = reporter {
                    reporter.report(&capture.lock(), start.elapsed());
                }
            }
        }
    };
    // Usually the pipes already hold everything up to their end when the
    // shell's exit is seen: take it without asking the kernel for the tree
    // (below).
    if !eof {
        eof = read_ready(&mut shell.output, Stream::Stdout, capture, &mut buf);
    }
    if let Some(errors) = shell.errors.as_mut().filter(|_| !err_eof) {
        err_eof = read_ready(errors, Stream::Stderr, capture, &mut buf);
    }
    if !eof || !err_eof {
        // Nothing of the tree runs any more (it was stopped, or exited
        // with nothing left behind): EOF is near, so read until it, with
        // a generous bound in case something escaped. Otherwise background
        // jobs still hold the pipe: read what is there for a short moment.
        let tree_gone = match &ending {
            Ending::TimedOut { stop, .. } | Ending::Cancelled(stop) => stop.survivors == 0,
            _ => match shell.tree() {
                Some(tree) => !tree.is_alive_async().await,
                None => true,
            },
        };
        let idle = (!tree_gone).then_some(Duration::from_millis(50));
        let budget = if tree_gone {
            limits.drain.max(Duration::from_secs(2))
        } else {
            limits.drain
        };
        // One budget for both pipes: their ends are read one after the
        // other, never longer than one pipe used to take.
        let until = Instant::now() + budget;
        if !eof {
            drain(
                &mut shell.output,
                Stream::Stdout,
                capture,
                &mut buf,
                until,
                idle,
            )
            .await;
        }
        if let Some(errors) = shell.errors.as_mut().filter(|_| !err_eof) {
            drain(errors, Stream::Stderr, capture, &mut buf, until, idle).await;
        }
    }
    (ending, start.elapsed())
}

/// Reads what the pipe holds now, without waiting; true at its end. A
/// bounded number of reads: a background job may keep writing (`yes &`).
fn read_ready(
    output: &mut pipe::Receiver,
    stream: Stream,
    capture: &Arc<Mutex<Capture>>,
    buf: &mut Vec<u8>,
) -> bool {
    for _ in 0..16 {
        buf.clear();
        match output.try_read_buf(buf) {
            Ok(0) => return true,
            Ok(_) => capture.lock().push_from(stream, buf),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    false
}

/// Reads up to [`CHUNK`] bytes into `buf` (replacing what it held).
/// Cancel-safe: a read either completes into `buf` or takes nothing.
async fn read_chunk(output: &mut pipe::Receiver, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    if buf.len() == buf.capacity() && buf.capacity() < CHUNK {
        buf.reserve_exact(CHUNK - buf.len());
    }
    buf.clear();
    output.read_buf(buf).await
}

/// [`read_chunk`] on a pipe that may not exist (then it never returns).
async fn read_optional(
    output: Option<&mut pipe::Receiver>,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    match output {
        Some(output) => read_chunk(output, buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn detach_requested(detach: Option<&CancelScope>) {
    match detach {
        Some(scope) => scope.cancelled().await,
        None => std::future::pending().await,
    }
}

async fn tick(ticker: &mut Option<tokio::time::Interval>) {
    match ticker {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Reads the pipe until `until` at the latest; stops at EOF, or when the
/// pipe stays empty for `idle` (when given).
async fn drain(
    output: &mut pipe::Receiver,
    stream: Stream,
    capture: &Arc<Mutex<Capture>>,
    buf: &mut Vec<u8>,
    until: Instant,
    idle: Option<Duration>,
) {
    let budget = until.saturating_duration_since(Instant::now());
    let idle = idle.unwrap_or(budget).min(budget);
    while Instant::now() < until {
        let wait = idle.min(until.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, read_chunk(output, buf)).await {
            Ok(Ok(0)) | Err(_) => return,
            Ok(Ok(_)) => capture.lock().push_from(stream, buf),
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(_)) => return,
        }
    }
}
