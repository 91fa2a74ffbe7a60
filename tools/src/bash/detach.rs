//! A foreground command that goes on in the background.
//!
//! Two things move a running foreground `Bash` call to the background
//! instead of stopping it: its time limit running out (unless
//! [`BashConfig::timeout_moves_to_background`] is off), and the host asking
//! ([`send_to_background`], the serve `background` line). Either way the
//! call answers at once, with the task id and the output file, and its
//! process tree keeps running as a background task, stopped by `TaskStop`,
//! by its own time limit, or when the session (or its owner) ends — but not
//! by an interrupt, which stops foreground calls only.
//!
//! The host's word reaches a running call through a session slot: each
//! foreground call registers a signal under its call id while its shell
//! runs, and the host's request fires the signals of the ids it names. The
//! call itself does the move, so the engine still sees exactly one result
//! per call, in order.

use std::sync::Arc;

use baton_engine::{CancelReason, CancelScope, Session, ToolOutput};
use parking_lot::Mutex;

use super::background::Task;
use super::run::Detach;

/// Set to `1` (or `true`) to stop foreground commands at their time limit
/// instead of moving them to the background.
pub const TIMEOUT_KILLS_ENV: &str = "BATON_BASH_TIMEOUT_KILLS";

pub(crate) fn timeout_kills_from_env() -> bool {
    std::env::var(TIMEOUT_KILLS_ENV)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// The foreground calls of a session whose shell runs now (a session slot).
#[derive(Default)]
struct Running {
    calls: Mutex<Vec<(String, u64, CancelScope)>>,
    next: Mutex<u64>,
}

/// A foreground call's registration; leaving it (the call ending in any
/// way, its future dropped included) removes the call.
pub(crate) struct Registered {
    running: Arc<Running>,
    key: u64,
    signal: CancelScope,
}

impl Registered {
    pub(crate) fn signal(&self) -> CancelScope {
        self.signal.clone()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.running.calls.lock().retain(|(_, k, _)| *k != self.key);
    }
}

/// Registers the foreground call `call_id` so the host can send it away.
pub(crate) fn register(session: &Session, call_id: &str) -> Registered {
    let running = session.slots().get_or_default::<Running>();
    let key = {
        let mut next = running.next.lock();
        *next += 1;
        *next
    };
    let signal = CancelScope::new();
    running
        .calls
        .lock()
        .push((call_id.to_string(), key, signal.clone()));
    Registered {
        running,
        key,
        signal,
    }
}

/// Sends the running foreground `Bash` calls named in `call_ids` to the
/// background; each answers at once, saying its command goes on as a
/// background task. Returns the ids that were running (a call that already
/// ended, or is not a running shell, is left alone).
pub fn send_to_background(session: &Session, call_ids: &[String]) -> Vec<String> {
    let Some(running) = session.slots().get::<Running>() else {
        return Vec::new();
    };
    let calls = running.calls.lock();
    let mut sent = Vec::new();
    for (id, _, signal) in calls.iter() {
        if call_ids.contains(id) {
            signal.cancel(CancelReason::User);
            if !sent.contains(id) {
                sent.push(id.clone());
            }
        }
    }
    sent
}

/// The call's result once its command went on as `task`: Claude Code's
/// sentences (the model may have been trained on them), then how to follow
/// the task here.
pub(crate) fn moved_result(task: &Task, why: Detach, requested: Option<u64>) -> ToolOutput {
    let log = task.log_path.display();
    let first = match why {
        Detach::AtTimeout(limit) => {
            let secs = limit.as_millis().div_ceil(1000).max(1);
            let asked = requested
                .filter(|&ms| u128::from(ms) > limit.as_millis())
                .map(|ms| format!(" (the maximum; {} s was asked for)", ms.div_ceil(1000)))
                .unwrap_or_default();
            format!(
                "Command did not complete within its {secs}s timeout{asked} and was moved to the \
                 background (ID: {id}). Output is being written to: {log}.",
                id = task.id
            )
        }
        Detach::ByHost => format!(
            "Command was manually backgrounded by user with ID: {id}. Output is being written \
             to: {log}.",
            id = task.id
        ),
    };
    let text = format!(
        "{first} It was not stopped: it goes on as background task {id}, and a `cd` in it no \
         longer changes the working directory of later commands. Read its output with \
         TaskOutput (task_id \"{id}\") or by reading that file, stop it with TaskStop; you \
         will be notified when it ends. Do not start it again.",
        id = task.id
    );
    let mut output = ToolOutput::text(text);
    output.response = Some(serde_json::json!({
        "stdout": "",
        "stderr": "",
        "interrupted": false,
        "isImage": false,
        "backgroundTaskId": task.id,
        "backgroundedByUser": why == Detach::ByHost,
        "timedOutAfterMs": match why {
            Detach::AtTimeout(limit) => Some(limit.as_millis() as u64),
            Detach::ByHost => None,
        },
    }));
    output
}
