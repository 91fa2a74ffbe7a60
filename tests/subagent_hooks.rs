//! SubagentStart / SubagentStop hooks, and `agent_id`/`agent_type` in the
//! hooks fired inside a subagent (issues 12 and 15): real command hooks
//! (bash scripts that log their input as JSON lines) around the real Agent
//! tool, driven by the scripted model loop.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use baton::engine::hooks::config::{parse_hooks, HookSource};
use baton::engine::subagent::{SubagentLimits, SubagentService};
use baton::engine::{AllowAllUnsafe, HookRegistry, Outcome};
use baton::Engine;
use baton_test_support::{procs, scripted};
use common::{call, run_all};
use futures::StreamExt;
use scripted::*;
use serde_json::{json, Value};

use crate::common;

struct Setup {
    engine: Engine,
    runner: Arc<Scripted>,
    log: PathBuf,
    dir: tempfile::TempDir,
}

/// A hook command that appends its input (one line, in `$input`) to the
/// log, then runs `then`.
fn logging(log: &Path, then: &str) -> Value {
    let command = format!(
        "input=$(cat); printf '%s\\n' \"$input\" >> '{}'; {then}",
        log.display()
    );
    json!({"type": "command", "command": command})
}

fn setup(hooks: impl FnOnce(&Path) -> Value) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hooks.jsonl");
    let parsed = parse_hooks(&hooks(&log), &HookSource::default());
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let runner = Scripted::new();
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .subagent_service(SubagentService::with_limits(
            runner.clone(),
            SubagentLimits::default(),
        ))
        .hooks(HookRegistry::new(parsed.hooks))
        .allow_all_unsafe()
        .build()
        .expect("the engine builds");
    Setup {
        engine,
        runner,
        log,
        dir,
    }
}

/// Every logged hook input, in the order the hooks wrote them.
fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn of(log: &[Value], event: &str) -> Vec<Value> {
    log.iter()
        .filter(|v| v["hook_event_name"] == event)
        .cloned()
        .collect()
}

fn to_call(v: &Value) -> baton::ToolUse {
    call(
        v["id"].as_str().unwrap(),
        v["name"].as_str().unwrap(),
        v["input"].clone(),
    )
}

/// A SubagentStop guard that sends the subagent back once (when
/// `stop_hook_active` is false) and lets it go the second time.
const ONCE_MORE: &str = r#"case "$input" in *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"run the tests first"}';; esac"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_and_stop_fire_with_claude_codes_fields_and_inner_calls_name_the_agent() {
    let s = setup(|log| {
        json!({
            "SubagentStart": [{"matcher": "general-purpose", "hooks": [logging(log,
                r#"echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"house rules: no sudo"}}'"#)]}],
            "SubagentStop": [{"hooks": [logging(log, ONCE_MORE)]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [logging(log, "true")]}],
            "PostToolBatch": [{"hooks": [logging(log, "true")]}],
        })
    });
    let inner =
        json!({"steps": [[bash("in1", "echo inner")]], "reply": "all good", "ask_stop": true});
    let run = run_all(
        &s.engine,
        vec![
            to_call(&bash("top", "echo top")),
            to_call(&agent("a1", inner.to_string())),
        ],
    )
    .await;
    let r = run.result("a1");
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(
        r.text().contains("went on after: run the tests first"),
        "{}",
        r.text()
    );

    let rec = s.runner.record("agent-1");
    assert_eq!(rec.start_context, vec!["house rules: no sudo".to_string()]);
    assert_eq!(rec.continued, vec!["run the tests first".to_string()]);

    let log = logged(&s.log);
    let start = of(&log, "SubagentStart");
    assert_eq!(start.len(), 1, "{log:?}");
    assert_eq!(start[0]["agent_id"], "agent-1");
    assert_eq!(start[0]["agent_type"], "general-purpose");
    assert!(start[0]["session_id"].is_string() && start[0]["cwd"].is_string());

    let stop = of(&log, "SubagentStop");
    assert_eq!(stop.len(), 2, "blocked once, then allowed: {log:?}");
    for (n, active) in [(0, false), (1, true)] {
        assert_eq!(stop[n]["agent_id"], "agent-1");
        assert_eq!(stop[n]["agent_type"], "general-purpose");
        assert_eq!(stop[n]["stop_hook_active"], active, "{:?}", stop[n]);
        assert!(stop[n]["agent_transcript_path"].is_string());
        assert!(stop[n]["last_assistant_message"]
            .as_str()
            .unwrap()
            .starts_with("all good"));
    }

    // Inside the subagent, hooks name it; on the main agent they do not.
    let pre = of(&log, "PreToolUse");
    let top = pre.iter().find(|v| v["tool_use_id"] == "top").unwrap();
    assert!(top.get("agent_id").is_none() && top.get("agent_type").is_none());
    let inner = pre.iter().find(|v| v["tool_use_id"] == "in1").unwrap();
    assert_eq!(inner["agent_id"], "agent-1");
    assert_eq!(inner["agent_type"], "general-purpose");
    let batches = of(&log, "PostToolBatch");
    assert!(
        batches.iter().any(|b| b["agent_id"] == "agent-1"),
        "{batches:?}"
    );
    assert!(batches.iter().any(|b| b.get("agent_id").is_none()));
    // Start before the inner call, stops after it.
    let pos = |f: &dyn Fn(&Value) -> bool| log.iter().position(f).unwrap();
    assert!(
        pos(&|v| v["hook_event_name"] == "SubagentStart") < pos(&|v| v["tool_use_id"] == "in1")
    );
    assert!(pos(&|v| v["tool_use_id"] == "in1") < pos(&|v| v["hook_event_name"] == "SubagentStop"));
    drop(s.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_agents_name_the_innermost_and_matchers_select_by_type() {
    let s = setup(|log| {
        json!({
            "SubagentStart": [{"matcher": "Explore", "hooks": [logging(log, "true")]}],
            "PreToolUse": [{"matcher": "Glob", "hooks": [logging(log, "true")]}],
        })
    });
    // The explorer is read-only: its leaf call is a Glob.
    let glob = json!({"id": "leaf", "name": "Glob", "input": {"pattern": "*"}});
    let leaf = script(vec![glob], "leaf done");
    let mid = script(vec![agent_typed("a2", "Explore", leaf)], "mid done");
    let run = run_all(&s.engine, vec![to_call(&agent("a1", mid))]).await;
    assert_eq!(run.result("a1").outcome, Outcome::Success);
    let log = logged(&s.log);
    // Only the Explore agent matched the SubagentStart matcher.
    let start = of(&log, "SubagentStart");
    assert_eq!(start.len(), 1, "{log:?}");
    assert_eq!(start[0]["agent_type"], "Explore");
    assert_eq!(start[0]["agent_id"], "agent-2");
    let pre = of(&log, "PreToolUse");
    let leaf = pre.iter().find(|v| v["tool_use_id"] == "leaf").unwrap();
    assert_eq!(leaf["agent_id"], "agent-2");
    assert_eq!(leaf["agent_type"], "Explore");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_that_does_not_ask_gets_stop_fired_and_the_block_reported() {
    let s = setup(|log| {
        json!({
            "SubagentStop": [{"hooks": [logging(log, "echo 'tests are red' >&2; exit 2")]}],
        })
    });
    let run = run_all(
        &s.engine,
        vec![to_call(&agent("a1", script(vec![], "finished")))],
    )
    .await;
    let r = run.result("a1");
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(
        r.text().contains("asked the subagent to go on"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("tests are red"), "{}", r.text());
    let stop = of(&logged(&s.log), "SubagentStop");
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["stop_hook_active"], false);
    assert!(stop[0]["last_assistant_message"]
        .as_str()
        .unwrap()
        .starts_with("finished"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_stop_hook_with_on_failure_block_does_not_keep_the_agent_going() {
    let s = setup(|log| {
        let mut hook = logging(log, "exit 7");
        hook["onFailure"] = json!("block");
        json!({"SubagentStop": [{"hooks": [hook]}]})
    });
    let inner = json!({"steps": [], "reply": "done", "ask_stop": true});
    let run = run_all(&s.engine, vec![to_call(&agent("a1", inner.to_string()))]).await;
    let r = run.result("a1");
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(s.runner.record("agent-1").continued.is_empty());
    assert_eq!(of(&logged(&s.log), "SubagentStop").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_agents_fire_start_and_stop() {
    let s = setup(|log| {
        json!({
            "SubagentStart": [{"hooks": [logging(log, "true")]}],
            "SubagentStop": [{"hooks": [logging(log, "true")]}],
        })
    });
    let mut notes = s.engine.notifications();
    let run = run_all(
        &s.engine,
        vec![call(
            "bg",
            "Agent",
            json!({"description": "in the background",
                   "prompt": script(vec![bash("b", "sleep 1; echo bg")], "bg done"),
                   "run_in_background": true}),
        )],
    )
    .await;
    assert_eq!(run.result("bg").outcome, Outcome::Success);
    // Start fired before the call returned; stop only once the agent ended.
    assert_eq!(of(&logged(&s.log), "SubagentStart").len(), 1);
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), notes.next())
            .await
            .expect("no notification")
            .expect("stream ended");
        if let baton::Event::Notification(n) = event {
            if n.kind == "agent_finished" {
                break;
            }
        }
    }
    let stop = of(&logged(&s.log), "SubagentStop");
    assert_eq!(stop.len(), 1, "{stop:?}");
    assert_eq!(stop[0]["agent_id"], "agent-1");
    assert!(stop[0]["last_assistant_message"]
        .as_str()
        .unwrap()
        .starts_with("bg done"));
}

/// A SubagentStart hook that hangs yields to an interrupt at once: the hook
/// is dropped (its process group killed) and the Agent call is answered as
/// cancelled, not held until the engine's grace period gives up on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_start_hook_yields_to_an_interrupt() {
    let marker = tempfile::tempdir().unwrap();
    let started = marker.path().join("started");
    let sleep = procs::marker("623.");
    let s = setup(|log| {
        let then = format!("touch '{}'; sleep {sleep}", started.display());
        json!({"SubagentStart": [{"hooks": [logging(log, &then)]}]})
    });
    let mut batch = s.engine.open_batch().await.unwrap();
    batch
        .add(to_call(&agent("a1", script(vec![], "finished"))))
        .unwrap();
    batch.end();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent = std::time::Instant::now();
    batch.interrupt(baton::InterruptKind::Cancel);
    let run = common::drain(&mut batch).await;
    let r = run.result("a1");
    // Before, the call was answered only when the engine's 5 s grace for
    // tools that ignore cancellation ran out; now at once (tens of ms).
    assert!(
        sent.elapsed() < Duration::from_secs(4),
        "the call waited {:?} for the grace period: {}",
        sent.elapsed(),
        r.text()
    );
    assert_ne!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(
        procs::running(&sleep),
        0,
        "the hook's sleep is still running"
    );
}
