//! SessionStart / SessionEnd for the CLI's sessions: what their hooks say
//! goes to the user on stderr (`baton run`) or as a `session_hook` line
//! (`baton serve`).

use baton::engine::HookOutcome;
use serde_json::{json, Value};

/// `baton run`: messages and problems on stderr.
pub(super) fn report(outcome: &HookOutcome, event: &str) {
    for message in &outcome.system_messages {
        eprintln!("baton: hook: {message}");
    }
    for problem in &outcome.errors {
        eprintln!("baton: {event} hook: {problem}");
    }
}

/// `baton serve`: the line telling the host what the hooks said (its
/// `additional_context` belongs in the model's context).
pub(super) fn line(outcome: &HookOutcome, event: &str) -> Value {
    json!({
        "type": "session_hook",
        "event": event,
        "additional_context": outcome.additional_context,
        "system_messages": outcome.system_messages,
        "diagnostics": outcome.errors,
        "stop": outcome.stop,
    })
}
