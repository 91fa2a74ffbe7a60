//! The library's way to send running calls to the background
//! (`Batch::send_to_background`): a running Bash call answers at once, in
//! order beside its siblings, its command goes on, an interrupt of the
//! batch no longer reaches it, and the engine's shutdown ends it.

use std::time::Duration;

use crate::common::wait_for;
use baton::{Event, InterruptKind, Outcome};
use baton_test_support::procs;
use baton_test_support::procs::sleeping;
use common::call;
use serde_json::json;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_sends_its_running_shell_to_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::common::allow_all_builder(dir.path())
        .build()
        .unwrap();
    let m = procs::marker("1000.");
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(call("quick", "Bash", json!({"command": "echo first"})))
        .unwrap();
    batch
        .add(call(
            "long",
            "Bash",
            json!({"command": format!("echo started; sleep {m}")}),
        ))
        .unwrap();
    batch.end();
    assert!(
        wait_for(|| sleeping(&m) == 1).await,
        "the command never started"
    );
    // Only calls of this batch that run a shell now are sent.
    assert!(batch.send_to_background(Some("other")).is_empty());
    assert_eq!(batch.send_to_background(None), ["long"]);
    let mut results = Vec::new();
    while let Some(event) = batch.next_event().await {
        if let Event::Result { result, .. } = event {
            results.push(result);
            if results.len() == 2 {
                // Once the call answered, an interrupt of its batch no
                // longer reaches the command.
                batch.interrupt(InterruptKind::Cancel);
            }
        }
    }
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].text(), "first");
    assert_eq!(
        results[1].outcome,
        Outcome::Success,
        "{}",
        results[1].text()
    );
    assert!(
        results[1]
            .text()
            .contains("manually backgrounded by user with ID: shell-1"),
        "{}",
        results[1].text()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sleeping(&m), 1, "the interrupt must not stop the task");
    engine.shutdown();
    assert!(
        wait_for(|| sleeping(&m) == 0).await,
        "left behind after shutdown"
    );
}
