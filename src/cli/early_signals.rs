//! Signals from the first moment: handlers installed before anything starts.
//!
//! The commands used to install their SIGINT/SIGTERM/SIGHUP handlers once
//! the session was running, so a signal while MCP servers connected or a
//! SessionStart hook ran met the default action: Baton died with no result
//! for any call, and the servers and hooks it had started were left to the
//! orphan sentinel. Now [`install`] runs first, right after the async
//! runtime exists. The first signal is latched: start-up steps that wait
//! (MCP connections, SessionStart hooks) end their wait at once, and the
//! command then answers every call it was given as never started. A second
//! signal, at any moment, kills every process tree and exits with 130.

use std::sync::OnceLock;

use super::signals::{any, handlers};
use tokio::sync::watch;

/// Set once the handlers are installed; `true` after the first signal.
static FIRST: OnceLock<watch::Receiver<bool>> = OnceLock::new();

/// Installs the handlers (on the runtime the caller entered). If they
/// cannot be installed, the default actions stay, and PDEATHSIG plus the
/// orphan sentinel still end the processes Baton started.
pub(super) fn install() {
    let Some(mut signals) = handlers() else {
        eprintln!("baton: signal handlers could not be installed");
        return;
    };
    let (tx, rx) = watch::channel(false);
    if FIRST.set(rx).is_err() {
        return;
    }
    tokio::spawn(async move {
        any(&mut signals).await;
        let _ = tx.send(true);
        any(&mut signals).await;
        baton::engine::process::kill_all_now();
        std::process::exit(130);
    });
}

/// Whether the handlers are installed (then [`first`] is meaningful).
pub(super) fn installed() -> bool {
    FIRST.get().is_some()
}

/// Whether a first signal has already come.
pub(super) fn already() -> bool {
    FIRST.get().is_some_and(|rx| *rx.borrow())
}

/// Resolves at the first signal (at once if it came already); never if
/// the handlers are not installed.
pub(super) async fn first() {
    let Some(rx) = FIRST.get() else {
        return std::future::pending().await;
    };
    let mut rx = rx.clone();
    if rx.wait_for(|&stopped| stopped).await.is_err() {
        // The watcher is gone (the runtime is ending): no signal will come.
        std::future::pending::<()>().await;
    }
}
