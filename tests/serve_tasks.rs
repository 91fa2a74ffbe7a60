//! The serve task lines over real shells: `tasks_changed` notifications
//! with the whole list, `tasks`, `task_output` (the last 8 KiB, the total,
//! the truncated flag), `task_stop` (processes gone), and bad lines.

use std::time::Duration;

use baton_test_support::procs::{self, sleeping};
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// How long a process may take to start or to go.
const PATIENCE: Duration = Duration::from_secs(20);

fn message(batch: &str, calls: Vec<Value>) -> Value {
    json!({"type": "message", "batch": batch, "message": {"role": "assistant", "content": calls}})
}

fn background(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash",
           "input": {"command": command, "run_in_background": true}})
}

/// Sends `line` and returns the answer of `kind` (or the error line).
fn ask(s: &mut Serve, line: Value, kind: &str) -> Value {
    s.send(line);
    loop {
        let l = s.next();
        if l["type"] == kind || l["type"] == "error" {
            return l;
        }
    }
}

#[test]
fn the_host_lists_reads_and_stops_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let marker = procs::marker("1000.");
    s.send(message(
        "A",
        vec![
            background("b1", &format!("echo hello-task; sleep {marker}")),
            background("b2", "seq 1 20000"),
        ],
    ));
    let lines = s.until("done");
    // A level signal: the list comes whole with each change.
    let changed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "notification" && l["kind"] == "tasks_changed")
        .collect();
    assert!(!changed.is_empty(), "{lines:?}");
    assert!(procs::eventually(PATIENCE, || sleeping(&marker) == 1));

    // The list, once seq has ended.
    let mut list = Value::Null;
    assert!(
        procs::eventually(PATIENCE, || {
            list = ask(&mut s, json!({"type": "tasks"}), "tasks");
            list["tasks"].as_array().is_some_and(|t| {
                t.iter()
                    .any(|t| t["description"] == "seq 1 20000" && t["status"] == "completed")
            })
        }),
        "{list}"
    );
    let tasks = list["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{list}");
    // The two calls start together, so either may be `shell-1`.
    let id_of = |described: &str| {
        tasks
            .iter()
            .find(|t| {
                t["description"]
                    .as_str()
                    .is_some_and(|d| d.contains(described))
            })
            .and_then(|t| t["id"].as_str())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no task `{described}`: {list}"))
    };
    let (sleeper, seq) = (id_of(&marker), id_of("seq 1 20000"));
    let first = tasks.iter().find(|t| t["id"] == sleeper.as_str()).unwrap();
    assert_eq!(
        (first["kind"].as_str(), first["status"].as_str()),
        (Some("shell"), Some("running"))
    );
    assert!(first["output_file"]
        .as_str()
        .is_some_and(|f| f.ends_with(&format!("{sleeper}.log"))));

    // Output tails.
    let mut out = Value::Null;
    assert!(
        procs::eventually(PATIENCE, || {
            out = ask(
                &mut s,
                json!({"type": "task_output", "task_id": sleeper}),
                "task_output",
            );
            out["tail"]
                .as_str()
                .is_some_and(|t| t.contains("hello-task"))
        }),
        "{out}"
    );
    assert_eq!(out["truncated"], false);
    let big = ask(
        &mut s,
        json!({"type": "task_output", "task_id": seq}),
        "task_output",
    );
    let tail = big["tail"].as_str().unwrap();
    assert!(
        tail.len() <= 8192 && tail.ends_with("19999\n20000\n"),
        "{big}"
    );
    assert_eq!(big["truncated"], true);
    let total: u64 = (1..=20000u64).map(|n| n.to_string().len() as u64 + 1).sum();
    assert_eq!(big["total_bytes"], total);

    // Stopping: the answer comes once it has ended, with its processes.
    let stopped = ask(
        &mut s,
        json!({"type": "task_stop", "task_id": sleeper}),
        "task_stopped",
    );
    assert_eq!(stopped["task"]["status"], "stopped", "{stopped}");
    assert_eq!(sleeping(&marker), 0);
    // And the list says so, in a notification too.
    let note = s.next_of("notification");
    assert!(note["kind"] == "tasks_changed" || note["kind"] == "background_task_finished");

    // Bad lines are errors, naming what is known.
    let err = ask(
        &mut s,
        json!({"type": "task_output", "task_id": "nope"}),
        "task_output",
    );
    assert_eq!(err["type"], "error");
    assert!(
        err["message"].as_str().unwrap().contains("shell-1"),
        "{err}"
    );
    let err = ask(
        &mut s,
        json!({"type": "task_stop", "taskid": "shell-1"}),
        "task_stopped",
    );
    assert_eq!(err["type"], "error", "{err}");
    s.finish();
}
