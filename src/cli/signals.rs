//! Ctrl-C, SIGTERM and SIGHUP for the commands that run tools.
//!
//! Shell commands run in their own sessions, so a terminal's Ctrl-C never
//! reaches them; if `baton` just died, they would be left running. Instead
//! the first signal interrupts the batches (their processes are stopped and
//! every call still gets a result) and the command then ends normally. A
//! closed terminal (SIGHUP) is the same request. A second signal means
//! "now": every process tree is killed and Baton exits at once, without
//! the remaining results (exit status 130).

use tokio::signal::unix::{signal, Signal, SignalKind};

/// SIGINT, SIGTERM and SIGHUP handlers (`None` when they cannot be had).
pub(super) fn handlers() -> Option<[Signal; 3]> {
    Some([
        signal(SignalKind::interrupt()).ok()?,
        signal(SignalKind::terminate()).ok()?,
        signal(SignalKind::hangup()).ok()?,
    ])
}

/// The next of any of the three.
pub(super) async fn any(signals: &mut [Signal; 3]) {
    let [int, term, hup] = signals;
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

/// Resolves at the first SIGINT, SIGTERM or SIGHUP, and from then on
/// watches for a second one, which kills every tree and exits. If the
/// handlers cannot be installed, never resolves (the default behaviour
/// stays, and PDEATHSIG plus the orphan sentinel still end the shells).
pub(super) async fn stop_requested() {
    // Installed at start-up (early_signals.rs): it latches the first signal
    // and handles the second itself.
    if super::early_signals::installed() {
        return super::early_signals::first().await;
    }
    let Some(mut signals) = handlers() else {
        return std::future::pending().await;
    };
    any(&mut signals).await;
    tokio::spawn(async move {
        any(&mut signals).await;
        baton::engine::process::kill_all_now();
        std::process::exit(130);
    });
}

/// Sets up what protects against Baton dying without cleaning up: the
/// subreaper and the orphan sentinel (see `baton_engine::process`).
pub(super) fn guard_against_sudden_death() {
    for problem in baton::engine::process::install_orphan_guard() {
        eprintln!("baton: {problem}; processes may outlive baton if it is killed");
    }
}
