//! `mcp_tool` hooks: call a tool of a configured MCP server.
//!
//! Claude Code's shape (agent SDK `Settings.hooks`): `server`, `tool`, and
//! `input`, whose string values may hold `${path}` references into the hook
//! input (`"${tool_input.file_path}"`). The tool's text answer is read like
//! a command hook's stdout (a hook JSON output, `{}` or nothing).
//!
//! The engine knows no MCP client (the client crate depends on the engine),
//! so it names the capability, [`McpToolCaller`], and settings share one
//! [`McpToolSlot`] in which the host puts its client once its servers are
//! started. An `mcp_tool` hook that runs while the slot is empty, or whose
//! server is unknown or failing, is a hook failure: a diagnostic, or a
//! block with `onFailure: "block"`.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::Handler;
use crate::hooks::protocol::{OnFailure, Run};
use crate::hooks::{HookInput, HookOutcome};

/// What an MCP tool answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpToolReply {
    /// Its text content, joined.
    pub text: String,
    /// `isError` of the result.
    pub is_error: bool,
}

/// Calls tools of the host's configured MCP servers.
#[async_trait]
pub trait McpToolCaller: Send + Sync {
    /// Calls `tool` (the server's own name for it) of `server` with
    /// `arguments`, within `timeout`; `Err` when it could not be called.
    async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<McpToolReply, String>;
}

/// Where a host installs its MCP client for `mcp_tool` hooks; shared by
/// every such hook of a settings load.
pub type McpToolSlot = super::slot::Slot<dyn McpToolCaller>;

/// An `mcp_tool` hook: calls a tool of a configured MCP server with the
/// event's input, through the host's MCP client.
#[derive(Clone, Debug)]
pub struct McpToolHandler {
    /// The server's configured name.
    pub server: String,
    /// The tool to call on it.
    pub tool: String,
    /// The configured `input`, before substitution.
    pub input: Map<String, Value>,
    /// Where the host's MCP client is found when the hook fires.
    pub slot: McpToolSlot,
}

#[async_trait]
impl Handler for McpToolHandler {
    fn label(&self) -> String {
        format!("mcp_tool: {}/{}", self.server, self.tool)
    }

    async fn call(&self, input: &HookInput, timeout: Duration, run: Run) -> HookOutcome {
        let Some(caller) = self.slot.get() else {
            return run.failed(
                "needs Baton's MCP client, and this host started none (McpToolSlot::set)".into(),
            );
        };
        let data = serde_json::to_value(input).unwrap_or(Value::Null);
        let arguments = self
            .input
            .iter()
            .map(|(k, v)| (k.clone(), substitute(v, &data)))
            .collect();
        let called = tokio::time::timeout(
            timeout,
            caller.call_tool(&self.server, &self.tool, arguments, timeout),
        )
        .await;
        let reply = match called {
            Err(_) => return run.failed(super::no_answer(timeout)),
            Ok(Err(problem)) => return run.failed(problem),
            Ok(Ok(reply)) => reply,
        };
        if reply.is_error {
            let text = reply.text.trim();
            return run.failed(format!("answered with an error: {text}"));
        }
        let text = reply.text.trim();
        if text.is_empty() {
            return HookOutcome::default();
        }
        if !text.starts_with('{') {
            // Plain text is no hook output. Claude Code counts it as a
            // failure only for hooks that must fail closed.
            return match run.on_failure() {
                OnFailure::Continue => HookOutcome::default(),
                OnFailure::Block => {
                    run.failed("answered with plain text, not a hook's JSON output".into())
                }
            };
        }
        run.printed(text.to_string())
    }
}

/// Replaces `${path}` in every string of `value` by the hook input's value
/// at that dotted path. A string that is exactly one reference takes the
/// value itself (a number stays a number); references inside longer text
/// take its text (strings bare, other values as JSON); a missing path is
/// empty.
pub fn substitute(value: &Value, data: &Value) -> Value {
    match value {
        Value::String(s) => {
            if let Some(path) = s
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .filter(|p| !p.contains(['{', '}', '$']))
            {
                return lookup(data, path)
                    .cloned()
                    .unwrap_or(Value::String(String::new()));
            }
            Value::String(interpolate(s, data))
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, data)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, data)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn interpolate(text: &str, data: &Value) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        match lookup(data, &after[..end]) {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The value at a dotted path (`tool_input.file_path`; array indexes as
/// numbers: `tool_input.edits.0.old_string`).
fn lookup<'a>(data: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim().split('.').try_fold(data, |v, key| match v {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_take_values_or_text() {
        let data = json!({"tool_input": {"file_path": "/a b/c.py", "n": 3, "edits": [{"x": "y"}]},
                          "tool_name": "Write"});
        let input = json!({
            "path": "${tool_input.file_path}",
            "n": "${tool_input.n}",
            "text": "${tool_name} wrote ${tool_input.file_path} (${tool_input.n}) ${missing.key}!",
            "nested": ["${tool_input.edits.0.x}", {"k": "${tool_name}"}],
            "plain": 7,
            "open": "a ${b",
        });
        assert_eq!(
            substitute(&input, &data),
            json!({
                "path": "/a b/c.py",
                "n": 3,
                "text": "Write wrote /a b/c.py (3) !",
                "nested": ["y", {"k": "Write"}],
                "plain": 7,
                "open": "a ${b",
            })
        );
    }
}
