//! The host interfaces (SPEC §16): permission round trips, the blocking
//! API, notifications.

use std::sync::Arc;
use std::time::Duration;

use baton::actors::testkit;
use baton::blocking::BlockingEngine;
use baton::engine::permission::{
    AskSource, PermissionDecision, PermissionPolicy, PermissionRequest,
};
use baton::{Approval, Engine, Event, Notification, Outcome};
use common::call;
use futures::StreamExt;
use serde_json::json;

use crate::common;

struct AskEverything;

impl PermissionPolicy for AskEverything {
    fn decide(&self, _request: &PermissionRequest<'_>) -> PermissionDecision {
        PermissionDecision::Ask {
            reason: "test policy asks".into(),
            source: AskSource::Rule,
            suggestion: None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_requests_round_trip_through_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path())
        .policy(Arc::new(AskEverything))
        .host_approvals(true)
        .build()
        .unwrap();
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(call("yes", "Probe", json!({}))).unwrap();
    batch.add(call("no", "Probe", json!({}))).unwrap();
    batch.end();
    let mut results = Vec::new();
    let mut asked = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), batch.next_event())
        .await
        .unwrap()
    {
        match event {
            Event::PermissionRequest(prompt) => {
                asked.push(prompt.request.call_id.clone());
                let answer = if prompt.request.call_id == "yes" {
                    Approval::Allow
                } else {
                    Approval::Deny {
                        reason: Some("not today".into()),
                    }
                };
                assert!(prompt.answer(answer));
                assert!(!prompt.answer(Approval::Allow), "second answer ignored");
            }
            Event::Result { result, .. } => results.push(result),
            Event::Done(_) => break,
            _ => {}
        }
    }
    asked.sort();
    assert_eq!(asked, ["no", "yes"]);
    assert_eq!(results[0].outcome, Outcome::Success);
    assert_eq!(results[1].outcome, Outcome::Denied);
    assert!(results[1].text().contains("not today"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_host_approvals_ask_means_deny() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path())
        .policy(Arc::new(AskEverything))
        .build()
        .unwrap();
    let batch = engine.open_batch().await.unwrap();
    batch.add(call("a", "Probe", json!({}))).unwrap();
    let (results, _) = batch.finish().await;
    assert_eq!(results[0].outcome, Outcome::Denied);
}

#[test]
fn the_blocking_api_runs_a_batch_without_an_async_host() {
    let dir = tempfile::tempdir().unwrap();
    let builder = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path())
        .allow_all_unsafe();
    let engine = BlockingEngine::new(builder, 2).unwrap();
    let batch = engine.open_batch().unwrap();
    batch.add(call("a", "Probe", json!({"ms": 100}))).unwrap();
    batch.add(call("b", "Nap", json!({"ms": 10}))).unwrap();
    batch.end();
    let mut ids = Vec::new();
    loop {
        match batch.recv_timeout(Duration::from_secs(10)) {
            Some(Event::Result { result, .. }) => ids.push(result.call_id),
            Some(Event::Done(summary)) => {
                assert_eq!(summary.calls, 2);
                break;
            }
            Some(_) => {}
            None => panic!("no event"),
        }
    }
    assert_eq!(ids, ["a", "b"]);
    batch.wait_quiescent();

    // Interrupts work the same way.
    let batch = engine.open_batch().unwrap();
    batch.add(call("long", "Nap", json!({"ms": 5000}))).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    batch.interrupt(baton::InterruptKind::Cancel);
    let (results, summary) = batch.finish();
    assert_eq!(results[0].outcome, Outcome::Cancelled { started: true });
    assert_eq!(summary.interrupted, Some(baton::InterruptKind::Cancel));

    // Misuse from inside an async runtime is an error, not a panic.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async { assert!(engine.open_batch().is_err()) });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_notifications_reach_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path())
        .allow_all_unsafe()
        .build()
        .unwrap();
    let mut notes = engine.notifications();
    engine.runtime().session().notify(Notification {
        kind: "background_task_finished".into(),
        message: "task 1 ended".into(),
        data: None,
    });
    let event = tokio::time::timeout(Duration::from_secs(5), notes.next())
        .await
        .unwrap();
    assert!(matches!(event, Some(Event::Notification(n)) if n.message == "task 1 ended"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_approval_ends_when_its_call_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path())
        .policy(Arc::new(AskEverything))
        .host_approvals(true)
        .build()
        .unwrap();
    let mut batch = engine.open_batch().await.unwrap();
    // Nap stops on a new message; Probe does not, so its question stays.
    batch.add(call("nap", "Nap", json!({}))).unwrap();
    batch.add(call("probe", "Probe", json!({}))).unwrap();
    batch.end();
    let mut prompts = Vec::new();
    while prompts.len() < 2 {
        if let Some(Event::PermissionRequest(p)) = batch.next_event().await {
            prompts.push(p);
        }
    }
    batch.interrupt(baton::InterruptKind::NewMessage);
    // The Nap call settles without an answer.
    let first = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(Event::Result { result, .. }) = batch.next_event().await {
                return result;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(first.call_id, "nap");
    assert!(first.is_error);
    // The question was withdrawn and the call reported as never run.
    assert_eq!(first.outcome, Outcome::Cancelled { started: false });
    assert!(first.text().contains("new message"), "{}", first.text());
    // The Probe question is still open; answering it runs the call.
    let probe = prompts
        .iter()
        .find(|p| p.request.call_id == "probe")
        .unwrap();
    assert!(probe.answer(Approval::Allow));
    let (results, _) = batch.finish().await;
    assert_eq!(results[0].outcome, Outcome::Success);
}

#[test]
fn handles_can_move_between_threads() {
    fn shared<T: Send + Sync + Clone>() {}
    fn sendable<T: Send>() {}
    shared::<Engine>();
    sendable::<baton::Batch>();
    sendable::<baton::EventStream>();
    sendable::<baton::BatchHandle>();
    sendable::<baton::blocking::BlockingBatch>();
    sendable::<baton::blocking::BlockingEngine>();
}
