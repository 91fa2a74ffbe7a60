//! Hooks end when their call, their batch or the whole session is stopped.
//!
//! A hook is a program the user wrote; nothing promises it ends. A hook
//! that hangs must not hold an interrupt, a signal or a shutdown hostage:
//! until its timeout (600 s by default) every later line, and the exit,
//! would wait for it. So every run of an event's hooks is raced against two
//! things: the scope of the work it belongs to (the call for tool events,
//! the batch for PostToolBatch), and the registry's own stop, which the
//! session fires when it shuts down (after a short grace) or is signalled.
//! The loser is dropped, and dropping a running hook kills its process
//! group (see [`super::handlers::command`]), closes its HTTP request, or
//! withdraws its question to the host's model.
//!
//! The outcome of an interrupted run is [`HookOutcome::interrupted`]: no
//! decision, no rewrite, one diagnostic, and `interrupted` set, so that a
//! stage that needs an answer (PreToolUse, PermissionRequest) fails closed
//! instead of reading "no objection".

use std::future::Future;

use super::{HookEvent, HookOutcome};
use baton_tool::cancel::{CancelReason, CancelScope};

impl HookOutcome {
    /// What an interrupted run of `event`'s hooks leaves: a note and the
    /// reason, nothing else.
    pub fn interrupted(event: HookEvent, reason: CancelReason) -> HookOutcome {
        HookOutcome {
            errors: vec![format!(
                "{} hook interrupted ({}): it was stopped before it answered, and its processes were killed",
                event.as_str(),
                describe(&reason)
            )],
            interrupted: Some(reason),
            ..Default::default()
        }
    }
}

fn describe(reason: &CancelReason) -> String {
    match reason {
        CancelReason::User => "the user interrupted".into(),
        CancelReason::NewMessage => "the user sent a new message".into(),
        CancelReason::Sibling { failed_call, .. } => format!("{failed_call} failed"),
        CancelReason::Shutdown => "the session is shutting down".into(),
        CancelReason::Other(why) => why.clone(),
    }
}

/// Runs `hooks` until they finish, `scope` (if any) is cancelled, or
/// `stop` is; the hooks' outcome wins a tie.
pub(super) async fn race(
    event: HookEvent,
    scope: Option<&CancelScope>,
    stop: &CancelScope,
    hooks: impl Future<Output = HookOutcome>,
) -> HookOutcome {
    let scope_cancelled = async {
        match scope {
            Some(scope) => {
                scope.cancelled().await;
                scope.reason().unwrap_or(CancelReason::User)
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        outcome = hooks => outcome,
        reason = scope_cancelled => HookOutcome::interrupted(event, reason),
        _ = stop.cancelled() => HookOutcome::interrupted(
            event,
            stop.reason().unwrap_or(CancelReason::Shutdown),
        ),
    }
}
