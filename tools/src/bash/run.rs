//! Driving one shell from start to end.
//!
//! The call ends when the shell exits, not when its output pipe closes: a
//! grandchild started with `&` holds the pipe open for as long as it runs,
//! and must not hold the call with it. After the exit, output already in
//! the pipe is read for a short moment, then reading stops. A timeout or a
//! cancellation stops the whole process group and keeps the output so far.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::CancelScope;
use parking_lot::Mutex;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::{Instant, MissedTickBehavior};

use super::output::Capture;
use super::process::Shell;
use super::progress::Reporter;

/// Bytes read from the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// The shell could not be waited for (it is stopped regardless).
    Lost(String),
}

pub(crate) struct Limits {
    /// `None`: no time limit (background tasks).
    pub timeout: Option<Duration>,
    pub stop_grace: Duration,
    /// How long to keep reading after the shell exited.
    pub drain: Duration,
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
    let mut buf = vec![0u8; CHUNK];
    let mut eof = false;
    let ending = loop {
        tokio::select! {
            read = shell.output.read(&mut buf), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => capture.lock().push(&buf[..n]),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
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
                shell.stop(limits.stop_grace).await;
                break Ending::TimedOut;
            }
            _ = cancel.cancelled() => {
                shell.stop(limits.stop_grace).await;
                break Ending::Cancelled;
            }
            _ = tick(&mut ticker) => {
                if let Some(reporter) = reporter {
                    reporter.report(&capture.lock(), start.elapsed());
                }
            }
        }
    };
    if !eof {
        drain(&mut shell.output, capture, limits.drain).await;
    }
    (ending, start.elapsed())
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
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

/// Reads what is already in the pipe, for at most `budget`; stops at EOF or
/// when the pipe stays empty for a moment.
async fn drain(output: &mut pipe::Receiver, capture: &Arc<Mutex<Capture>>, budget: Duration) {
    let until = Instant::now() + budget;
    let idle = Duration::from_millis(50).min(budget);
    let mut buf = vec![0u8; CHUNK];
    while Instant::now() < until {
        let wait = idle.min(until.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, output.read(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => return,
            Ok(Ok(n)) => capture.lock().push(&buf[..n]),
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(_)) => return,
        }
    }
}
