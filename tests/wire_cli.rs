//! Every wire format through `baton run` and `baton serve`, and the strict
//! schemas of the built-in tools.

use baton::engine::wire::{WireFormat, WireTools};
use baton::engine::AllowAllUnsafe;
use baton_test_support::cli;
use serde_json::{json, Value};

use crate::support::baton;

fn run(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let out = cli::with_stdin(baton().args(args), stdin);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_builtin_tool_gets_a_strict_schema_for_openai() {
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    for format in [WireFormat::OpenAiChat, WireFormat::OpenAiResponses] {
        let tools = WireTools::new(&pool, format);
        let loose: Vec<&str> = tools
            .tools()
            .iter()
            .filter(|t| t.strict != Some(true))
            .map(|t| t.name.as_str())
            // Claude Code's own schemas for these hold open maps
            // (`answers`, `annotations`; ExitPlanMode's any-member object),
            // which the strict subset cannot express; they are sent as
            // they are, with `strict: false`.
            .filter(|name| !["AskUserQuestion", "ExitPlanMode"].contains(name))
            .collect();
        assert!(loose.is_empty(), "{format}: not strict: {loose:?}");
        // Each strict schema compiles, with every property required.
        for t in tools.tools().iter().filter(|t| t.strict == Some(true)) {
            assert!(jsonschema::validator_for(&t.schema).is_ok(), "{}", t.name);
            let required = t.schema["required"].as_array().unwrap();
            assert_eq!(
                required.len(),
                t.schema["properties"].as_object().unwrap().len()
            );
        }
    }
}

#[test]
fn run_answers_each_format_in_that_format() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let chat = json!({"role": "assistant", "content": [], "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "Sleep", "arguments": "{\"duration_ms\": 1}"}},
        {"id": "c2", "type": "function", "function": {"name": "Glob", "arguments": "{\"pattern\": \"*.none\", \"path\": null}"}}
    ]});
    let (code, out, err) = run(&["run", "--cwd", cwd, "-"], &chat.to_string());
    assert_eq!(code, Some(0), "{err}");
    let msgs: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        msgs[0],
        json!({"role": "tool", "tool_call_id": "c1", "content": "Slept for 1 ms."})
    );
    // `path: null` (the strict form of "absent") was accepted as absent.
    assert_eq!(msgs[1]["tool_call_id"], "c2");
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("No files found"),
        "{out}"
    );

    let responses = json!({"object": "response", "output": [
        {"type": "reasoning", "id": "rs", "summary": []},
        {"type": "function_call", "id": "fc", "call_id": "call_1", "name": "Sleep", "arguments": "{\"duration_ms\": 1}"}
    ]});
    let (code, out, _) = run(&["run", "--cwd", cwd, "-"], &responses.to_string());
    assert_eq!(code, Some(0));
    let items: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        items,
        json!([{"type": "function_call_output", "call_id": "call_1", "output": "Slept for 1 ms."}])
    );

    // Forcing the wrong format is refused rather than losing the calls.
    let (code, out, err) = run(
        &["run", "--format", "anthropic", "--cwd", cwd, "-"],
        &chat.to_string(),
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(err.contains("openai-chat"), "{err}");
}

#[test]
fn serve_takes_calls_in_every_format_and_answers_in_kind() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let lines = [
        json!({"type": "add", "tool_call": {"id": "c1", "type": "function", "function": {"name": "Sleep", "arguments": "{\"duration_ms\":1}"}}}),
        json!({"type": "end"}),
        json!({"type": "add", "item": {"type": "function_call", "call_id": "r1", "name": "Sleep", "arguments": "{\"duration_ms\":1}"}}),
        json!({"type": "end"}),
        json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "x", "signature": "s"},
            {"type": "tool_use", "id": "t1", "name": "Sleep", "input": {"duration_ms": 1}}]}}),
        json!({"type": "message", "format": "openai-chat", "message": {"role": "assistant", "content": "no calls"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (code, out, err) = run(&["serve", "--cwd", cwd], &input);
    assert_eq!(code, Some(0), "{err}");
    let done: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "done")
        .collect();
    assert_eq!(done.len(), 4, "{out}");
    let by_batch = |n: u64| done.iter().find(|d| d["batch"] == n).unwrap()["message"].clone();
    assert_eq!(
        by_batch(1),
        json!([{"role": "tool", "tool_call_id": "c1", "content": "Slept for 1 ms."}])
    );
    assert_eq!(
        by_batch(2),
        json!([{"type": "function_call_output", "call_id": "r1", "output": "Slept for 1 ms."}])
    );
    assert_eq!(by_batch(3)["content"][0]["tool_use_id"], "t1");
    // No calls, nothing to send back: the APIs reject an empty message.
    assert_eq!(by_batch(4), Value::Null);
}

#[test]
fn hooks_see_who_made_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let hook = r#"python3 -c "import json,sys; d=json.load(sys.stdin); c=d.get('caller'); print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny', 'permissionDecisionReason': 'made by ' + c['type']}}) if c else '')""#;
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Sleep", "hooks": [{"type": "command", "command": hook}]}]}});
    let settings_path = dir.path().join("settings.json");
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    let msg = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "direct", "name": "Sleep", "input": {"duration_ms": 1}},
        {"type": "tool_use", "id": "coded", "name": "Sleep", "input": {"duration_ms": 1},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}}
    ]});
    let (code, out, err) = run(
        &[
            "run",
            "--cwd",
            cwd,
            "--settings",
            settings_path.to_str().unwrap(),
            "-",
        ],
        &msg.to_string(),
    );
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert!(answer["content"][0].get("is_error").is_none(), "{out}");
    let denied = &answer["content"][1];
    assert_eq!(denied["is_error"], true, "{out}");
    assert!(
        denied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("made by code_execution_20250825"),
        "{out}"
    );
}
