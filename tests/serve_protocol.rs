//! The serve protocol's robustness points (issue 9): unusable lines never
//! end the session, interrupts name their batch, hosts name batches,
//! duplicate ids, a message while another is open, empty messages.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// `baton serve` in `dir`, every call allowed.
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

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"role": "assistant", "content": calls})
}

#[test]
fn an_invalid_utf8_line_is_an_error_with_its_number_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.raw(b"{\"type\":\"add\",\"id\":\"a\",\"name\":\"Sleep\",\"input\":{\"duration_ms\":1}}\n");
    s.raw(b"{\"type\":\"add\",\"id\":\"\xff\xfe\"}\n");
    s.raw(b"not json\n");
    s.send(json!({"type": "add", "id": "b", "name": "Sleep", "input": {"duration_ms": 1}}));
    s.send(json!({"type": "end"}));
    let lines = s.until("done");
    let errors: Vec<&Value> = lines.iter().filter(|l| l["type"] == "error").collect();
    assert_eq!(errors.len(), 2, "{lines:?}");
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[0]["message"].as_str().unwrap().contains("UTF-8"));
    assert_eq!(errors[1]["line"], 3);
    let done = lines.last().unwrap();
    assert_eq!(done["message"]["content"].as_array().unwrap().len(), 2);
    s.finish();
}

#[test]
fn interrupts_name_their_batch_and_hosts_name_batches() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    // Two messages at once, named by the host.
    s.send(json!({"type": "message", "batch": "first",
        "message": message(vec![tool_use("s1", "Sleep", json!({"duration_ms": 20000}))])}));
    assert_eq!(s.next(), json!({"type": "batch_started", "batch": "first"}));
    s.send(json!({"type": "message", "batch": "second",
        "message": message(vec![tool_use("s2", "Sleep", json!({"duration_ms": 20000}))])}));
    assert_eq!(
        s.next(),
        json!({"type": "batch_started", "batch": "second"})
    );
    // A running name cannot be reused; unknown batches are errors.
    s.send(json!({"type": "message", "batch": "first", "message": message(vec![])}));
    let e = s.next();
    assert_eq!(e["type"], "error", "{e}");
    s.send(json!({"type": "interrupt", "batch": "nope"}));
    let e = s.next();
    assert_eq!(e["type"], "error", "{e}");
    assert_eq!(e["line"], 4);
    s.send(json!({"type": "interrupt", "batch": 99}));
    assert_eq!(s.next()["type"], "error");
    // Interrupting the older batch by name stops it, not the latest.
    s.send(json!({"type": "interrupt", "batch": "first"}));
    let lines = s.until("done");
    // (Lifecycle lines of the other batch may still arrive meanwhile.)
    assert!(
        lines
            .iter()
            .filter(|l| !l["type"].as_str().unwrap().starts_with("call_"))
            .all(|l| l["batch"] == "first"),
        "{lines:?}"
    );
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["outcome"]["kind"], "cancelled");
    // A finished batch cannot be interrupted; the other still can.
    s.send(json!({"type": "interrupt", "batch": "first"}));
    assert_eq!(s.next()["type"], "error");
    s.send(json!({"type": "interrupt"}));
    let lines = s.until("done");
    assert_eq!(lines.last().unwrap()["batch"], "second");
    // Now the latest has finished: a bare interrupt says so.
    s.send(json!({"type": "interrupt"}));
    assert_eq!(s.next()["type"], "error");
    s.finish();
}

#[test]
fn a_repeated_tool_use_id_gets_an_error_result_and_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    let marker = dir.path().join("ran-twice");
    let cmd = format!("echo x >> {}", marker.display());
    s.send(json!({"type": "message", "message": message(vec![
        tool_use("same", "Bash", json!({"command": cmd})),
        tool_use("same", "Bash", json!({"command": cmd})),
    ])}));
    let lines = s.until("done");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["outcome"]["kind"], "success", "{}", results[0]);
    assert_eq!(results[1]["outcome"]["kind"], "invalid_input");
    assert!(results[1]["block"].to_string().contains("already used"));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "x\n");
    // Lifecycle lines: each call queued, started and finished, in its batch.
    for kind in ["call_queued", "call_started", "call_finished"] {
        let n = lines
            .iter()
            .filter(|l| l["type"] == kind && l["batch"] == 1)
            .count();
        assert_eq!(n, 2, "{kind}: {lines:?}");
    }
    let finished: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "call_finished")
        .collect();
    assert_eq!(finished[1]["outcome"]["kind"], "invalid_input");
    assert!(finished[0]["duration_ms"].as_f64().unwrap() >= 0.0);
    s.finish();
}

#[test]
fn a_message_while_another_is_open_is_an_error_and_empty_messages_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "add", "id": "a", "name": "Sleep", "input": {"duration_ms": 1}}));
    assert_eq!(s.next()["type"], "batch_started");
    s.send(json!({"type": "message", "message": message(vec![
        tool_use("b", "Sleep", json!({"duration_ms": 1}))])}));
    // Call a's lifecycle lines may come first: they are sent as they happen.
    let e = s.until("error").pop().unwrap();
    assert!(e["message"].as_str().unwrap().contains("still open"), "{e}");
    // The open message is untouched: it still takes calls.
    s.send(json!({"type": "add", "id": "c", "name": "Sleep", "input": {"duration_ms": 1}}));
    s.send(json!({"type": "end"}));
    let lines = s.until("done");
    let done = lines.last().unwrap();
    assert_eq!(done["message"]["content"].as_array().unwrap().len(), 2);
    // An empty message: done, with no user message to send, and why.
    s.send(json!({"type": "message", "message": message(vec![])}));
    let lines = s.until("done");
    let done = lines.last().unwrap();
    assert!(done["message"].is_null(), "{done}");
    assert!(done["reason"].as_str().unwrap().contains("no tool calls"));
    s.finish();
}
