//! Per-call control from the library (issue 24): cancel one call by id
//! through a cloned handle, and the host's per-call deadline. Real `bash`.

use std::time::Duration;

use baton::{Engine, Event, Outcome};
use common::call;
use futures::StreamExt;
use serde_json::json;

use crate::common;

fn engine(dir: &std::path::Path) -> Engine {
    crate::common::allow_all_builder(dir).build().unwrap()
}

fn text(result: &baton::CallResult) -> String {
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloned_handle_cancels_one_call_and_its_siblings_finish() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let batch = engine.open_batch().await.unwrap();
    let (handle, mut events) = batch.split();
    handle
        .add(call("long", "Bash", json!({"command": "sleep 60"})))
        .unwrap();
    handle
        .add(call(
            "sibling",
            "Bash",
            json!({"command": "sleep 1; echo sibling-done"}),
        ))
        .unwrap();
    handle.end();
    // Another task holds a clone and cancels once the call runs.
    let canceller = handle.clone();
    let mut results = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(60), events.next())
        .await
        .unwrap()
    {
        match event {
            Event::Call(c)
                if &*c.call_id == "long" && matches!(c.state, baton::CallState::Started) =>
            {
                canceller.cancel_call("long");
            }
            Event::Result { result, .. } => results.push(result),
            _ => {}
        }
    }
    assert_eq!(results.len(), 2);
    assert!(
        matches!(results[0].outcome, Outcome::Cancelled { .. }),
        "{:?}",
        results[0].outcome
    );
    assert!(
        text(&results[0]).contains("host cancelled this one call"),
        "{}",
        text(&results[0])
    );
    assert_eq!(
        results[1].outcome,
        Outcome::Success,
        "{}",
        text(&results[1])
    );
    assert!(text(&results[1]).contains("sibling-done"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_deadline_cancels_only_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let batch = engine.open_batch().await.unwrap();
    batch
        .add_with_deadline(
            call("slow", "Bash", json!({"command": "sleep 60"})),
            Duration::from_millis(500),
        )
        .unwrap();
    batch
        .add(call(
            "quick",
            "Bash",
            json!({"command": "sleep 1; echo quick-done"}),
        ))
        .unwrap();
    let (results, summary) = tokio::time::timeout(Duration::from_secs(60), batch.finish())
        .await
        .unwrap();
    assert!(
        matches!(results[0].outcome, Outcome::Cancelled { .. }),
        "{:?}",
        results[0].outcome
    );
    assert!(
        text(&results[0]).contains("deadline of 500 ms"),
        "{}",
        text(&results[0])
    );
    assert_eq!(results[1].outcome, Outcome::Success);
    assert!(summary.interrupted.is_none());
}
