//! The strict serve protocol (issue 24): a misspelled or mistyped field of
//! any line type is an `error` line naming the field, and the line does
//! nothing. Also per-call control: `cancel` one call by id, and the host's
//! per-call deadline (`timeout_ms` on `add`).

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
        ],
    )
}

fn sleep_call(id: &str, ms: u64) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Sleep", "input": {"duration_ms": ms}})
}

/// Sends `line`, expects an `error` line whose text names `field`.
fn refused(s: &mut Serve, line: Value, field: &str) {
    s.send(line.clone());
    let e = s.next();
    assert_eq!(e["type"], "error", "{line} gave {e}");
    let text = e["message"].as_str().unwrap_or_default();
    assert!(
        text.contains(&format!("`{field}`")),
        "{line}: the error does not name `{field}`: {text}"
    );
}

#[test]
fn a_misspelled_batch_on_interrupt_does_not_cancel_the_latest_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "add", "batch": "A", "tool_use": sleep_call("a1", 1500)}));
    assert_eq!(s.next()["type"], "batch_started");
    s.send(json!({"type": "end"}));
    refused(
        &mut s,
        json!({"type": "interrupt", "batchh": "A"}),
        "batchh",
    );
    // The batch ran to completion: the interrupt did nothing.
    let lines = s.until("done");
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["outcome"]["kind"], "success", "{result}");
    assert!(lines.last().unwrap()["summary"]["interrupted"].is_null());
    s.finish();
}

#[test]
fn every_line_type_refuses_unknown_and_mistyped_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    let call = sleep_call("x", 1);
    let cases = [
        // Unknown (misspelled) fields.
        (
            json!({"type": "add", "tool_use": call, "bach": "A"}),
            "bach",
        ),
        (json!({"type": "end", "batchh": "A"}), "batchh"),
        (json!({"type": "message", "mesage": {}}), "mesage"),
        (json!({"type": "stream", "evnt": "[DONE]"}), "evnt"),
        (json!({"type": "interrupt", "knd": "cancel"}), "knd"),
        (json!({"type": "cancel", "id": "x", "bacth": 1}), "bacth"),
        (json!({"type": "background", "callid": "x"}), "callid"),
        (
            json!({"type": "approve", "request_id": 1, "decision": "allow", "remmber": true}),
            "remmber",
        ),
        (
            json!({"type": "elicitation", "request_id": 1, "action": "decline", "contnet": {}}),
            "contnet",
        ),
        (
            json!({"type": "question_answer", "request_id": 1, "decision": "answer", "anwsers": {}}),
            "anwsers",
        ),
        (
            json!({"type": "hook_answer", "request_id": "hook-1", "answr": {}}),
            "answr",
        ),
        (
            json!({"type": "hook_event", "event": "Stop", "inptu": {}}),
            "inptu",
        ),
        (json!({"type": "tools", "fromat": "anthropic"}), "fromat"),
        (json!({"type": "reset_tools", "all": true}), "all"),
        (json!({"type": "shutdown", "now": true}), "now"),
        (json!({"type": "tasks", "all": true}), "all"),
        (json!({"type": "task_stop", "taskid": "shell-1"}), "taskid"),
        (json!({"type": "task_output", "task_id": 1}), "task_id"),
        (
            json!({"type": "add", "agent_id": "agent-1", "tool_use": call, "batch": "A"}),
            "batch",
        ),
        (
            json!({"type": "end", "agent_id": "agent-1", "force": true}),
            "force",
        ),
        (
            json!({"type": "subagent_result", "agent_id": "agent-1", "txt": "hi"}),
            "txt",
        ),
        // Fields of the wrong type.
        (
            json!({"type": "add", "tool_use": call, "batch": 7}),
            "batch",
        ),
        (
            json!({"type": "add", "tool_use": call, "timeout_ms": "5"}),
            "timeout_ms",
        ),
        (json!({"type": "add", "tool_use": "Sleep"}), "tool_use"),
        (json!({"type": "end", "batch": 1}), "batch"),
        (
            json!({"type": "message", "message": {}, "format": 3}),
            "format",
        ),
        // A message is an object or a list of items (objects), nothing else.
        (json!({"type": "message", "message": "hello"}), "message"),
        (json!({"type": "message", "message": [{}, 3]}), "message[1]"),
        (json!({"type": "interrupt", "kind": 1}), "kind"),
        (json!({"type": "cancel", "id": 5}), "id"),
        (json!({"type": "background", "call_id": ["x"]}), "call_id"),
        (
            json!({"type": "approve", "request_id": "1", "decision": "allow"}),
            "request_id",
        ),
        (
            json!({"type": "elicitation", "request_id": 1, "action": true}),
            "action",
        ),
        (
            json!({"type": "question_answer", "request_id": 1, "decision": "answer", "answers": []}),
            "answers",
        ),
        (
            json!({"type": "approve", "request_id": 1, "decision": "allow", "mode": 2}),
            "mode",
        ),
        (
            json!({"type": "hook_answer", "request_id": 1, "error": "x"}),
            "request_id",
        ),
        (
            json!({"type": "hook_event", "event": "Stop", "input": "stop"}),
            "input",
        ),
        (json!({"type": "tools", "format": ["anthropic"]}), "format"),
        (json!({"type": "tools", "changes": "yes"}), "changes"),
        (json!({"type": "end", "agent_id": 3}), "agent_id"),
        (
            json!({"type": "subagent_result", "agent_id": "a", "usage": {"input_tokens": "many"}}),
            "usage.input_tokens",
        ),
    ];
    for (line, field) in cases {
        refused(&mut s, line, field);
    }
    // None of those lines opened a message.
    s.send(json!({"type": "message", "message": {"role": "assistant", "content": [sleep_call("ok", 1)]}}));
    assert_eq!(s.next(), json!({"type": "batch_started", "batch": 1}));
    let done = s.until("done");
    assert_eq!(done.last().unwrap()["summary"]["calls"], 1);
    s.finish();
}

#[test]
fn cancel_stops_one_call_and_leaves_its_siblings_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(
        json!({"type": "message", "batch": "B", "message": {"role": "assistant", "content": [
            sleep_call("long", 60_000),
            sleep_call("short", 1500),
        ]}}),
    );
    assert_eq!(s.next()["type"], "batch_started");
    // Wait until the long call runs, then cancel it alone.
    loop {
        let l = s.any_next();
        if l["type"] == "call_started" && l["tool_use_id"] == "long" {
            break;
        }
    }
    s.send(json!({"type": "cancel", "id": "long"}));
    let lines = s.until("done");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:?}");
    assert_eq!(results[0]["outcome"]["kind"], "cancelled", "{}", results[0]);
    let text = results[0]["block"].to_string();
    assert!(text.contains("host cancelled this one call"), "{text}");
    assert_eq!(results[1]["outcome"]["kind"], "success", "{}", results[1]);
    let summary = &lines.last().unwrap()["summary"];
    assert!(summary["interrupted"].is_null(), "{summary}");
    assert!(summary["cancelled_by"].is_null(), "{summary}");
    // Cancelling a call no running batch holds is an error.
    s.send(json!({"type": "cancel", "id": "long"}));
    assert_eq!(s.next()["type"], "error");
    s.finish();
}

#[test]
fn a_host_deadline_stops_its_call_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "add", "tool_use": sleep_call("slow", 60_000), "timeout_ms": 300}));
    assert_eq!(s.next()["type"], "batch_started");
    s.send(json!({"type": "add", "tool_use": sleep_call("quick", 1000)}));
    s.send(json!({"type": "end"}));
    let lines = s.until("done");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:?}");
    assert_eq!(results[0]["outcome"]["kind"], "cancelled", "{}", results[0]);
    let text = results[0]["block"].to_string();
    assert!(text.contains("deadline of 300 ms"), "{text}");
    assert_eq!(results[1]["outcome"]["kind"], "success", "{}", results[1]);
    s.finish();
}
