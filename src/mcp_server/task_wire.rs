//! The 2025-11-25 task messages, carried past rmcp's typed model.
//!
//! rmcp models the later tasks *extension* (SEP-2663) only. Of protocol
//! 2025-11-25 it drops the `task` field of a `tools/call` (so a
//! task-augmented call would run as a plain one), refuses `tasks/get` and
//! `tasks/cancel` from clients that did not declare the extension, and has
//! no place for the `tasks` capability or a tool's `execution.taskSupport`.
//! This adapter sits between the transport and rmcp, on stdio and on HTTP,
//! and does two things to the JSON-RPC text:
//!
//! - on the way in, a `tools/call` with a `task` and every `tasks/get` and
//!   `tasks/cancel` get Baton's own method names ([`CALL`], [`GET`],
//!   [`CANCEL`]), so they reach [`super::tasks`] as custom requests with
//!   their params intact (`tasks/result` and `tasks/list` arrive as custom
//!   requests anyway);
//! - on the way out, the answer to `initialize` gains
//!   `capabilities.tasks`, and each tool in a `tools/list` answer gains
//!   `execution: {"taskSupport": "optional"}`.
//!
//! Only messages that name those methods are parsed; the rest pass as
//! bytes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};

/// A task-augmented `tools/call`, renamed.
pub(super) const CALL: &str = "baton/tasks/call";
/// `tasks/get`, renamed.
pub(super) const GET: &str = "baton/tasks/get";
/// `tasks/cancel`, renamed.
pub(super) const CANCEL: &str = "baton/tasks/cancel";

/// The ids (as JSON text) of requests whose answers get annotated.
#[derive(Clone, Debug, Default)]
pub(super) struct Pending(Arc<Mutex<HashSet<String>>>);

impl Pending {
    fn ids(&self) -> MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, id: &Value) {
        self.ids().insert(id.to_string());
    }

    fn take(&self, id: &Value) -> bool {
        self.ids().remove(&id.to_string())
    }

    fn is_empty(&self) -> bool {
        self.ids().is_empty()
    }
}

/// Rewrites one incoming message (or batch) if it needs it; `None` leaves
/// the bytes as they are. Ids of `initialize` and `tools/list` requests go
/// to `pending`.
pub(super) fn lift(bytes: &[u8], pending: &Pending) -> Option<Vec<u8>> {
    let named = [
        "\"tasks/",
        "\"tools/call\"",
        "\"initialize\"",
        "\"tools/list\"",
    ];
    if !named.iter().any(|n| contains(bytes, n.as_bytes())) {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let mut changed = false;
    match &mut message {
        Value::Array(batch) => {
            for one in batch {
                changed |= lift_one(one, pending);
            }
        }
        one => changed = lift_one(one, pending),
    }
    changed.then(|| message.to_string().into_bytes())
}

fn lift_one(message: &mut Value, pending: &Pending) -> bool {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return false;
    };
    let renamed = match method {
        "tools/call"
            if message
                .pointer("/params/task")
                .is_some_and(Value::is_object) =>
        {
            CALL
        }
        "tasks/get" => GET,
        "tasks/cancel" => CANCEL,
        "initialize" | "tools/list" => {
            if let Some(id) = message.get("id") {
                pending.add(id);
            }
            return false;
        }
        _ => return false,
    };
    message["method"] = Value::String(renamed.into());
    true
}

/// Adds the task declarations to an outgoing answer whose request is in
/// `pending`; `None` leaves the bytes as they are.
pub(super) fn annotate(bytes: &[u8], pending: &Pending) -> Option<Vec<u8>> {
    if pending.is_empty() || !contains(bytes, b"\"result\"") {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let id = message.get("id")?.clone();
    if !pending.take(&id) {
        return None;
    }
    let result = message.get_mut("result")?;
    if let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        capabilities.insert(
            "tasks".into(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
    }
    if let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            tool.insert("execution".into(), json!({"taskSupport": "optional"}));
        }
    }
    Some(message.to_string().into_bytes())
}

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

pub(super) mod stdio;

pub(super) mod http;

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(message: Value, pending: &Pending) -> Value {
        let bytes = message.to_string().into_bytes();
        match lift(&bytes, pending) {
            Some(out) => serde_json::from_slice(&out).unwrap(),
            None => message,
        }
    }

    #[test]
    fn task_messages_are_renamed_and_others_left() {
        let pending = Pending::default();
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "Bash", "arguments": {}, "task": {"ttl": 1000}}});
        assert_eq!(lifted(call, &pending)["method"], CALL);
        let plain = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "Bash", "arguments": {"command": "echo \"task\""}}});
        assert_eq!(lifted(plain, &pending)["method"], "tools/call");
        for (method, renamed) in [("tasks/get", GET), ("tasks/cancel", CANCEL)] {
            let m = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"taskId": "t"}});
            assert_eq!(lifted(m, &pending)["method"], renamed);
        }
        let result = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {}});
        assert_eq!(lifted(result, &pending)["method"], "tasks/result");
        let batch = json!([{"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {}}]);
        assert_eq!(lifted(batch, &pending)[0]["method"], GET);
        assert!(pending.is_empty());
    }

    #[test]
    fn initialize_and_tools_list_answers_declare_tasks() {
        let pending = Pending::default();
        for (id, method) in [(1, "initialize"), (2, "tools/list")] {
            let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}});
            lifted(m, &pending);
        }
        let init = json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"tools": {}}}});
        let out: Value =
            serde_json::from_slice(&annotate(init.to_string().as_bytes(), &pending).unwrap())
                .unwrap();
        assert!(out
            .pointer("/result/capabilities/tasks/requests/tools/call")
            .is_some());
        let other = json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": [{"name": "x"}]}});
        assert!(annotate(other.to_string().as_bytes(), &pending).is_none());
        let list = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "x"}]}});
        let out: Value =
            serde_json::from_slice(&annotate(list.to_string().as_bytes(), &pending).unwrap())
                .unwrap();
        assert_eq!(
            out["result"]["tools"][0]["execution"]["taskSupport"],
            "optional"
        );
        assert!(pending.is_empty());
    }
}
