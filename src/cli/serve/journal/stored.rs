//! A call's result as the journal keeps it, and back.
//!
//! The journal holds JSON. What is kept is what the host was shown: the
//! model's content, the outcome, the messages and diagnostics beside it,
//! and the `details` of the result line; a retried call is answered with
//! the same result line and the same part of the message's answer. What
//! only acts inside a run (a context change, a batch hook's record, the
//! tool's structured response for hooks) is not kept.

use std::path::PathBuf;

use baton::engine::call_details::CallDetails;
use baton::engine::content::ContentBlock;
use baton::engine::shell_details::ShellDetails;
use baton::{CallResult, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kept fields, borrowed from the result (a result is large; it is
/// written once).
#[derive(Serialize)]
struct Keep<'a> {
    tool: &'a str,
    content: &'a [ContentBlock],
    is_error: bool,
    outcome: &'a Outcome,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    extra_messages: &'a [Value],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    diagnostics: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    system_messages: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_turn: Option<&'a str>,
    #[serde(skip_serializing_if = "CallDetails::is_empty")]
    details: &'a CallDetails,
}

/// The kept fields, read back.
#[derive(Deserialize)]
struct Kept {
    tool: String,
    content: Vec<ContentBlock>,
    is_error: bool,
    outcome: Outcome,
    #[serde(default)]
    extra_messages: Vec<Value>,
    #[serde(default)]
    diagnostics: Vec<String>,
    #[serde(default)]
    system_messages: Vec<String>,
    #[serde(default)]
    stop_turn: Option<String>,
    #[serde(default)]
    details: Value,
}

/// `result` as the journal keeps it.
pub(super) fn store(result: &CallResult) -> Result<Value, serde_json::Error> {
    serde_json::to_value(Keep {
        tool: &result.tool_name,
        content: &result.content,
        is_error: result.is_error,
        outcome: &result.outcome,
        extra_messages: &result.extra_messages,
        diagnostics: &result.diagnostics,
        system_messages: &result.system_messages,
        stop_turn: result.stop_turn.as_deref(),
        details: &result.details,
    })
}

/// The result of call `id` from what [`store`] kept.
pub(super) fn restore(id: &str, kept: &Value) -> Result<CallResult, serde_json::Error> {
    let kept = Kept::deserialize(kept)?;
    let mut result = CallResult::new(id, kept.tool, kept.content, kept.is_error, kept.outcome);
    result.extra_messages = kept.extra_messages;
    result.diagnostics = kept.diagnostics;
    result.system_messages = kept.system_messages;
    result.stop_turn = kept.stop_turn;
    *result.details = details(&kept.details);
    Ok(result)
}

/// `CallDetails` only serializes (the engine never reads it back): its
/// fields are read here one by one, the shell's flattened ones as a whole
/// (present when `exit_code` is: shell details always write it).
fn details(kept: &Value) -> CallDetails {
    let paths = |key: &str| -> Vec<PathBuf> {
        kept.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let shell = kept
        .get("exit_code")
        .and_then(|_| serde_json::from_value::<ShellDetails>(kept.clone()).ok());
    CallDetails {
        duration_ms: kept.get("duration_ms").and_then(Value::as_u64),
        spilled: kept
            .get("spilled")
            .and_then(Value::as_str)
            .map(PathBuf::from),
        files_written: paths("files_written"),
        shell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_comes_back_as_the_host_saw_it() {
        let mut result = CallResult::new(
            "t1",
            "Bash",
            vec![ContentBlock::text("hello")],
            true,
            Outcome::ToolError,
        );
        result.diagnostics = vec!["a hook said so".into()];
        result.system_messages = vec!["for the user".into()];
        result.details.duration_ms = Some(12);
        result.details.files_written = vec![PathBuf::from("/w/a.txt")];
        result.details.shell = Some(ShellDetails {
            exit_code: Some(3),
            ..ShellDetails::default()
        });
        let kept = store(&result).unwrap();
        let back = restore("t1", &kept).unwrap();
        assert_eq!(back.call_id, "t1");
        assert_eq!(back.tool_name, "Bash");
        assert_eq!(back.content, result.content);
        assert!(back.is_error);
        assert_eq!(back.outcome, Outcome::ToolError);
        assert_eq!(back.diagnostics, result.diagnostics);
        assert_eq!(back.system_messages, result.system_messages);
        assert_eq!(*back.details, *result.details);
    }

    #[test]
    fn a_result_without_details_has_none_back() {
        let result = CallResult::new("t2", "Read", vec![], false, Outcome::Success);
        let back = restore("t2", &store(&result).unwrap()).unwrap();
        assert!(back.details.is_empty());
    }
}
