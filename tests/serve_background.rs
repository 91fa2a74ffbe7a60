//! The serve `background` line: a running Bash call, named by its id or by
//! its batch, answers at once and its command goes on until the session
//! ends; lines that reach no running shell are errors.

use std::time::Duration;

use baton_test_support::procs::{self, sleeping};
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// How long a process may take to start or to go.
const PATIENCE: Duration = Duration::from_secs(20);

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
fn bash(id: &str, command: String) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

fn text(result: &Value) -> String {
    result["block"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_host_sends_calls_to_the_background_by_id_and_by_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    let (one, two) = (procs::marker("1000."), procs::marker("1000."));

    // By call id (no batch named: it is found among the running ones).
    s.send(
        json!({"type": "message", "batch": "A", "message": {"role": "assistant",
        "content": [bash("b1", format!("echo early; sleep {one}"))]}}),
    );
    assert!(
        procs::eventually(PATIENCE, || sleeping(&one) == 1),
        "the command never started"
    );
    s.send(json!({"type": "background", "call_id": "b1"}));
    let lines = s.until("done");
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["tool_use_id"], "b1");
    assert_eq!(result["outcome"]["kind"], "success", "{result}");
    let t = text(result);
    assert!(
        t.contains("manually backgrounded by user with ID: shell-1"),
        "{t}"
    );
    assert_eq!(sleeping(&one), 1, "the command goes on after its result");

    // Lines that reach no running shell are errors; the session goes on.
    s.send(json!({"type": "background", "call_id": "b1"}));
    assert_eq!(past_notes(&s)["type"], "error");
    s.send(json!({"type": "background", "callid": "b1"}));
    let e = past_notes(&s);
    assert_eq!(e["type"], "error");
    assert!(e["message"].as_str().unwrap().contains("callid"), "{e}");

    // By batch: all its running shell calls, results in order.
    s.send(
        json!({"type": "message", "batch": "B", "message": {"role": "assistant",
        "content": [bash("c1", format!("sleep {two}")), bash("c2", format!("sleep {two}"))]}}),
    );
    assert!(
        procs::eventually(PATIENCE, || sleeping(&two) == 2),
        "the commands never started"
    );
    s.send(json!({"type": "background", "batch": "B"}));
    let lines = s.until("done");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:?}");
    assert_eq!(results[0]["tool_use_id"], "c1");
    assert_eq!(results[1]["tool_use_id"], "c2");
    for r in &results {
        assert!(text(r).contains("manually backgrounded"), "{r}");
    }
    assert_eq!(sleeping(&two), 2);

    // The session's end ends them all.
    s.finish();
    assert!(
        procs::eventually(PATIENCE, || sleeping(&one) + sleeping(&two) == 0),
        "processes left behind"
    );
}

/// The next line that is not a notification: task lists (`tasks_changed`)
/// go out whenever a task starts or ends, between any two answers.
fn past_notes(s: &Serve) -> Value {
    loop {
        let line = s.next();
        if line["type"] != "notification" {
            return line;
        }
    }
}
