//! What a server said about tasks (protocol 2025-11-25), read from its raw
//! answers.
//!
//! rmcp's typed model follows the later tasks *extension* (SEP-2663) and has
//! no place for the 2025-11-25 fields: `capabilities.tasks` of the
//! `initialize` answer and a tool's `execution.taskSupport` in `tools/list`
//! are dropped when rmcp parses them. So the transports hand each answer's
//! bytes to [`TaskFacts::observe`] before rmcp sees them (the stdio frame
//! filter, the streamable-HTTP event streams), and the facts are kept per
//! connection. Only answers that name `"tasks"` or `"taskSupport"` are
//! parsed a second time; everything else costs one byte scan.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use serde_json::Value;

/// A tool's `execution.taskSupport` (absent means forbidden).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

/// The tasks side of one connection.
#[derive(Debug, Default)]
pub(crate) struct TaskFacts {
    /// `capabilities.tasks.requests.tools.call` was declared.
    tools_call: AtomicBool,
    /// `capabilities.tasks.cancel` was declared.
    cancel: AtomicBool,
    /// Tool name → its declared support, from every `tools/list` page seen.
    tools: Mutex<HashMap<String, TaskSupport>>,
}

impl TaskFacts {
    /// Reads one answer frame (a whole JSON-RPC message, or an SSE event's
    /// data) for task facts.
    pub(crate) fn observe(&self, frame: &[u8]) {
        if !contains(frame, b"\"tasks\"") && !contains(frame, b"\"taskSupport\"") {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(frame) else {
            return;
        };
        let Some(result) = message.get("result") else {
            return;
        };
        if let Some(tasks) = result.get("capabilities").and_then(|c| c.get("tasks")) {
            let call = tasks
                .pointer("/requests/tools/call")
                .is_some_and(Value::is_object);
            self.tools_call.store(call, Ordering::Release);
            self.cancel.store(
                tasks.get("cancel").is_some_and(Value::is_object),
                Ordering::Release,
            );
        }
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            let mut known = self.tools.lock();
            for tool in tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let support = match tool
                    .pointer("/execution/taskSupport")
                    .and_then(Value::as_str)
                {
                    Some("optional") => TaskSupport::Optional,
                    Some("required") => TaskSupport::Required,
                    _ => TaskSupport::Forbidden,
                };
                known.insert(name.to_string(), support);
            }
        }
    }

    /// Whether `tool` is called as a task: the server declared task-augmented
    /// `tools/call` and the tool allows or requires it (the spec's rules:
    /// without the capability, never; with it, as the tool says).
    pub(crate) fn call_as_task(&self, tool: &str) -> bool {
        self.tools_call.load(Ordering::Acquire)
            && matches!(
                self.tools.lock().get(tool),
                Some(TaskSupport::Optional | TaskSupport::Required)
            )
    }

    /// Whether the server declared `tasks/cancel`.
    pub(crate) fn can_cancel(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(v: Value) -> Vec<u8> {
        v.to_string().into_bytes()
    }

    #[test]
    fn capability_and_tool_support_are_both_needed() {
        let facts = TaskFacts::default();
        facts.observe(&frame(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
                {"name": "a", "execution": {"taskSupport": "optional"}},
                {"name": "b", "execution": {"taskSupport": "required"}},
                {"name": "c", "execution": {"taskSupport": "forbidden"}},
                {"name": "d"},
            ]}}),
        ));
        assert!(!facts.call_as_task("a"), "no capability yet");
        facts.observe(&frame(json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
        }})));
        assert!(facts.call_as_task("a") && facts.call_as_task("b"));
        assert!(!facts.call_as_task("c") && !facts.call_as_task("d"));
        assert!(!facts.call_as_task("unknown"));
        assert!(facts.can_cancel());
    }

    #[test]
    fn a_capability_without_tools_call_does_not_count() {
        let facts = TaskFacts::default();
        facts.observe(&frame(json!({"id": 0, "result": {
            "capabilities": {"tasks": {"list": {}, "requests": {"sampling": {}}}},
        }})));
        facts.observe(&frame(json!({"id": 1, "result": {"tools": [
            {"name": "a", "execution": {"taskSupport": "required"}},
        ]}})));
        assert!(!facts.call_as_task("a"));
        assert!(!facts.can_cancel());
    }

    #[test]
    fn requests_and_text_mentioning_tasks_are_ignored() {
        let facts = TaskFacts::default();
        // A request from the server, and a result whose text says "tasks".
        facts.observe(&frame(json!({"id": 5, "method": "x", "params": {
            "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
        }})));
        facts.observe(&frame(json!({"id": 6, "result": {"content": [
            {"type": "text", "text": "{\"tasks\": 1}"},
        ]}})));
        facts.observe(b"{not json \"tasks\"");
        assert!(!facts.tools_call.load(Ordering::Acquire));
    }
}
