//! Call lifecycle events (issue 9): every call is queued, started and
//! finished exactly once, at once — a fast call's `call_finished` comes
//! before the result of a slower earlier call — and waiting for approval is
//! visible.

use std::collections::HashMap;
use std::time::Duration;

use baton::{CallState, Event, Outcome, SiblingPolicy};
use common::{call, fixture};
use serde_json::json;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_is_queued_started_and_finished_once_and_at_once() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch
        .add(call("slow", "Probe", json!({"ms": 1500})))
        .unwrap();
    batch.add(call("fast", "Probe", json!({}))).unwrap();
    batch.add(call("nope", "NoSuchTool", json!({}))).unwrap();
    batch.end();
    let mut states: HashMap<String, Vec<&'static str>> = HashMap::new();
    let mut fast_finished_before_slow_result = None;
    let mut results = 0;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(20), batch.next_event())
        .await
        .unwrap()
    {
        match event {
            Event::Call(c) => {
                if c.call_id.as_ref() == "fast" && matches!(c.state, CallState::Finished { .. }) {
                    fast_finished_before_slow_result.get_or_insert(results == 0);
                }
                if let CallState::Finished { outcome, .. } = &c.state {
                    if c.call_id.as_ref() == "nope" {
                        assert_eq!(*outcome, Outcome::UnknownTool);
                    }
                }
                assert!(c.index.is_some());
                states
                    .entry(c.call_id.to_string())
                    .or_default()
                    .push(c.state.wire_name());
            }
            Event::Result { .. } => results += 1,
            Event::Done(_) => break,
            _ => {}
        }
    }
    assert_eq!(results, 3);
    for id in ["slow", "fast", "nope"] {
        assert_eq!(
            states[id],
            ["call_queued", "call_started", "call_finished"],
            "{id}"
        );
    }
    assert_eq!(fast_finished_before_slow_result, Some(true));
}

/// A host that turned lifecycle events off (`call_events(false)`, as
/// `baton run` does when it prints only results) gets none of them, and
/// every result still, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_events_turned_off_leave_only_results() {
    let dir = tempfile::tempdir().unwrap();
    let engine = baton::Engine::builder(baton::actors::testkit::pool())
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .call_events(false)
        .allow_all_unsafe()
        .build()
        .unwrap();
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(call("slow", "Probe", json!({"ms": 300})))
        .unwrap();
    batch.add(call("fast", "Probe", json!({}))).unwrap();
    batch.add(call("nope", "NoSuchTool", json!({}))).unwrap();
    batch.end();
    let mut ids = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(20), batch.next_event())
        .await
        .unwrap()
    {
        match event {
            Event::Call(c) => panic!("a lifecycle event although they are off: {c:?}"),
            Event::Result { result, .. } => ids.push(result.call_id.clone()),
            Event::Done(_) => break,
            _ => {}
        }
    }
    assert_eq!(ids, ["slow", "fast", "nope"]);
}
