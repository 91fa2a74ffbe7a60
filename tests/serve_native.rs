//! `baton serve` with OpenAI's native local tool items and the codex tool
//! set: a Responses message of `shell_call`, `apply_patch_call` and codex
//! `shell` calls is answered in each item's own output type; the same
//! items fed as stream events are too; the `tools` line carries codex's
//! definitions.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn start(dir: &std::path::Path) -> Serve {
    Serve::start(
        BATON,
        &[
            "--cwd",
            dir.to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
            "--tool-set",
            "codex",
        ],
    )
}

fn items() -> Vec<Value> {
    vec![
        json!({"type": "shell_call", "id": "sh", "call_id": "c_sh", "status": "completed",
               "action": {"commands": ["printf native"]}}),
        json!({"type": "apply_patch_call", "id": "ap", "call_id": "c_ap", "status": "completed",
               "operation": {"type": "create_file", "path": "made.txt", "diff": "+made\n"}}),
        json!({"type": "function_call", "id": "fc", "call_id": "c_fn", "name": "shell",
               "arguments": json!({"command": ["bash", "-lc", "printf codex"]}).to_string()}),
    ]
}

fn check(done: &Value, dir: &std::path::Path) {
    let message = done["message"].as_array().unwrap();
    let kinds: Vec<&str> = message
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "shell_call_output",
            "apply_patch_call_output",
            "function_call_output"
        ],
        "{done}"
    );
    assert_eq!(message[0]["output"][0]["stdout"], "native");
    assert_eq!(message[1]["status"], "completed");
    assert!(message[2]["output"].as_str().unwrap().contains("codex"));
    assert_eq!(
        std::fs::read_to_string(dir.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn a_message_of_native_items_is_answered_in_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "message", "format": "openai-responses",
                  "message": {"object": "response", "output": items()}}));
    let done = s.next_of("done");
    check(&done, dir.path());
    s.send(json!({"type": "tools", "format": "openai_responses"}));
    let tools = s.next_of("tools");
    let defs = tools["tools"].as_array().unwrap();
    let patches: Vec<&Value> = defs.iter().filter(|d| d["name"] == "apply_patch").collect();
    assert_eq!(patches.len(), 1, "one definition per name: {tools}");
    assert_eq!(patches[0]["type"], "custom");
    assert!(!defs.iter().any(|d| d["name"] == "Bash"));
    // codex's session tools are offered up front (deferred in the Claude
    // set), once each.
    for name in ["exec_command", "write_stdin"] {
        let found = defs.iter().filter(|d| d["name"] == name).count();
        assert_eq!(found, 1, "{name} once in a codex request: {tools}");
    }
    s.finish();
}

/// A codex-style turn pair over serve: `exec_command` starts a Python REPL
/// on a PTY, `write_stdin` types into it and reads the answer.
#[test]
fn the_codex_set_drives_an_interactive_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    let exec = json!({"type": "function_call", "id": "fc1", "call_id": "c_exec",
        "name": "exec_command",
        "arguments": json!({"cmd": "python3 -q -i", "tty": true, "yield_time_ms": 1500}).to_string()});
    s.send(json!({"type": "message", "format": "openai-responses",
                  "message": {"object": "response", "output": [exec]}}));
    let done = s.next_of("done");
    let out = done["message"][0]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let id: u64 = out
        .split("session ID ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a running session: {done}"));
    let write = json!({"type": "function_call", "id": "fc2", "call_id": "c_write",
        "name": "write_stdin",
        "arguments": json!({"session_id": id, "chars": "print(6*7)\n", "yield_time_ms": 3000}).to_string()});
    s.send(json!({"type": "message", "format": "openai-responses",
                  "message": {"object": "response", "output": [write]}}));
    let done = s.next_of("done");
    let out = done["message"][0]["output"].as_str().unwrap_or_default();
    assert!(out.contains("42"), "{done}");
    s.finish();
}

#[test]
fn streamed_native_items_are_answered_in_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "stream", "event": {"type": "response.created", "response": {}}}));
    for (i, item) in items().into_iter().enumerate() {
        s.send(json!({"type": "stream", "event":
            {"type": "response.output_item.added", "output_index": i, "item": item}}));
        s.send(json!({"type": "stream", "event":
            {"type": "response.output_item.done", "output_index": i, "item": item}}));
    }
    s.send(json!({"type": "stream", "event":
        {"type": "response.completed", "response": {"status": "completed"}}}));
    let done = s.next_of("done");
    check(&done, dir.path());
    s.finish();
}

#[test]
fn native_items_past_the_call_limit_in_a_long_line_are_refused_in_kind() {
    // Over 1 MiB, so serve reads the line with the calls past the limit
    // unbuilt (`wire::cut_message_line`); those still need their output
    // type and the shell call's `max_output_length`.
    let dir = tempfile::tempdir().unwrap();
    let mut serve = start(dir.path());
    let pad = "x".repeat(100);
    let mut output: Vec<Value> = (0..10_000)
        .map(|i| {
            json!({"type": "function_call", "id": format!("fc{i}"), "call_id": format!("c{i}"),
                   "name": "NoSuchTool", "arguments": json!({"pad": pad}).to_string()})
        })
        .collect();
    output.push(json!({"type": "shell_call", "call_id": "late_sh",
                       "action": {"commands": ["touch ran"], "max_output_length": 40}}));
    output.push(json!({"type": "reasoning", "id": "r", "summary": []}));
    output.push(json!({"type": "apply_patch_call", "call_id": "late_ap",
                       "operation": {"type": "delete_file", "path": "x"}}));
    output.push(
        json!({"type": "function_call", "call_id": "late_fn", "name": "shell",
                       "arguments": "{\"command\":[\"touch\",\"ran\"]}"}),
    );
    let line = json!({"type": "message", "message": {"object": "response", "output": output}});
    assert!(line.to_string().len() > 1 << 20);
    serve.send(line);
    let done = serve.next_of("done");
    let answer = done["message"].as_array().unwrap();
    assert_eq!(answer.len(), 10_003, "one item per call");
    let late: Vec<&str> = answer[10_000..]
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        late,
        [
            "shell_call_output",
            "apply_patch_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(answer[10_000]["call_id"], "late_sh");
    assert_eq!(answer[10_000]["max_output_length"], 40);
    let stderr = answer[10_000]["output"][0]["stderr"].as_str().unwrap();
    assert!(
        stderr.starts_with("<tool_use_error>This message"),
        "{stderr}"
    );
    assert_eq!(answer[10_001]["status"], "failed");
    assert!(answer[10_002]["output"]
        .as_str()
        .unwrap()
        .contains("more than 10000 tool calls"));
    assert!(
        !dir.path().join("ran").exists(),
        "a call past the limit ran"
    );
    assert_eq!(done["summary"]["calls"], 10_003);
}

/// Two batches at once that reuse a call id: each is answered in the type
/// of its own item (the native items are kept per batch, not per session,
/// where the first batch to end took the other's item).
#[test]
fn batches_at_once_that_reuse_a_call_id_keep_their_own_types() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    let slow = json!({"type": "shell_call", "id": "sh", "call_id": "dup", "status": "completed",
                      "action": {"commands": ["sleep 2; printf slow"]}});
    let fast = json!({"type": "function_call", "id": "fc", "call_id": "dup", "name": "shell",
                      "arguments": json!({"command": ["bash", "-lc", "printf fast"]}).to_string()});
    s.send(
        json!({"type": "message", "batch": "a", "format": "openai-responses",
                  "message": {"object": "response", "output": [slow]}}),
    );
    s.send(
        json!({"type": "message", "batch": "b", "format": "openai-responses",
                  "message": {"object": "response", "output": [fast]}}),
    );
    let mut kinds = std::collections::BTreeMap::new();
    for _ in 0..2 {
        let done = s.next_of("done");
        let message = done["message"].as_array().unwrap();
        assert_eq!(message.len(), 1, "{done}");
        let batch = done["batch"].as_str().unwrap().to_string();
        kinds.insert(batch, message[0]["type"].as_str().unwrap().to_string());
    }
    assert_eq!(kinds["a"], "shell_call_output", "{kinds:?}");
    assert_eq!(kinds["b"], "function_call_output", "{kinds:?}");
    s.finish();
}
