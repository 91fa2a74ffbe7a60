//! Ctrl-C and SIGTERM for the commands that run tools.
//!
//! Shell commands run in their own process groups, so a terminal's Ctrl-C
//! never reaches them; if `baton` just died, they would be left running.
//! Instead a signal interrupts the batches (their processes are stopped and
//! every call still gets a result) and the command then ends normally.

use tokio::signal::unix::{signal, SignalKind};

/// Resolves at the first SIGINT or SIGTERM. If the handlers cannot be
/// installed, never resolves (the default behaviour stays).
pub async fn stop_requested() {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}
