//! OpenAI's native local tool items (Responses): read from a whole
//! response and from a stream, and answered in their own output types.
//! Item shapes follow the `openai` Python package 3.57
//! (`types/responses/response_function_shell_tool_call.py`,
//! `response_apply_patch_tool_call.py`, `response_custom_tool_call.py`,
//! `response_output_item.py` `LocalShellCall`, and the `*_output` params of
//! `response_input_item_param.py`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_engine::call::{CallResult, Outcome};
use baton_engine::content::ContentBlock;
use baton_engine::wire::{self, FnSink, StreamParser, WireFormat};
use serde_json::{json, Value};

fn items() -> Value {
    json!([
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed",
         "action": {"commands": ["ls -la", "echo hi"], "timeout_ms": 5000, "max_output_length": 4}},
        {"type": "apply_patch_call", "id": "ap_1", "call_id": "call_ap", "status": "completed",
         "operation": {"type": "update_file", "path": "src/a.rs", "diff": "@@ fn a\n-x\n+y\n"}},
        {"type": "apply_patch_call", "id": "ap_2", "call_id": "call_new", "status": "completed",
         "operation": {"type": "create_file", "path": "b.txt", "diff": "+one\n+two\n"}},
        {"type": "local_shell_call", "id": "ls_1", "call_id": "call_ls", "status": "completed",
         "action": {"type": "exec", "command": ["grep", "-r", "it's", "."], "env": {"LC_ALL": "C"},
                    "working_directory": "/tmp/w d"}},
        {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_ct", "name": "apply_patch",
         "input": "*** Begin Patch\n*** Delete File: x\n*** End Patch"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_fn", "name": "Read",
         "arguments": "{\"file_path\":\"/a\"}"}
    ])
}

#[test]
fn native_items_become_the_calls_rules_know() {
    let calls = wire::openai_responses::parse_tool_uses(&items()).unwrap();
    let got: Vec<(&str, &str, &Value)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), &c.input))
        .collect();
    assert_eq!(got.len(), 6);
    assert_eq!(
        got[0],
        (
            "call_sh",
            "Bash",
            &json!({"command": "ls -la\necho hi", "timeout": 5000})
        )
    );
    assert_eq!(got[1].1, "apply_patch");
    assert_eq!(
        got[1].2["input"],
        "*** Begin Patch\n*** Update File: src/a.rs\n@@ fn a\n-x\n+y\n*** End Patch\n"
    );
    assert_eq!(
        got[2].2["input"],
        "*** Begin Patch\n*** Add File: b.txt\n+one\n+two\n*** End Patch\n"
    );
    assert_eq!(
        got[3],
        (
            "call_ls",
            "Bash",
            &json!({"command": "cd '/tmp/w d' && LC_ALL=C grep -r 'it'\\''s' ."})
        )
    );
    assert_eq!(got[4].1, "apply_patch");
    assert_eq!(got[5].1, "Read");
    // Detection sees a response of native items only.
    let only = json!({"type": "shell_call", "call_id": "c", "action": {"commands": ["true"]}});
    assert_eq!(wire::detect(&only).unwrap(), WireFormat::OpenAiResponses);
}

#[test]
fn malformed_native_items_are_answered_not_lost() {
    let bad = json!([
        {"type": "shell_call", "call_id": "c1", "action": {"commands": "ls"}},
        {"type": "local_shell_call", "call_id": "c2",
         "action": {"type": "exec", "command": ["id"], "user": "root"}},
        {"type": "apply_patch_call", "call_id": "c3",
         "operation": {"type": "update_file", "path": "a", "diff": "*** Delete File: /etc/passwd\n"}},
        {"type": "local_shell_call", "call_id": "c4",
         "action": {"type": "exec", "command": ["true"], "env": {"A;rm -rf /": "x"}}},
    ]);
    let calls = wire::openai_responses::parse_tool_uses(&bad).unwrap();
    assert_eq!(calls.len(), 4);
    for c in &calls {
        assert!(c.input_error.is_some(), "{c:?}");
    }
    let no_id = json!([{"type": "shell_call", "action": {"commands": ["true"]}}]);
    assert!(wire::openai_responses::parse_tool_uses(&no_id).is_err());
}

fn result(id: &str, text: &str, is_error: bool, response: Option<Value>) -> CallResult {
    let mut r = CallResult::new(
        id,
        "x",
        vec![ContentBlock::text(text)],
        is_error,
        Outcome::Success,
    );
    r.response = response;
    r
}

#[test]
fn each_result_goes_back_in_its_items_output_type() {
    let results = [
        result(
            "call_sh",
            "hello",
            false,
            Some(json!({"stdout": "hello", "exitCode": 0, "timedOut": false})),
        ),
        result("call_ap", "Success.", false, None),
        result("call_new", "cannot add", true, None),
        result(
            "call_ls",
            "out",
            true,
            Some(json!({"stdout": "out", "exitCode": 2})),
        ),
        result("call_ct", "done", false, None),
        result("call_fn", "text", false, None),
    ];
    let answer = WireFormat::OpenAiResponses.answer(&items(), results.iter());
    let answer = answer.as_array().unwrap();
    assert_eq!(
        answer[0],
        json!({"type": "shell_call_output", "call_id": "call_sh", "max_output_length": 4,
               "output": [{"stdout": "hell", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]})
    );
    assert_eq!(
        answer[1],
        json!({"type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed", "output": "Success."})
    );
    assert_eq!(answer[2]["status"], "failed");
    assert_eq!(answer[3]["type"], "local_shell_call_output");
    assert_eq!(answer[3]["id"], "call_ls");
    let inner: Value = serde_json::from_str(answer[3]["output"].as_str().unwrap()).unwrap();
    assert_eq!(inner["metadata"]["exit_code"], 2);
    assert_eq!(
        answer[4],
        json!({"type": "custom_tool_call_output", "call_id": "call_ct", "output": "done"})
    );
    assert_eq!(answer[5]["type"], "function_call_output");
    // A shell call that timed out, and one refused before it ran.
    let timed = result(
        "call_sh",
        "t",
        true,
        Some(json!({"stdout": "t", "timedOut": true})),
    );
    let a = WireFormat::OpenAiResponses.answer(&items(), [&timed]);
    assert_eq!(a[0]["output"][0]["outcome"], json!({"type": "timeout"}));
    let refused = result("call_sh", "denied", true, None);
    let a = WireFormat::OpenAiResponses.answer(&items(), [&refused]);
    assert_eq!(a[0]["output"][0]["stderr"], "deni");
    assert_eq!(a[0]["output"][0]["outcome"]["exit_code"], 1);
}

#[test]
fn streamed_native_items_are_handed_over_when_complete() {
    let events = [
        json!({"type": "response.created", "response": {}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "shell_call", "id": "sh", "call_id": "c_sh", "status": "in_progress",
                        "action": {"commands": []}}}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"type": "shell_call", "id": "sh", "call_id": "c_sh", "status": "completed",
                        "action": {"commands": ["pwd"]}}}),
        json!({"type": "response.output_item.added", "output_index": 1,
               "item": {"type": "custom_tool_call", "id": "ct", "call_id": "c_ct", "name": "apply_patch", "input": ""}}),
        json!({"type": "response.custom_tool_call_input.delta", "output_index": 1, "item_id": "ct", "delta": "*** Begin"}),
        json!({"type": "response.custom_tool_call_input.done", "output_index": 1, "item_id": "ct",
               "input": "*** Begin Patch\n*** Delete File: a\n*** End Patch"}),
        json!({"type": "response.output_item.done", "output_index": 1,
               "item": {"type": "custom_tool_call", "id": "ct", "call_id": "c_ct", "name": "apply_patch",
                        "input": "*** Begin Patch\n*** Delete File: a\n*** End Patch"}}),
        json!({"type": "response.output_item.done", "output_index": 2,
               "item": {"type": "apply_patch_call", "id": "ap", "call_id": "c_ap", "status": "completed",
                        "operation": {"type": "delete_file", "path": "z"}}}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ];
    let mut parser = StreamParser::new(WireFormat::OpenAiResponses);
    let mut seen = Vec::new();
    let mut at = Vec::new();
    for (i, e) in events.iter().enumerate() {
        parser
            .feed(
                &e.to_string(),
                FnSink(|c: baton_engine::ToolUse| {
                    seen.push((c.id.clone(), c.name.clone()));
                }),
            )
            .unwrap();
        at.push((i, seen.len()));
    }
    let done = parser.finish(FnSink(|_| {})).unwrap();
    assert_eq!(
        seen,
        [
            ("c_sh".to_string(), "Bash".to_string()),
            ("c_ct".into(), "apply_patch".into()),
            ("c_ap".into(), "apply_patch".into())
        ]
    );
    // Each at the event that completes it: the freeform call at its input's done.
    assert_eq!(at[2].1, 1);
    assert_eq!(at[5].1, 2);
    assert_eq!(at[7].1, 3);
    assert_eq!(done.calls, 3);
    assert_eq!(done.message.as_array().unwrap().len(), 3);
}
