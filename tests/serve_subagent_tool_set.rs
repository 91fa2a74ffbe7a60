//! serve's `subagent_request` carries the session's tool set: with
//! `--tool-set codex` the subagent's model is offered codex's tools, each
//! rendered exactly as the session's own `tools` line renders it, and the
//! subagent's calls in codex's names run as the tools underneath.

use std::time::{Duration, Instant};

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_subagent_request_is_rendered_in_the_sessions_tool_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
            "--tool-set",
            "codex",
            "--tool-format",
            "openai-responses",
        ],
    );
    s.send(json!({"type": "tools"}));
    let top = s.next_of("tools");
    s.send(
        json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "top", "name": "Agent", "input": {
            "description": "work", "prompt": "work", "subagent_type": "general-purpose"}}]}}),
    );
    let request = s.next_of("subagent_request");
    let sub = &request["tools"];
    let sub_names = names(sub);
    for wanted in ["shell", "shell_command", "apply_patch", "update_plan"] {
        assert!(
            sub_names.iter().any(|n| n == wanted),
            "{wanted} missing: {sub_names:?}"
        );
    }
    for gone in ["Bash", "Edit", "Write", "TodoWrite"] {
        assert!(
            !sub_names.iter().any(|n| n == gone),
            "{gone} offered: {sub_names:?}"
        );
    }
    let patch = sub
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "apply_patch")
        .unwrap();
    assert_eq!(patch["type"], "custom", "{patch}");
    // Same renderer, same set: each subagent definition is the top level's.
    let top_tools = top["tools"].as_array().unwrap();
    for def in sub.as_array().unwrap() {
        assert!(
            top_tools.contains(def),
            "{} differs from the tools line",
            def["name"]
        );
    }
    // A call in codex's names runs (as Bash underneath).
    let agent = request["agent_id"].as_str().unwrap().to_string();
    let marker = dir.path().join("from-subagent");
    s.send(json!({"type": "add", "agent_id": agent, "tool_use": {
        "type": "tool_use", "id": "sc", "name": "shell_command",
        "input": {"command": format!("echo ran > '{}'", marker.display())}}}));
    s.send(json!({"type": "end", "agent_id": agent}));
    let start = Instant::now();
    while !marker.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the subagent's shell_command never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = s.child.kill();
    let _ = s.child.wait();
}
