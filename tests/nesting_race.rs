//! The registration race of nested batches (SPEC §7, §15), forced.
//!
//! A subagent's batch is spawned, then registered with the batch of the
//! call that opened it. A new-message interrupt handled between the two
//! used to miss the new batch: its calls that stop on a new message kept
//! running. A pause injected at exactly that point lets the interrupt go by
//! first, every time, so the test does not depend on luck.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::actors::testkit;
use baton::actors::{Event, EventSink, InterruptKind, Runtime};
use baton::engine::{Context, Outcome, Pipeline, Session};
use baton::ToolUse;
use serde_json::json;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_message_just_before_registration_still_reaches_the_nested_batch() {
    let dir = tempfile::tempdir().unwrap();
    let reached = Arc::new(Notify::new());
    let go = Arc::new(Notify::new());
    let (r, g) = (reached.clone(), go.clone());
    let runtime = Runtime::builder(
        Pipeline::allow_all_unsafe(testkit::pool()),
        Session::new("race", dir.path().join("state")),
        Context::new(dir.path()),
    )
    .before_nested_register(Arc::new(move || {
        let (r, g) = (r.clone(), g.clone());
        Box::pin(async move {
            r.notify_one();
            g.notified().await;
        })
    }))
    .build();

    let (sink, mut events) = EventSink::tokio();
    let batch = runtime.open_batch(sink).await.unwrap();
    // `nap` stops on a new message: its result proves the coordinator has
    // handled the interrupt. `agent` keeps running through it and must pass
    // it to its nested batch, whose Nap would otherwise sleep 20 s.
    batch
        .add(ToolUse::new("nap", "Nap", json!({"ms": 20_000})))
        .unwrap();
    let inner = json!([{"id": "inner-nap", "name": "Nap", "input": {"ms": 20_000}}]);
    batch
        .add(ToolUse::new("agent", "Agent", json!({"calls": inner})))
        .unwrap();
    batch.end();

    // The nested batch exists but is not registered yet.
    tokio::time::timeout(Duration::from_secs(10), reached.notified())
        .await
        .expect("the nested batch was never opened");
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::NewMessage);
    // Lifecycle events (queued, started) are not results: skip them.
    let first = loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("the interrupt was not handled");
        if !matches!(event, Some(Event::Call(_))) {
            break event;
        }
    };
    match first {
        Some(Event::Result { result, .. }) => {
            assert_eq!(result.call_id, "nap");
            // Running or still queued, it stopped on the interrupt.
            assert!(
                matches!(result.outcome, Outcome::Cancelled { .. }),
                "{:?}",
                result.outcome
            );
        }
        other => panic!("expected nap's result first, got {other:?}"),
    }
    // Only now does the nested batch register.
    go.notify_one();

    let agent = loop {
        match tokio::time::timeout(Duration::from_secs(15), events.recv())
            .await
            .expect("the nested Nap missed the interrupt and kept sleeping")
        {
            Some(Event::Result { result, .. }) => break result,
            Some(_) => {}
            None => panic!("the batch ended without the agent's result"),
        }
    };
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_eq!(agent.outcome, Outcome::Success, "{}", agent.text());
    let inner: serde_json::Value = serde_json::from_str(&agent.text()).unwrap();
    assert_eq!(inner[0]["is_error"], true, "{inner}");
    batch.quiescent().await;
}
