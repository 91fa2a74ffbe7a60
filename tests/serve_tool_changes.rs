//! serve's `tools` line with `changes: true` (Anthropic mid-conversation
//! tool changes): the `tools` array stays what the first answer declared,
//! and a ToolSearch load comes as a `tool_addition` block in the next
//! answer's `tool_changes`, once.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn names(line: &Value) -> Vec<String> {
    line["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_toolsearch_load_comes_as_a_tool_addition() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Serve::start(BATON, &["--cwd", dir.path().to_str().unwrap()]);
    s.send(json!({"type": "tools", "changes": true}));
    let first = s.next_of("tools");
    assert!(!names(&first).contains(&"Sleep".to_string()), "{first}");
    assert!(first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("defer_loading").is_none()));
    assert_eq!(first["tool_changes"], json!([]));
    assert!(first["beta"]
        .as_str()
        .unwrap()
        .contains("mid-conversation-tool-changes-2026-07-01"));
    assert!(first["deferred"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "Sleep"));
    s.send(
        json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "ts", "name": "ToolSearch",
         "input": {"query": "select:Sleep"}}]}}),
    );
    let done = s.next_of("done");
    let answer = done["message"].to_string();
    assert!(
        !answer.contains("tool_reference"),
        "a reference would name an undeclared tool: {answer}"
    );
    assert!(answer.contains("Sleep"), "{answer}");
    s.send(json!({"type": "tools", "changes": true}));
    let second = s.next_of("tools");
    assert_eq!(second["tools"], first["tools"], "tools was rewritten");
    let changes = second["tool_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["type"], "tool_addition");
    assert_eq!(changes[0]["tool"]["definition"]["name"], "Sleep");
    assert!(changes[0]["tool"]["definition"]["input_schema"].is_object());
    s.send(json!({"type": "tools", "changes": true}));
    assert_eq!(s.next_of("tools")["tool_changes"], json!([]));
    // Only Anthropic has the blocks.
    s.send(json!({"type": "tools", "changes": true, "format": "openai-chat"}));
    let error = s.next_of("error");
    assert!(error.to_string().contains("anthropic"), "{error}");
    let _ = s.child.kill();
    let _ = s.child.wait();
}
