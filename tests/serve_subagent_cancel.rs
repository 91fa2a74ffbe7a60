//! A failed middle subagent takes its whole subtree with it (issue 25):
//! the host runs agent A1 → A2 → A3 over `baton serve`, A3 runs a shell,
//! and the host fails A1. A2 and A3 must be cancelled (a
//! `subagent_cancelled` line each) and the shell stopped, at once, not when
//! the session ends.

use std::time::{Duration, Instant};

use baton_test_support::procs;
use baton_test_support::procs::sleeping;
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn agent(id: &str, prompt: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Agent", "input": {
        "description": prompt, "prompt": prompt, "subagent_type": "general-purpose"}})
}

/// Sends `calls` as the next message of subagent `agent_id`.
fn feed(s: &mut Serve, agent_id: &str, calls: Vec<Value>) {
    for call in calls {
        s.send(json!({"type": "add", "agent_id": agent_id, "tool_use": call}));
    }
    s.send(json!({"type": "end", "agent_id": agent_id}));
}

/// Skips lines up to the next `subagent_request`; its agent id.
fn next_request(s: &Serve) -> String {
    let line = s.next_of("subagent_request");
    line["agent_id"].as_str().unwrap().to_string()
}

#[test]
fn failing_a_middle_subagent_cancels_its_whole_subtree() {
    let dir = tempfile::tempdir().unwrap();
    let marker = procs::marker("700.");
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    s.send(json!({"type": "message", "message": {"role": "assistant",
        "content": [agent("top", "level one")]}}));
    let a1 = next_request(&s);
    feed(&mut s, &a1, vec![agent("mid", "level two")]);
    let a2 = next_request(&s);
    feed(&mut s, &a2, vec![agent("leaf", "level three")]);
    let a3 = next_request(&s);
    feed(
        &mut s,
        &a3,
        vec![json!({"type": "tool_use", "id": "sh", "name": "Bash",
            "input": {"command": format!("sleep {marker}")}})],
    );
    let start = Instant::now();
    while sleeping(&marker) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the shell never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The host's model for A1 fails.
    let failed = Instant::now();
    s.send(json!({"type": "subagent_result", "agent_id": a1, "error": "the model failed"}));
    // Up to the top-level message's `done` (subagents' carry `agent_id`).
    let mut lines = Vec::new();
    loop {
        let line = s.any_next();
        let top_done = line["type"] == "done" && line.get("agent_id").is_none();
        lines.push(line);
        if top_done {
            break;
        }
    }
    let took = failed.elapsed();
    let top: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "done" && l.get("agent_id").is_none())
        .collect();
    assert_eq!(top.len(), 1, "{lines:?}");
    let cancelled: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "subagent_cancelled")
        .filter_map(|l| l["agent_id"].as_str())
        .collect();
    assert!(
        cancelled.contains(&a2.as_str()),
        "A2 not cancelled: {lines:?}"
    );
    assert!(
        cancelled.contains(&a3.as_str()),
        "A3 not cancelled: {lines:?}"
    );
    let gone = Instant::now();
    while sleeping(&marker) > 0 && gone.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleeping(&marker), 0, "A3's shell still runs");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    eprintln!("subtree cancelled and the top call answered in {took:?}");
    s.finish();
}
