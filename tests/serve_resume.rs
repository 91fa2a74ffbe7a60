//! `baton serve --resume ID` after the serve process was killed with
//! SIGKILL: files read, the remembered rule, the loaded deferred tool and
//! the working directory come back; the background task is reported lost
//! and none of its processes is left. A corrupt or newer state file is a
//! clear error (exit 2), not a panic.

use std::path::Path;
use std::time::Duration;

use baton_test_support::procs::{self, sleeping};
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// How long a process may take to start or to go.
const PATIENCE: Duration = Duration::from_secs(20);

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// Every `result` line up to `done`; fails on a permission request.
fn results_unasked(s: &Serve) -> Vec<Value> {
    let lines = s.until("done");
    assert!(
        !lines.iter().any(|l| l["type"] == "permission_request"),
        "asked: {lines:?}"
    );
    lines
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect()
}

fn text(result: &Value) -> String {
    result["block"]["content"].to_string()
}

fn start(workspace: &Path, state: &Path, settings: &Path, extra: &[&str]) -> Serve {
    let mut args = vec![
        "--state-dir",
        state.to_str().unwrap(),
        "--settings",
        settings.to_str().unwrap(),
        "--tool-format",
        "openai-chat",
    ];
    if !workspace.as_os_str().is_empty() {
        args.extend(["--cwd", workspace.to_str().unwrap()]);
    }
    args.extend(extra);
    Serve::start(BATON, &args)
}

#[test]
fn a_killed_session_resumes_with_its_state_and_reports_lost_tasks() {
    let work = tempfile::tempdir().unwrap();
    let workspace = work.path().canonicalize().unwrap();
    std::fs::create_dir(workspace.join("sub")).unwrap();
    std::fs::write(workspace.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(workspace.join("b.txt"), "beta\n").unwrap();
    let states = tempfile::tempdir().unwrap();
    let state = states.path().join("sess-1");
    let settings = states.path().join("settings.json");
    // Edits are allowed by the settings: the test is about the read check.
    std::fs::write(&settings, r#"{"permissions": {"allow": ["Edit"]}}"#).unwrap();
    let marker = procs::marker("1000.");

    let mut s = start(&workspace, &state, &settings, &[]);
    // Two files read, the shell moved into `sub`.
    s.send(message(vec![
        call("r1", "Read", json!({"file_path": workspace.join("a.txt")})),
        call("r2", "Read", json!({"file_path": workspace.join("b.txt")})),
        call("c1", "Bash", json!({"command": "cd sub"})),
    ]));
    let results = results_unasked(&s);
    assert!(
        results.iter().all(|r| r["outcome"]["kind"] == "success"),
        "{results:?}"
    );
    // A command that asks, approved with "allow and remember".
    s.send(message(vec![call(
        "t1",
        "Bash",
        json!({"command": format!("touch {}", workspace.join("one.txt").display())}),
    )]));
    let mut suggestion = Value::Null;
    let lines = s.answering(|request| {
        suggestion = request["suggestion"].clone();
        json!({"decision": "allow", "remember": true})
    });
    assert!(suggestion.is_string(), "no rule to remember: {lines:?}");
    // A deferred tool loaded, a background task started.
    s.send(message(vec![call(
        "s1",
        "ToolSearch",
        json!({"query": "select:WebFetch"}),
    )]));
    assert_eq!(s.next_of("done")["loaded_tools"], json!(["WebFetch"]));
    s.send(message(vec![call(
        "g1",
        "Bash",
        json!({"command": format!("sleep {marker}"), "run_in_background": true}),
    )]));
    let results = results_unasked(&s);
    assert_eq!(results[0]["outcome"]["kind"], "success", "{results:?}");
    assert!(procs::eventually(PATIENCE, || sleeping(&marker) == 1));
    let saved = std::fs::read_to_string(state.join("session.json")).unwrap();
    assert!(saved.contains("\"running\""), "{saved}");

    // The process dies without a word; its shell's processes with it.
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    assert!(
        procs::eventually(PATIENCE, || sleeping(&marker) == 0),
        "the task outlived serve"
    );
    // Someone changes b.txt while no session runs.
    std::fs::write(workspace.join("b.txt"), "changed\n").unwrap();

    let mut s = start(Path::new(""), &state, &settings, &["--resume", "sess-1"]);
    let resumed = s.next();
    assert_eq!(resumed["type"], "resumed", "{resumed}");
    assert_eq!(resumed["session_id"], "sess-1");
    assert_eq!(resumed["cwd"], json!(workspace.join("sub")));
    let lost = resumed["lost_tasks"].as_array().unwrap();
    assert_eq!(lost.len(), 1, "{resumed}");
    assert_eq!(lost[0]["status"], "lost");
    assert!(lost[0]["description"].as_str().unwrap().contains(&marker));

    // Edit works without reading again; the changed file is caught.
    s.send(message(vec![
        call(
            "e1",
            "Edit",
            json!({"file_path": workspace.join("a.txt"), "old_string": "alpha", "new_string": "gamma"}),
        ),
        call(
            "e2",
            "Edit",
            json!({"file_path": workspace.join("b.txt"), "old_string": "changed", "new_string": "x"}),
        ),
    ]));
    let results = results_unasked(&s);
    assert_eq!(results[0]["outcome"]["kind"], "success", "{results:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("a.txt")).unwrap(),
        "gamma\n"
    );
    assert_ne!(results[1]["outcome"]["kind"], "success");
    assert!(text(&results[1]).contains("changed since"), "{results:?}");
    // The remembered rule (the same command) allows without asking; the
    // shell is still in sub.
    std::fs::remove_file(workspace.join("one.txt")).unwrap();
    s.send(message(vec![
        call(
            "t2",
            "Bash",
            json!({"command": format!("touch {}", workspace.join("one.txt").display())}),
        ),
        call("p1", "Bash", json!({"command": "pwd"})),
    ]));
    let results = results_unasked(&s);
    assert_eq!(results[0]["outcome"]["kind"], "success", "{results:?}");
    assert!(workspace.join("one.txt").exists());
    assert!(
        text(&results[1]).contains(&format!("{}", workspace.join("sub").display())),
        "{results:?}"
    );
    // The tool is still loaded.
    s.send(json!({"type": "tools"}));
    assert_eq!(s.next_of("tools")["loaded"], json!(["WebFetch"]));
    // A new task does not take the lost one's id.
    s.send(message(vec![call(
        "g2",
        "Bash",
        json!({"command": "true", "run_in_background": true}),
    )]));
    let results = results_unasked(&s);
    let id = lost[0]["id"].as_str().unwrap();
    assert!(
        !text(&results[0]).contains(&format!("{id} ")),
        "{results:?}"
    );
    s.finish();
    assert_eq!(sleeping(&marker), 0);

    // The state now keeps the lost task as lost.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("session.json")).unwrap())
            .unwrap();
    let statuses: Vec<&Value> = saved["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["id"] == json!(id))
        .map(|t| &t["status"])
        .collect();
    assert_eq!(statuses, vec![&json!("lost")], "{saved}");
}

fn resume_fails(state: &Path, id: &str) -> String {
    let out = crate::support::baton()
        .args(["serve", "--resume", id, "--state-dir"])
        .arg(state)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_corrupt_missing_or_newer_state_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s2");
    assert!(resume_fails(&state, "s2").contains("no saved session state"));
    std::fs::create_dir(&state).unwrap();
    std::fs::write(state.join("session.json"), "{\"version\": 1, \"sess").unwrap();
    assert!(resume_fails(&state, "s2").contains("corrupt"));
    std::fs::write(state.join("session.json"), "{\"version\": 7}").unwrap();
    assert!(resume_fails(&state, "s2").contains("version 7"));
    // An id that would leave the sessions directory.
    assert!(resume_fails(&state, "../x").contains("session id"));
}
