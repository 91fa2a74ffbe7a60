//! The `background` line: the host sends running calls to the background.
//!
//! Like Claude Code's Ctrl+B: a foreground `Bash` call still running answers
//! at once that its command goes on as a background task, and the command
//! keeps running. The line names one call (`call_id`) or a batch (all its
//! running shell calls; the latest batch when none is named). The results
//! come as usual, in order; a line that reaches no running shell call is an
//! `error` line, so a host never waits for something that will not happen.

//!
//! The line's shape is `strict::BackgroundLine`, parsed once by the
//! dispatcher.

use serde_json::Value;

/// The error text when `sent` is empty.
pub(super) fn nothing_sent(call_id: Option<&str>, batch: &Value) -> String {
    match call_id {
        Some(id) => format!(
            "call `{id}` of batch {batch} is not a running Bash command (unknown, finished, or \
             another tool), so nothing was sent to the background"
        ),
        None => format!(
            "batch {batch} has no running Bash command, so nothing was sent to the background"
        ),
    }
}
