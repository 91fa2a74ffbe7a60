//! The pool as MCP `tools/list` entries, with behaviour annotations.
//!
//! MCP annotations are per tool while Baton's classifiers are per input
//! (`Bash` is read-only for `ls`, not for `rm`). A hint that a client may use
//! to skip a confirmation must hold for every input, so `readOnlyHint` is only
//! given to tools whose contract is read-only whatever the input; every other
//! tool is advertised as possibly writing, which is the cautious reading. The
//! table below is checked against the tools' own classifiers in the tests.

use std::sync::Arc;

use baton_engine::tool::ToolOrigin;
use baton_engine::Tool;
use serde_json::{json, Map, Value};

/// Built-ins that never change anything, whatever their input.
const READ_ONLY_FOR_EVERY_INPUT: &[&str] = &[
    "Read",
    "Glob",
    "Grep",
    "WebFetch",
    "ToolSearch",
    "TaskOutput",
    "Sleep",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
];

/// Writers whose changes are confined to the session's own state (not the
/// file system or other processes): not destructive.
const SESSION_STATE_ONLY: &[&str] = &["TodoWrite"];

/// Tools that reach beyond the machine's files: the network, or whatever a
/// shell command or an MCP server does.
const OPEN_WORLD: &[&str] = &["WebFetch", "Bash"];

/// The MCP annotations of `tool`, as a JSON object (`ToolAnnotations`).
pub fn annotations_for(tool: &Tool) -> Value {
    let name = tool.name();
    let mcp = matches!(tool.def().tool_origin(), ToolOrigin::Mcp { .. });
    let read_only = READ_ONLY_FOR_EVERY_INPUT.contains(&name);
    let mut map = Map::new();
    map.insert("title".into(), json!(name));
    map.insert("readOnlyHint".into(), json!(read_only));
    if !read_only {
        // Meaningful only for writers: may they destroy what was there?
        map.insert(
            "destructiveHint".into(),
            json!(!SESSION_STATE_ONLY.contains(&name)),
        );
    }
    map.insert(
        "openWorldHint".into(),
        json!(mcp || OPEN_WORLD.contains(&name)),
    );
    Value::Object(map)
}

/// One `tools/list` entry for `tool`.
pub fn mcp_tool(tool: &Arc<Tool>) -> rmcp::model::Tool {
    let description = if tool.def().prompt_text().is_empty() {
        tool.def().description().to_string()
    } else {
        tool.def().prompt_text().to_string()
    };
    let schema = match tool.input_schema() {
        Value::Object(map) => map.clone(),
        // A schema that is not an object cannot be offered as an MCP input
        // schema; an open object lets the engine's own validation speak.
        _ => {
            let mut map = Map::new();
            map.insert("type".into(), json!("object"));
            map
        }
    };
    let mut value = json!({
        "name": tool.name(),
        "description": description,
        "inputSchema": Value::Object(schema),
        "annotations": annotations_for(tool),
    });
    if let Some(output) = tool.def().output_schema_value() {
        if output.get("type") == Some(&json!("object")) {
            value["outputSchema"] = output.clone();
        }
    }
    match serde_json::from_value(value) {
        Ok(t) => t,
        // The JSON above has the exact shape of `Tool`; should rmcp's type
        // ever reject it, offer the tool with the bare minimum instead of
        // hiding it.
        Err(_) => rmcp::model::Tool::new(
            tool.name().to_string(),
            tool.def().description().to_string(),
            Arc::new(Map::new()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtins() -> Vec<Arc<Tool>> {
        match crate::BuiltinConfig::default().tools() {
            Ok(tools) => tools,
            Err(e) => panic!("built-ins: {e}"),
        }
    }

    #[test]
    fn read_only_hint_matches_the_tools_own_classifier() {
        // Inputs the tools accept; each read-only-for-every-input tool must
        // classify all of them as read-only, or the table is wrong.
        let samples: &[(&str, Value)] = &[
            ("Read", json!({"file_path": "/etc/hostname"})),
            ("Glob", json!({"pattern": "**/*"})),
            ("Grep", json!({"pattern": "x", "path": "/"})),
            (
                "WebFetch",
                json!({"url": "https://example.com", "prompt": "p"}),
            ),
            ("Sleep", json!({"duration_ms": 1})),
            ("Bash", json!({"command": "rm -rf /tmp/x"})),
            ("Write", json!({"file_path": "/tmp/x", "content": ""})),
        ];
        let tools = builtins();
        for (name, input) in samples {
            let Some(tool) = tools.iter().find(|t| t.name() == *name) else {
                continue;
            };
            let parsed = match tool.parse(input) {
                Ok(p) => p,
                Err(e) => panic!("{name}: sample input rejected: {e:?}"),
            };
            let hint = annotations_for(tool)["readOnlyHint"] == json!(true);
            if hint {
                assert!(tool.is_read_only(&parsed), "{name} advertised read-only");
            }
        }
        let bash = tools.iter().find(|t| t.name() == "Bash");
        if let Some(bash) = bash {
            let a = annotations_for(bash);
            assert_eq!(a["readOnlyHint"], json!(false));
            assert_eq!(a["destructiveHint"], json!(true));
            assert_eq!(a["openWorldHint"], json!(true));
        }
    }

    #[test]
    fn every_builtin_becomes_a_listable_tool() {
        for tool in builtins() {
            let t = mcp_tool(&tool);
            assert_eq!(t.name, tool.name());
            assert!(!t.input_schema.is_empty(), "{} has a schema", tool.name());
            let back = serde_json::to_value(&t).unwrap_or_default();
            assert_eq!(back["annotations"]["title"], json!(tool.name()));
        }
    }
}
