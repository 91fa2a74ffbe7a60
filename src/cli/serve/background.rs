//! The `background` line: the host sends running calls to the background.
//!
//! Like Claude Code's Ctrl+B: a foreground `Bash` call still running answers
//! at once that its command goes on as a background task, and the command
//! keeps running. The line names one call (`call_id`) or a batch (all its
//! running shell calls; the latest batch when none is named). The results
//! come as usual, in order; a line that reaches no running shell call is an
//! `error` line, so a host never waits for something that will not happen.

use serde::Deserialize;
use serde_json::Value;

/// `{"type":"background", "call_id"?: string, "batch"?: number | string}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundLine {
    #[serde(rename = "type")]
    _kind: String,
    /// The call to send; otherwise every running call of the batch.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The batch (Baton's number or the host's name); the latest otherwise.
    #[serde(default)]
    pub batch: Option<Value>,
}

pub fn parse(msg: &Value) -> Result<BackgroundLine, String> {
    BackgroundLine::deserialize(msg).map_err(|e| format!("bad `background` line: {e}"))
}

/// The error text when `sent` is empty.
pub fn nothing_sent(call_id: Option<&str>, batch: &Value) -> String {
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
