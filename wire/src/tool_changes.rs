//! Anthropic's mid-conversation tool changes: when the tool set changes
//! (ToolSearch loaded a tool, an MCP server changed its list), the host
//! appends `tool_addition` / `tool_removal` blocks to the conversation
//! instead of sending a rewritten `tools` array, so the prompt cache (which
//! starts with `tools`) survives the change.
//!
//! The blocks travel in a `role: "system"` message (beta
//! [`TOOL_CHANGES_BETA`]). A tool the first request's `tools` never
//! declared is added by value (`tool_definition`), which the API takes
//! under [`INLINE_TOOLS_BETA`]; a removal names the tool
//! (`tool_reference`). Shapes are those of the `anthropic` Python package
//! 2.14 (`types/beta/beta_request_tool_addition_block_param.py` and the
//! removal one).
//!
//! [`ToolChanges`] is the host's record of what the model has been offered:
//! [`ToolChanges::update`] takes the list [`super::request_tools`] gives
//! now and answers with the `tools` to send (always the first request's,
//! unchanged) and the blocks that bring the model up to date.

use serde::Serialize;
use serde_json::{json, Value};

use super::RequestTools;

/// The beta under which a conversation may change its tools mid-way.
pub const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";
/// The beta under which a `tool_addition` may carry a definition by value.
pub const INLINE_TOOLS_BETA: &str = "inline-tools-2026-09-15";

/// The `anthropic-beta` header value a request with tool changes needs.
pub fn beta_header() -> String {
    format!("{TOOL_CHANGES_BETA},{INLINE_TOOLS_BETA}")
}

/// Whether an HTTP error answer refuses the betas, so the host should go
/// back to rewriting `tools`: a 400 whose body names one of them (or the
/// blocks they introduce).
pub fn refuses_beta(status: u16, body: &str) -> bool {
    status == 400
        && [
            TOOL_CHANGES_BETA,
            INLINE_TOOLS_BETA,
            "tool_addition",
            "tool_removal",
            "anthropic-beta",
        ]
        .iter()
        .any(|needle| body.contains(needle))
}

/// What to send with the next request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolUpdate {
    /// The request's `tools`: the first request's, never rewritten.
    pub tools: Vec<Value>,
    /// Blocks to append (in one `role: "system"` message, see
    /// [`system_message`]) before the next request; empty when nothing
    /// changed since the last update.
    pub changes: Vec<Value>,
}

/// What the model has been offered so far in one conversation.
#[derive(Clone, Debug, Default)]
pub struct ToolChanges {
    /// The first request's `tools`; `None` before the first update.
    declared: Option<Vec<Value>>,
    /// Every tool the model can call now, by wire name, with the
    /// definition it was given (declared or added by value).
    offered: Vec<(String, Value)>,
}

impl ToolChanges {
    /// A conversation that has been offered nothing yet.
    pub fn new() -> Self {
        ToolChanges::default()
    }

    /// Brings the record up to `now` (the session's current request list
    /// in the Anthropic format, without `tool_reference` deferral: a tool
    /// held back is simply absent). The first call declares `now.tools`;
    /// each later one answers with the additions (new tools and changed
    /// definitions, by value) and removals since the previous call, in
    /// `now`'s order, removals first.
    pub fn update(&mut self, now: &RequestTools) -> ToolUpdate {
        let current: Vec<(String, Value)> = now
            .tools
            .iter()
            .filter(|def| !is_marked_deferred(def))
            .filter_map(|def| Some((def.get("name")?.as_str()?.to_string(), def.clone())))
            .collect();
        let Some(declared) = &self.declared else {
            let tools: Vec<Value> = current.iter().map(|(_, d)| d.clone()).collect();
            self.declared = Some(tools.clone());
            self.offered = current;
            return ToolUpdate {
                tools,
                changes: Vec::new(),
            };
        };
        let mut changes = Vec::new();
        for (name, _) in &self.offered {
            if !current.iter().any(|(n, _)| n == name) {
                changes.push(removal(name));
            }
        }
        for (name, def) in &current {
            let known = self.offered.iter().find(|(n, _)| n == name);
            if known.is_none_or(|(_, before)| before != def) {
                changes.push(addition(def));
            }
        }
        let tools = declared.clone();
        self.offered = current;
        ToolUpdate { tools, changes }
    }

    /// The `tools` the first request declared, if one was made.
    pub fn declared(&self) -> Option<&[Value]> {
        self.declared.as_deref()
    }

    /// Forgets everything: the next update declares its list afresh (after
    /// the host dropped the blocks from its history, e.g. compaction or a
    /// provider that refused the beta).
    pub fn reset(&mut self) {
        *self = ToolChanges::default();
    }
}

/// A definition held back by `defer_loading` is not offered; this record
/// is for conversations that add tools by blocks instead.
fn is_marked_deferred(def: &Value) -> bool {
    def.get("defer_loading").and_then(Value::as_bool) == Some(true)
}

/// A `tool_addition` carrying `definition` by value.
pub fn addition(definition: &Value) -> Value {
    json!({
        "type": "tool_addition",
        "tool": {"type": "tool_definition", "definition": definition},
    })
}

/// A `tool_removal` naming the tool the model knows as `name`.
pub fn removal(name: &str) -> Value {
    json!({
        "type": "tool_removal",
        "tool": {"type": "tool_reference", "name": name},
    })
}

/// The message that carries `changes` in the conversation.
pub fn system_message(changes: Vec<Value>) -> Value {
    json!({"role": "system", "content": changes})
}

/// Whether `message` is such a message (a host falling back to rewriting
/// `tools` takes them out of its history).
pub fn is_change_message(message: &Value) -> bool {
    message.get("role").and_then(Value::as_str) == Some("system")
        && message
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                !blocks.is_empty()
                    && blocks.iter().all(|b| {
                        matches!(
                            b.get("type").and_then(Value::as_str),
                            Some("tool_addition" | "tool_removal")
                        )
                    })
            })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WireFormat;

    fn list(defs: Vec<Value>) -> RequestTools {
        RequestTools {
            format: WireFormat::Anthropic,
            tools: defs,
            deferred: Vec::new(),
            loaded: Vec::new(),
            reminder: None,
        }
    }

    fn def(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "input_schema": {"type": "object"}})
    }

    #[test]
    fn additions_removals_and_a_frozen_tools_array() {
        let mut changes = ToolChanges::new();
        let first = changes.update(&list(vec![def("Bash", "b"), def("mcp_x", "x")]));
        assert_eq!(first.tools.len(), 2);
        assert!(first.changes.is_empty());
        // Nothing changed: no blocks.
        let same = changes.update(&list(vec![def("Bash", "b"), def("mcp_x", "x")]));
        assert!(same.changes.is_empty());
        // A load, a removal and a changed definition.
        let next = changes.update(&list(vec![def("Bash", "b2"), def("NotebookEdit", "n")]));
        assert_eq!(next.tools, first.tools, "tools is never rewritten");
        assert_eq!(
            next.changes,
            vec![
                removal("mcp_x"),
                addition(&def("Bash", "b2")),
                addition(&def("NotebookEdit", "n")),
            ]
        );
        assert!(is_change_message(&system_message(next.changes)));
        assert!(!is_change_message(
            &json!({"role": "system", "content": [{"type": "text", "text": "x"}]})
        ));
        changes.reset();
        assert!(changes.declared().is_none());
    }

    #[test]
    fn deferred_markers_are_not_offered_and_refusals_are_recognised() {
        let mut changes = ToolChanges::new();
        let mut held = def("Later", "l");
        held["defer_loading"] = json!(true);
        let first = changes.update(&list(vec![def("Bash", "b"), held]));
        assert_eq!(first.tools, vec![def("Bash", "b")]);
        assert!(refuses_beta(
            400,
            r#"{"error":{"message":"Unexpected value(s) `mid-conversation-tool-changes-2026-07-01` for the `anthropic-beta` header"}}"#
        ));
        assert!(!refuses_beta(400, "max_tokens: too large"));
        assert!(!refuses_beta(500, TOOL_CHANGES_BETA));
    }
}
