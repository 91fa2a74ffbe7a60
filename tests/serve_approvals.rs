//! Richer approvals through real `baton serve` processes (issue 9): allow
//! with an updated input (checked again: schema, hooks, deny rules), allow
//! and remember, deny with a reason, deny and interrupt, the withdrawn
//! request (`permission_cancelled`), the parent call of requests from
//! nested batches, and the one-line summary.

use std::path::Path;

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// Settings: `rm` is denied; a PreToolUse hook blocks any command that
/// mentions `forbidden`. Everything else that changes things asks.
fn settings(dir: &Path) -> std::path::PathBuf {
    let hook = dir.join("hook.sh");
    std::fs::write(
        &hook,
        "if grep -q forbidden; then echo 'blocked by the guard hook' >&2; exit 2; fi\nexit 0\n",
    )
    .unwrap();
    let path = dir.join("settings.json");
    let settings = json!({
        "permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("bash {}", hook.display())}
        ]}]}
    });
    std::fs::write(&path, settings.to_string()).unwrap();
    path
}

/// `baton serve` in `dir` with those settings.
fn start(dir: &Path) -> Serve {
    let settings = settings(dir);
    Serve::start(
        BATON,
        &[
            "--cwd",
            dir.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
    )
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

fn text(result: &Value) -> String {
    result["block"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_updated_input_runs_instead_and_is_checked_like_the_models() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![
        bash("ok", "touch model.txt"),
        bash("schema", "touch a.txt"),
        bash("rule", "touch b.txt"),
        bash("hook", "touch c.txt"),
    ]));
    let answers = [
        json!({"command": "touch host.txt"}),
        json!({"command": 5}),
        json!({"command": "rm -f keep.txt"}),
        json!({"command": "touch forbidden.txt"}),
    ];
    let mut next = answers.into_iter();
    let lines =
        s.answering(|_| json!({"decision": "allow", "updated_input": next.next().unwrap()}));
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 4, "{lines:?}");
    assert_eq!(results[0]["outcome"]["kind"], "success", "{}", results[0]);
    assert_eq!(
        results[1]["outcome"]["kind"], "invalid_input",
        "{}",
        results[1]
    );
    assert!(text(results[1]).contains("schema"), "{}", results[1]);
    assert_eq!(results[2]["outcome"]["kind"], "denied", "{}", results[2]);
    assert!(text(results[2]).contains("Bash(rm:*)"), "{}", results[2]);
    assert_eq!(results[3]["outcome"]["kind"], "denied", "{}", results[3]);
    assert!(text(results[3]).contains("guard hook"), "{}", results[3]);
    // What ran is the host's input, and only where it passed.
    assert!(dir.path().join("host.txt").exists());
    assert!(dir.path().join("keep.txt").exists(), "the deny rule held");
    for never in ["model.txt", "a.txt", "b.txt", "c.txt", "forbidden.txt"] {
        assert!(!dir.path().join(never).exists(), "{never} was created");
    }
    s.finish();
}

#[test]
fn allow_and_remember_stops_later_questions_and_deny_gives_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![bash("t1", "touch a.txt")]));
    let request = s.next_of("permission_request");
    assert_eq!(request["summary"], "Bash(touch a.txt)");
    assert_eq!(request["suggestion"], "Bash(touch a.txt)");
    assert!(request.get("parent_tool_use_id").is_none(), "{request}");
    s.send(
        json!({"type": "approve", "request_id": request["request_id"],
        "decision": "allow", "remember": true}),
    );
    assert_eq!(s.next_of("result")["outcome"]["kind"], "success");
    s.next_of("done");
    // The same call in a later message runs without a question; another
    // command still asks, and a denial's reason reaches the model.
    s.send(message(vec![
        bash("t2", "touch a.txt"),
        bash("t3", "touch b.txt"),
    ]));
    let mut asked = Vec::new();
    let lines = s.answering(|request| {
        asked.push(request["tool_use_id"].clone());
        json!({"decision": "deny", "reason": "not b, use c"})
    });
    assert_eq!(asked, vec![json!("t3")], "only the new command asks");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results[0]["outcome"]["kind"], "success");
    assert_eq!(results[1]["outcome"]["kind"], "denied");
    assert!(text(results[1]).contains("not b, use c"), "{}", results[1]);
    assert!(!dir.path().join("b.txt").exists());
    // A malformed answer is an error and the request stays pending.
    s.send(message(vec![bash("t4", "touch d.txt")]));
    let request = s.next_of("permission_request");
    s.send(
        json!({"type": "approve", "request_id": request["request_id"],
        "decision": "allow", "interrupt": true}),
    );
    assert!(s.next_of("error")["message"]
        .as_str()
        .unwrap()
        .contains("interrupt"));
    s.send(json!({"type": "approve", "request_id": request["request_id"], "decision": "allow"}));
    assert_eq!(s.next_of("result")["outcome"]["kind"], "success");
    s.next_of("done");
    s.finish();
}

#[test]
fn deny_and_interrupt_stops_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    // Sleep and the Read outside the workspace (which asks) run side by
    // side; the Bash call after them must run alone, so it waits.
    s.send(message(vec![
        json!({"type": "tool_use", "id": "sleep", "name": "Sleep", "input": {"duration_ms": 60000}}),
        json!({"type": "tool_use", "id": "ask", "name": "Read", "input": {"file_path": "/etc/hostname"}}),
        bash("later", "touch b.txt"),
    ]));
    let lines = s.answering(|request| {
        assert_eq!(request["tool_use_id"], "ask");
        assert_eq!(request["summary"], "Read(/etc/hostname)");
        json!({"decision": "deny", "interrupt": true, "reason": "stop everything"})
    });
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 3, "{lines:?}");
    assert_eq!(
        results[0]["outcome"],
        json!({"kind": "cancelled", "started": true})
    );
    assert_eq!(results[1]["outcome"]["kind"], "denied");
    assert!(text(results[1]).contains("stop everything"));
    assert_eq!(
        results[2]["outcome"],
        json!({"kind": "cancelled", "started": false})
    );
    assert_eq!(lines.last().unwrap()["summary"]["interrupted"], "cancel");
    assert!(!dir.path().join("b.txt").exists());
    s.finish();
}

#[test]
fn an_interrupt_withdraws_a_pending_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![bash("t1", "touch a.txt")]));
    let request = s.next_of("permission_request");
    s.send(json!({"type": "interrupt", "kind": "cancel"}));
    let withdrawn = s.next_of("permission_cancelled");
    assert_eq!(withdrawn["request_id"], request["request_id"]);
    assert_eq!(withdrawn["tool_use_id"], "t1");
    assert_eq!(withdrawn["batch"], 1);
    let result = s.next_of("result");
    assert_eq!(
        result["outcome"],
        json!({"kind": "cancelled", "started": false})
    );
    s.next_of("done");
    // Answering a withdrawn request is an error; nothing runs.
    s.send(json!({"type": "approve", "request_id": request["request_id"], "decision": "allow"}));
    assert!(s.next_of("error")["message"]
        .as_str()
        .unwrap()
        .contains("no pending"));
    assert!(!dir.path().join("a.txt").exists());
    s.finish();
}

#[test]
fn requests_from_a_subagent_name_the_agent_call_and_summaries_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![
        json!({"type": "tool_use", "id": "A", "name": "Agent",
        "input": {"description": "make files", "prompt": "touch them"}}),
    ]));
    let request = s.next_of("subagent_request");
    let agent = request["agent_id"].clone();
    let long = format!("echo {}\ntouch sub.txt", "y".repeat(5000));
    s.send(json!({"type": "add", "agent_id": agent, "tool_use": bash("s1", &long)}));
    s.send(json!({"type": "end", "agent_id": agent}));
    let asked = s.next_of("permission_request");
    assert_eq!(asked["parent_tool_use_id"], "A", "{asked}");
    assert_eq!(asked["agent_chain"], json!(["A"]));
    let summary = asked["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("Bash(echo yyy") && summary.ends_with("…)"),
        "{summary}"
    );
    assert!(
        summary.chars().count() <= 160 && !summary.contains('\n'),
        "{summary}"
    );
    s.send(json!({"type": "approve", "request_id": asked["request_id"], "decision": "allow"}));
    let done = s.next_of("done");
    assert_eq!(done["agent_id"], agent, "{done}");
    s.send(json!({"type": "subagent_result", "agent_id": agent, "text": "made"}));
    let result = s.next_of("result");
    assert_eq!(result["tool_use_id"], "A");
    assert_eq!(result["outcome"]["kind"], "success", "{result}");
    s.next_of("done");
    assert!(dir.path().join("sub.txt").exists());
    s.finish();
}
