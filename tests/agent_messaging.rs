//! `baton agent` against a mock model on 127.0.0.1: SendMessage to a
//! running and to a finished subagent, ListAgents, background agents in
//! the task list (TaskStop, `<task-notification>`), and a synchronous
//! subagent's background shell ending with its answer (real processes,
//! counted).
//!
//! The mock routes each request by the prompt that opened its
//! conversation (`MAIN:`, `SUB:`, `BG:`…), so conversations may
//! interleave; a resumed subagent keeps its first prompt, so its requests
//! are routed to it too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use baton_test_support::{model_server, procs, scenario};
use scenario::{turn, Scenario};
use serde_json::{json, Value};

type Script = HashMap<String, Vec<Scenario>>;

#[derive(Clone, Default)]
struct Mock {
    script: Arc<Mutex<Script>>,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

/// The conversation a request belongs to: its first prompt up to `:`.
fn conversation_of(request: &Value) -> String {
    let first = request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .cloned()
        .unwrap_or(Value::Null);
    let text = match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .last()
            .and_then(|p| p["text"].as_str())
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    };
    text.split(':').next().unwrap_or("").to_string()
}

async fn handle(State(mock): State<Mock>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let who = conversation_of(&request);
    mock.requests.lock().unwrap().push((who.clone(), request));
    let next = {
        let mut script = mock.script.lock().unwrap();
        let turns = script.entry(who.clone()).or_default();
        (!turns.is_empty()).then(|| turns.remove(0))
    };
    match next {
        Some(s) => (
            [("content-type", "text/event-stream")],
            scenario::sse(&scenario::anthropic(&s, &[30000])),
        )
            .into_response(),
        None => (
            axum::http::StatusCode::BAD_REQUEST,
            format!("the script of `{who}` has no more turns"),
        )
            .into_response(),
    }
}

/// Runs `baton agent` on `prompt` with `script`; the requests by
/// conversation, and stdout.
fn run(script: Script, prompt: &str) -> (HashMap<String, Vec<Value>>, String) {
    let mock = Mock {
        script: Arc::new(Mutex::new(script)),
        requests: Arc::default(),
    };
    let base = model_server::serve_post(handle, mock.clone());
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::baton()
        .args(["agent", "--provider", "anthropic", "--base-url"])
        .arg(&base)
        .args([
            "--events",
            "--permission-mode",
            "bypassPermissions",
            "--cwd",
        ])
        .arg(dir.path())
        .arg(prompt)
        .env("HOME", dir.path())
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut by = HashMap::<String, Vec<Value>>::new();
    for (who, r) in mock.requests.lock().unwrap().iter() {
        by.entry(who.clone()).or_default().push(r.clone());
    }
    (by, stdout)
}

/// The `tool_result` text for `id` in a request (empty when absent).
fn result_of(request: &Value, id: &str) -> String {
    for m in request["messages"].as_array().into_iter().flatten() {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" && b["tool_use_id"] == id {
                return b["content"].to_string();
            }
        }
    }
    String::new()
}

/// A `pgrep -f` pattern for `sleep <marker>` that the shell running
/// pgrep, whose command line holds the pattern, does not match itself.
fn unmatched_by_itself(marker: &str) -> String {
    format!("'sleep [{}]{}'", &marker[..1], &marker[1..])
}

#[test]
fn a_finished_subagent_is_resumed_by_name_and_its_shell_ended_with_it() {
    let sleep = procs::marker("317.");
    let mut s = Script::new();
    s.insert(
        "MAIN".into(),
        vec![
            turn(
                "Delegating.",
                &[(
                    "a1",
                    "Agent",
                    json!({"description": "start a watcher", "prompt": "SUB: start it", "name": "worker"}),
                )],
            ),
            // The subagent has answered: its background shell must be gone
            // now, not only when the session ends.
            turn(
                "Checking and following up.",
                &[
                    (
                        "p1",
                        "Bash",
                        json!({"command": format!("pgrep -fc {}; true", unmatched_by_itself(&sleep))}),
                    ),
                    (
                        "m1",
                        "SendMessage",
                        json!({"to": "worker", "message": "now report the count", "summary": "ask for report"}),
                    ),
                    ("z1", "Sleep", json!({"duration_ms": 4000})),
                ],
            ),
            turn(
                "Listing.",
                &[
                    ("l1", "ListAgents", json!({})),
                    ("m2", "SendMessage", json!({"to": "nobody", "message": "hi"})),
                ],
            ),
            turn("All done.", &[]),
        ],
    );
    s.insert(
        "SUB".into(),
        vec![
            turn(
                "Starting.",
                &[(
                    "b1",
                    "Bash",
                    json!({"command": format!("sleep {sleep}"), "run_in_background": true}),
                )],
            ),
            turn("started-the-watcher", &[]),
            // The continuation.
            turn("report-after-resume", &[]),
        ],
    );
    let (by, stdout) = run(s, "MAIN: do it");
    let main = &by["MAIN"];
    let sub = &by["SUB"];
    assert_eq!((main.len(), sub.len()), (4, 3), "{stdout}");

    let agent = result_of(&main[1], "a1");
    assert!(agent.contains("started-the-watcher"), "{agent}");
    let count = result_of(&main[2], "p1");
    assert!(
        count.contains("\"0"),
        "the subagent's shell outlived it: {count}"
    );
    let sent = result_of(&main[2], "m1");
    assert!(sent.contains("resumed in the background"), "{sent}");

    // The continuation: the old transcript, then the message.
    let resumed = sub[2]["messages"].to_string();
    for part in [
        "SUB: start it",
        "started-the-watcher",
        "now report the count",
    ] {
        assert!(resumed.contains(part), "{part} missing: {resumed}");
    }
    assert!(resumed.contains("message-from-agent"), "{resumed}");

    // Its end reached the main agent as a task notification.
    let later = format!("{}{}", main[2], main[3]);
    assert!(later.contains("<task-id>agent-1</task-id>"), "{later}");
    assert!(later.contains("<status>completed</status>"), "{later}");

    let listing = result_of(&main[3], "l1");
    assert!(
        listing.contains("agent-1 \\\"worker\\\" (general-purpose"),
        "{listing}"
    );
    let unknown = result_of(&main[3], "m2");
    assert!(unknown.contains("No agent `nobody`"), "{unknown}");
    assert!(unknown.contains("worker (agent-1"), "{unknown}");
    assert_eq!(procs::running(&sleep), 0);
}

#[test]
fn a_running_background_agent_reads_a_message_and_is_a_task() {
    let mut s = Script::new();
    s.insert(
        "MAIN".into(),
        vec![
            turn(
                "Launching.",
                &[(
                    "a1",
                    "Agent",
                    json!({"description": "slow helper", "prompt": "BG: work slowly", "name": "helper", "run_in_background": true}),
                )],
            ),
            turn(
                "Telling it more.",
                &[
                    (
                        "m1",
                        "SendMessage",
                        json!({"to": "agent-1", "message": "also-check-the-readme"}),
                    ),
                    ("z1", "Sleep", json!({"duration_ms": 6000})),
                ],
            ),
            turn("Done.", &[]),
        ],
    );
    s.insert(
        "BG".into(),
        vec![
            turn(
                "Thinking a while.",
                &[("w1", "Bash", json!({"command": "sleep 2"}))],
            ),
            turn("bg-finished", &[]),
        ],
    );
    let (by, stdout) = run(s, "MAIN: go");
    let (main, bg) = (&by["MAIN"], &by["BG"]);
    assert_eq!((main.len(), bg.len()), (3, 2), "{stdout}");
    let launched = result_of(&main[1], "a1");
    assert!(launched.contains("agentId: agent-1"), "{launched}");
    let queued = result_of(&main[2], "m1");
    assert!(queued.contains("queued"), "{queued}");
    // Its second turn carries the message after its tool result.
    let second = bg[1]["messages"].to_string();
    assert!(second.contains("also-check-the-readme"), "{second}");
    assert!(main[2].to_string().contains("<task-id>agent-1</task-id>"));
}

#[test]
fn task_stop_ends_a_background_agent_and_its_processes() {
    let sleep = procs::marker("318.");
    let mut s = Script::new();
    s.insert(
        "MAIN".into(),
        vec![
            turn(
                "Launching.",
                &[(
                    "a1",
                    "Agent",
                    json!({"description": "long runner", "prompt": "BG: run long", "run_in_background": true}),
                )],
            ),
            turn("Waiting.", &[("z1", "Sleep", json!({"duration_ms": 2500}))]),
            turn(
                "Stopping it.",
                &[("s1", "TaskStop", json!({"task_id": "agent-1"}))],
            ),
            turn(
                "Counting.",
                &[(
                    "p1",
                    "Bash",
                    json!({"command": format!("pgrep -fc {}; true", unmatched_by_itself(&sleep))}),
                )],
            ),
            turn("Done.", &[]),
        ],
    );
    s.insert(
        "BG".into(),
        vec![turn(
            "Running.",
            &[(
                "b1",
                "Bash",
                json!({"command": format!("sleep {sleep}"), "timeout": 600000}),
            )],
        )],
    );
    let (by, stdout) = run(s, "MAIN: go");
    let main = &by["MAIN"];
    assert_eq!(main.len(), 5, "{stdout}");
    let stopped = result_of(&main[3], "s1");
    assert!(stopped.contains("agent-1"), "{stopped}");
    assert!(stopped.contains("stopped"), "{stopped}");
    let count = result_of(&main[4], "p1");
    assert!(
        count.contains("\"0"),
        "processes left after TaskStop: {count}"
    );
    let later = format!("{}{}", main[3], main[4]);
    assert!(later.contains("<status>stopped</status>"), "{later}");
    assert_eq!(procs::running(&sleep), 0);
}
