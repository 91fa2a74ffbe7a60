//! Interrupts, sibling cancellation, panics, lost invocations and nesting,
//! through real actors (SPEC §7, §8, §14, §15).

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::actors::testkit;
use baton::actors::InjectedFault;
use baton::{Engine, InterruptKind, Outcome, SiblingPolicy};
use common::*;
use serde_json::json;

use crate::common;

fn cancelled(run: &Run, id: &str, started: bool) -> String {
    let r = run.result(id);
    assert_eq!(
        r.outcome,
        Outcome::Cancelled { started },
        "{id}: {}",
        r.text()
    );
    assert!(r.is_error);
    r.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_everything_including_later_calls() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch.add(call("nap", "Nap", json!({"ms": 5000}))).unwrap();
    batch
        .add(call("block", "Probe", json!({"ms": 5000})))
        .unwrap();
    batch
        .add(call("queued", "Probe", json!({"safe": false})))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    batch.interrupt(InterruptKind::Cancel); // idempotent
    batch.add(call("later", "Probe", json!({}))).unwrap();
    batch.end();
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert_in_order(&run, 4);
    let text = cancelled(&run, "nap", true);
    assert!(
        text.contains("user") && text.contains("stopped while running"),
        "{text}"
    );
    cancelled(&run, "block", true);
    let text = cancelled(&run, "queued", false);
    assert!(text.contains("never ran"), "{text}");
    cancelled(&run, "later", false);
    assert!(!f.timeline().ran("queued") && !f.timeline().ran("later"));
    assert_eq!(run.done.unwrap().interrupted, Some(InterruptKind::Cancel));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_message_stops_cancel_tools_and_lets_block_tools_finish() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch.add(call("nap", "Nap", json!({"ms": 5000}))).unwrap();
    batch
        .add(call("block", "Probe", json!({"ms": 400})))
        .unwrap();
    batch
        .add(call(
            "queued-block",
            "Probe",
            json!({"ms": 50, "safe": false}),
        ))
        .unwrap();
    batch
        .add(call("queued-nap", "Nap", json!({"ms": 50})))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    batch.interrupt(InterruptKind::NewMessage);
    batch.add(call("later", "Probe", json!({}))).unwrap();
    batch.end();
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert_in_order(&run, 5);
    let text = cancelled(&run, "nap", true);
    assert!(text.contains("new message"), "{text}");
    assert_eq!(run.result("block").outcome, Outcome::Success);
    assert_eq!(run.result("queued-block").outcome, Outcome::Success);
    assert!(f.timeline().ran("queued-block"));
    cancelled(&run, "queued-nap", false);
    cancelled(&run, "later", false);
    assert!(!f.timeline().ran("later"));
}

/// [done, running, failing shell, queued] + one added after the failure.
async fn sibling_batch(policy: SiblingPolicy, shell_read_only: bool) -> (Fixture, Run) {
    let f = fixture(10, policy);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch.add(call("done", "Probe", json!({"ms": 10}))).unwrap();
    batch
        .add(call("running", "Probe", json!({"ms": 3000})))
        .unwrap();
    let cmd = "mkdir /nonexistent/deeply/nested/place/for/the/build";
    batch
        .add(call(
            "shell",
            "Shell",
            json!({"ms": 200, "fail": true, "cmd": cmd, "read_only": shell_read_only}),
        ))
        .unwrap();
    batch
        .add(call("queued", "Probe", json!({"safe": false})))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    batch.add(call("later", "Probe", json!({}))).unwrap();
    batch.end();
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert_in_order(&run, 5);
    (f, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_error_policy_cancels_siblings_with_explicit_texts() {
    let (f, run) = sibling_batch(SiblingPolicy::ShellError, true).await;
    assert_eq!(run.result("done").outcome, Outcome::Success);
    assert_eq!(run.result("shell").outcome, Outcome::ToolError);
    let stopped = cancelled(&run, "running", true);
    let never = cancelled(&run, "queued", false);
    cancelled(&run, "later", false);
    for text in [&stopped, &never] {
        assert!(text.contains("automatically by the engine"), "{text}");
        assert!(
            text.contains("Shell(mkdir /nonexistent/deeply/nested/place/f…)"),
            "{text}"
        );
    }
    assert!(stopped.contains("stopped while running"));
    assert!(never.contains("never ran"));
    assert!(!f.timeline().ran("queued"));
    assert!(run
        .done
        .unwrap()
        .cancelled_by
        .unwrap()
        .starts_with("Shell("));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_policy_ignores_read_only_failures() {
    let (_f, run) = sibling_batch(SiblingPolicy::MutatingShellError, true).await;
    assert!(run
        .results
        .iter()
        .all(|r| !matches!(r.1.outcome, Outcome::Cancelled { .. })));
    let (_f, run) = sibling_batch(SiblingPolicy::MutatingShellError, false).await;
    cancelled(&run, "running", true);
    cancelled(&run, "queued", false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_policy_cancels_nothing() {
    let (_f, run) = sibling_batch(SiblingPolicy::Off, false).await;
    assert_eq!(run.result("running").outcome, Outcome::Success);
    assert_eq!(run.result("queued").outcome, Outcome::Success);
    assert_eq!(run.result("later").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_yields_an_error_and_the_batch_completes() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = vec![
        call("a", "Probe", json!({"ms": 20})),
        call("boom", "Probe", json!({"panic": true})),
        call("c", "Probe", json!({"safe": false})),
    ];
    let run = run_all(&f.engine, calls).await;
    assert_in_order(&run, 3);
    assert_eq!(run.result("boom").outcome, Outcome::Panicked);
    assert!(run.result("boom").is_error);
    assert_eq!(run.result("c").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_invocation_still_yields_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .fault_hook(Arc::new(|call| match call.id.as_str() {
            "panics" => InjectedFault::Panic,
            "killed" => InjectedFault::Kill,
            _ => InjectedFault::None,
        }))
        .allow_all_unsafe()
        .build()
        .unwrap();
    let calls = vec![
        call("panics", "Probe", json!({"ms": 20})),
        call("killed", "Probe", json!({"ms": 20, "safe": false})),
        call("fine", "Probe", json!({})),
    ];
    let run = run_all(&engine, calls).await;
    assert_in_order(&run, 3);
    for id in ["panics", "killed"] {
        let r = run.result(id);
        assert_eq!(r.outcome, Outcome::Internal, "{id}");
        assert!(r.text().contains("lost"), "{}", r.text());
    }
    assert_eq!(run.result("fine").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_batch_is_cancelled_with_its_parent() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let children = json!([
        {"id": "kid1", "name": "Nap", "input": {"ms": 5000}},
        {"id": "kid2", "name": "Probe", "input": {"ms": 5000}},
        {"id": "kid3", "name": "Probe", "input": {"safe": false}},
    ]);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch
        .add(call("agent", "Nest", json!({"calls": children})))
        .unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!f.timeline().ran("kid1"), "kids are still running");
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert!(t0.elapsed() < Duration::from_secs(3));
    let t = f.timeline();
    assert!(t.span("kid1").unwrap().cancelled);
    assert!(t.span("kid2").unwrap().cancelled);
    assert!(!t.ran("kid3"));
    let text = cancelled(&run, "agent", true);
    // The nested results came back through the parent's output.
    assert!(
        text.contains("kid3") && text.contains("never ran"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_inside_a_nested_batch_stays_inside() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let children = json!([
        {"id": "kid-fail", "name": "Shell", "input": {"fail": true, "cmd": "false"}},
        {"id": "kid-next", "name": "Probe", "input": {"safe": false}},
    ]);
    let calls = vec![
        call("sibling", "Probe", json!({"ms": 300})),
        call("agent", "Nest", json!({"calls": children})),
    ];
    let run = run_all(&f.engine, calls).await;
    assert_eq!(run.result("sibling").outcome, Outcome::Success);
    let agent = run.result("agent");
    assert_eq!(agent.outcome, Outcome::Success);
    let text = agent.text();
    // Inside, the failure cancelled its own sibling.
    assert!(text.contains("automatically by the engine"), "{text}");
    assert!(!f.timeline().ran("kid-next"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_batch_handle_stops_its_calls() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let batch = f.engine.open_batch().await.unwrap();
    batch.add(call("nap", "Nap", json!({"ms": 5000}))).unwrap();
    let (handle, mut events) = batch.split();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(handle);
    use futures::StreamExt;
    let mut got = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .unwrap()
    {
        got.push(e);
    }
    // Lifecycle events come and go; the first result is the cancelled call.
    let first = got
        .iter()
        .find(|e| matches!(e, baton::Event::Result { .. }))
        .expect("a result");
    assert!(matches!(
        first,
        baton::Event::Result { result, .. } if result.outcome == Outcome::Cancelled { started: true }
    ));
    assert!(matches!(got.last(), Some(baton::Event::Done(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_nested_batches_can_be_limited() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .config(baton::RuntimeConfig::default().with_max_running_nested(Some(1)))
        .allow_all_unsafe()
        .build()
        .unwrap();
    let child = |id: &str| json!({"calls": [{"id": id, "name": "Probe", "input": {"ms": 300}}]});
    let start = Instant::now();
    let run = run_all(
        &engine,
        vec![
            call("n1", "Nest", child("k1")),
            call("n2", "Nest", child("k2")),
        ],
    )
    .await;
    // Both Nest calls are safe and start together, but their nested
    // batches run one after the other.
    assert!(
        start.elapsed() >= Duration::from_millis(600),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(run.result("n1").outcome, Outcome::Success);
    assert_eq!(run.result("n2").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_message_reaches_into_a_subagent_that_keeps_running() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let children = json!([
        {"id": "sub-nap", "name": "Nap", "input": {"ms": 5000}},
        {"id": "sub-probe", "name": "Probe", "input": {"ms": 400}},
    ]);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch
        .add(call("agent", "Agent", json!({"calls": children})))
        .unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::NewMessage);
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // The subagent itself ran to completion with a real result...
    let agent = run.result("agent");
    assert_eq!(agent.outcome, Outcome::Success, "{}", agent.text());
    let inner: serde_json::Value = serde_json::from_str(&agent.text()).unwrap();
    // ...its Nap stopped on the new message, its Probe finished.
    assert_eq!(inner[0]["is_error"], true);
    assert!(inner[0]["text"].as_str().unwrap().contains("new message"));
    assert_eq!(inner[1]["is_error"], false);
    assert!(f.timeline().span("sub-nap").unwrap().cancelled);
}
