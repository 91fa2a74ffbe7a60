//! `baton agent --provider openai-responses` against a mock Responses
//! server on 127.0.0.1 that streams OpenAI's native local tool items
//! (`shell_call`, `apply_patch_call`, `custom_tool_call`) and codex-style
//! function calls: each runs through the pipeline (rules included) and is
//! answered in its own output type, in order.

use std::sync::{Arc, Mutex};

use baton_test_support::model_server;
use serde_json::{json, Value};

/// Serves the replies (each a list of SSE events) as a mock Responses API.
fn start(replies: Vec<Vec<Value>>) -> (model_server::Mock, String) {
    let replies = replies
        .iter()
        .map(|events| {
            events
                .iter()
                .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
                .collect::<String>()
        })
        .collect();
    let mock = model_server::Mock {
        replies: Arc::new(Mutex::new(replies)),
        ..model_server::Mock::default()
    };
    let base = model_server::serve_mock(mock.clone());
    (mock, format!("{base}/v1"))
}

/// A Responses stream whose output is `items`, each added then done.
fn response(items: &[Value]) -> Vec<Value> {
    let mut events =
        vec![json!({"type": "response.created", "response": {"status": "in_progress"}})];
    for (i, item) in items.iter().enumerate() {
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(
        json!({"type": "response.completed", "response": {"status": "completed",
        "usage": {"input_tokens": 10, "output_tokens": 5}}}),
    );
    events
}

fn finish() -> Vec<Value> {
    response(&[
        json!({"type": "message", "id": "m", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "done", "annotations": []}]}),
    ])
}

fn agent(base: &str, dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, Vec<Value>) {
    let out = crate::support::baton()
        .args([
            "agent",
            "--provider",
            "openai-responses",
            "--base-url",
            base,
            "--events",
        ])
        .args(extra)
        .arg("--cwd")
        .arg(dir)
        .arg("do the task")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code(), lines)
}

/// The items of the second request that answer the first turn.
fn answers(request: &Value) -> Vec<Value> {
    request["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .cloned()
        .collect()
}

#[test]
fn native_shell_patch_and_custom_calls_run_and_are_answered_in_kind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("edit.txt"), "alpha\nbeta\n").unwrap();
    let turn = response(&[
        json!({"type": "shell_call", "id": "sh1", "call_id": "c_shell", "status": "completed",
               "action": {"commands": ["printf 'hi from shell'"], "timeout_ms": 20000, "max_output_length": 5000}}),
        json!({"type": "apply_patch_call", "id": "ap1", "call_id": "c_create", "status": "completed",
               "operation": {"type": "create_file", "path": "notes.txt", "diff": "+hello\n+world\n"}}),
        json!({"type": "apply_patch_call", "id": "ap2", "call_id": "c_update", "status": "completed",
               "operation": {"type": "update_file", "path": "edit.txt", "diff": "@@\n alpha\n-beta\n+gamma\n"}}),
        json!({"type": "custom_tool_call", "id": "ct1", "call_id": "c_custom", "name": "apply_patch",
               "input": "*** Begin Patch\n*** Add File: custom.txt\n+freeform\n*** End Patch\n"}),
        json!({"type": "shell_call", "id": "sh2", "call_id": "c_fail", "status": "completed",
               "action": {"commands": ["exit 3"]}}),
    ]);
    let (mock, base) = start(vec![turn, finish()]);
    let (code, lines) = agent(
        &base,
        dir.path(),
        &[
            "--tool-set",
            "codex",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    assert_eq!(code, Some(0), "{lines:#?}");
    let requests = mock.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let got = answers(&requests[1]);
    let kinds: Vec<(&str, &str)> = got
        .iter()
        .map(|a| {
            (
                a["type"].as_str().unwrap(),
                a["call_id"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("shell_call_output", "c_shell"),
            ("apply_patch_call_output", "c_create"),
            ("apply_patch_call_output", "c_update"),
            ("custom_tool_call_output", "c_custom"),
            ("shell_call_output", "c_fail"),
        ]
    );
    assert_eq!(got[0]["output"][0]["stdout"], "hi from shell");
    assert_eq!(
        got[0]["output"][0]["outcome"],
        json!({"type": "exit", "exit_code": 0})
    );
    assert_eq!(got[0]["max_output_length"], 5000);
    assert_eq!(got[1]["status"], "completed", "{}", got[1]);
    assert_eq!(got[2]["status"], "completed", "{}", got[2]);
    assert_eq!(
        got[4]["output"][0]["outcome"],
        json!({"type": "exit", "exit_code": 3})
    );
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("notes.txt"), "hello\nworld\n");
    assert_eq!(read("edit.txt"), "alpha\ngamma\n");
    assert_eq!(read("custom.txt"), "freeform\n");
    // The codex set's definitions went out: apply_patch as a grammar tool.
    let tools = requests[0]["tools"].as_array().unwrap();
    let patches: Vec<&Value> = tools
        .iter()
        .filter(|t| t["name"] == "apply_patch")
        .collect();
    assert_eq!(patches.len(), 1, "one definition per name: {tools:#?}");
    let patch = patches[0];
    assert_eq!(patch["type"], "custom");
    assert_eq!(patch["format"]["syntax"], "lark");
    assert!(tools
        .iter()
        .any(|t| t["name"] == "shell" && t["type"] == "function"));
    assert!(!tools.iter().any(|t| t["name"] == "Bash"));
}

#[test]
fn rules_see_native_and_codex_commands_as_bash_and_patches_as_edits() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x\n").unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"deny": ["Bash(touch:*)", "Edit(./keep.txt)"]}}).to_string(),
    )
    .unwrap();
    let turn = response(&[
        json!({"type": "shell_call", "id": "sh1", "call_id": "c_native", "status": "completed",
               "action": {"commands": ["touch native-made"]}}),
        json!({"type": "function_call", "id": "fc1", "call_id": "c_codex", "name": "shell",
               "arguments": json!({"command": ["bash", "-lc", "touch codex-made"]}).to_string()}),
        json!({"type": "apply_patch_call", "id": "ap1", "call_id": "c_patch", "status": "completed",
               "operation": {"type": "delete_file", "path": "keep.txt"}}),
        json!({"type": "function_call", "id": "fc2", "call_id": "c_plan", "name": "update_plan",
               "arguments": json!({"plan": [{"step": "look", "status": "in_progress"}]}).to_string()}),
    ]);
    let (mock, base) = start(vec![turn, finish()]);
    let settings = settings.to_string_lossy().to_string();
    let (code, lines) = agent(
        &base,
        dir.path(),
        &[
            "--tool-set",
            "codex",
            "--permission-mode",
            "bypassPermissions",
            "--settings",
            &settings,
        ],
    );
    assert_eq!(code, Some(0), "{lines:#?}");
    let requests = mock.requests.lock().unwrap().clone();
    let got = answers(&requests[1]);
    assert_eq!(got.len(), 4, "{got:#?}");
    let stderr = got[0]["output"][0]["stderr"].as_str().unwrap();
    assert!(stderr.contains("Bash(touch:*)"), "{stderr}");
    assert_eq!(got[1]["type"], "function_call_output");
    assert!(
        got[1]["output"].as_str().unwrap().contains("Bash(touch:*)"),
        "{}",
        got[1]
    );
    assert_eq!(got[2]["status"], "failed");
    assert!(
        got[2]["output"]
            .as_str()
            .unwrap()
            .contains("Edit(./keep.txt)"),
        "{}",
        got[2]
    );
    assert!(
        !got[3]["output"].as_str().unwrap().contains("denied"),
        "{}",
        got[3]
    );
    assert!(!dir.path().join("native-made").exists());
    assert!(!dir.path().join("codex-made").exists());
    assert!(dir.path().join("keep.txt").exists());
}

#[test]
fn the_system_prompt_says_where_the_model_is_and_hosts_can_change_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mock, base) = start(vec![finish()]);
    let (code, _) = agent(
        &base,
        dir.path(),
        &["--append-system-prompt", "Answer in French."],
    );
    assert_eq!(code, Some(0));
    let sent = mock.requests.lock().unwrap()[0]["instructions"]
        .as_str()
        .unwrap()
        .to_string();
    let cwd = dir.path().display().to_string();
    assert!(
        sent.contains(&format!("Working directory: {cwd}")),
        "{sent}"
    );
    assert!(sent.contains(std::env::consts::OS), "{sent}");
    assert!(sent.contains("Date: 20"), "{sent}");
    assert!(sent.contains("`Bash`"), "{sent}");
    assert!(sent.ends_with("Answer in French."), "{sent}");

    let file = dir.path().join("prompt.txt");
    std::fs::write(&file, "Only this.").unwrap();
    let (mock, base) = start(vec![finish()]);
    let file = file.to_string_lossy().to_string();
    let (code, _) = agent(&base, dir.path(), &["--system-prompt", &file]);
    assert_eq!(code, Some(0));
    assert_eq!(
        mock.requests.lock().unwrap()[0]["instructions"],
        "Only this."
    );
    // A file that cannot be read is a usage error, before any request.
    let (mock, base) = start(vec![finish()]);
    let (code, _) = agent(&base, dir.path(), &["--system-prompt", "/nonexistent/p"]);
    assert_eq!(code, Some(2));
    assert!(mock.requests.lock().unwrap().is_empty());
}
