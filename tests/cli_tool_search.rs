//! Tool search through the command: `baton tools`, the serve protocol's
//! `tools` / `reset_tools` messages and `done.loaded_tools`.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// `baton` without the machine's `ENABLE_TOOL_SEARCH`.
fn baton() -> Command {
    let mut cmd = crate::support::baton();
    cmd.env_remove("ENABLE_TOOL_SEARCH");
    cmd
}

#[test]
fn tools_marks_deferred_tools_per_format_and_mode() {
    let out = baton().args(["tools"]).output().unwrap();
    assert!(out.status.success());
    let defs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let marked: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["defer_loading"] == json!(true))
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        marked,
        [
            "EnterWorktree",
            "ExitWorktree",
            "ListAgents",
            "Monitor",
            "NotebookEdit",
            "SendMessage",
            "Sleep",
            "TaskOutput",
            "TaskStop",
            "TodoWrite",
            "WebFetch",
            "exec_command",
            "write_stdin"
        ]
    );

    let out = baton()
        .args(["tools", "--format", "openai-responses"])
        .output()
        .unwrap();
    let defs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ToolSearch") && !names.contains(&"WebFetch"));

    let out = baton()
        .args(["tools", "--list", "--tool-search", "false"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("loaded            WebFetch"), "{text}");
    assert!(text.contains("off               ToolSearch"), "{text}");

    let out = baton()
        .args(["tools", "--list"])
        .env("ENABLE_TOOL_SEARCH", "auto:0")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("deferred          WebFetch"), "{text}");
    assert!(text.contains("auto:0 (active)"), "{text}");

    let out = baton()
        .args(["tools"])
        .env("ENABLE_TOOL_SEARCH", "sometimes")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ENABLE_TOOL_SEARCH"));
}

#[test]
fn serve_reports_loaded_tools_and_answers_tools_requests() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = baton()
        .args(["serve", "--tool-format", "openai-chat", "--cwd"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    let mut next = |kind: &str| loop {
        let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if line["type"] == kind {
            return line;
        }
    };

    send(json!({"type": "tools"}));
    let tools = next("tools");
    assert_eq!(tools["format"], "openai_chat");
    assert!(tools["deferred"]
        .as_array()
        .unwrap()
        .contains(&json!("WebFetch")));

    let search = |id: &str, query: &str| {
        json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "ToolSearch", "input": {"query": query}}
        ]}})
    };
    send(search("t1", "select:WebFetch"));
    let done = next("done");
    assert_eq!(done["loaded_tools"], json!(["WebFetch"]));
    let text = done["message"]["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("\"parameters\""), "{text}");

    send(json!({"type": "tools", "format": "openai-chat"}));
    let tools = next("tools");
    assert_eq!(tools["loaded"], json!(["WebFetch"]));
    let last = tools["tools"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["function"]["name"], "WebFetch");

    // Loading it again is no news; after a reset it is.
    send(search("t2", "select:WebFetch"));
    assert!(next("done").get("loaded_tools").is_none());
    send(json!({"type": "reset_tools"}));
    send(search("t3", "select:WebFetch"));
    assert_eq!(next("done")["loaded_tools"], json!(["WebFetch"]));

    send(json!({"type": "tools", "format": 3}));
    assert!(next("error")["message"]
        .as_str()
        .unwrap()
        .contains("format"));
    send(json!({"type": "shutdown"}));
    assert!(child.wait().unwrap().success());
}
