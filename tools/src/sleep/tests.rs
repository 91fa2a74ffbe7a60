use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::call::Outcome;
use baton_engine::{CancelReason, InterruptBehavior, ProgressSink, ToolUse};
use parking_lot::Mutex;
use serde_json::json;

use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

fn harness() -> Harness {
    Harness::new(vec![super::tool(&BuiltinConfig::default()).unwrap()])
}

#[tokio::test]
async fn is_safe_read_only_and_cancels_on_interrupt() {
    let h = harness();
    let prepared = h
        .pipeline
        .prepare(ToolUse::new("c", "Sleep", json!({"duration_ms": 5})));
    assert!(prepared.safe);
    assert!(prepared.read_only);
    assert_eq!(prepared.interrupt, InterruptBehavior::Cancel);
}

#[tokio::test]
async fn sleeps_then_reports_it() {
    let h = harness();
    let started = Instant::now();
    let result = h
        .run("Sleep", json!({"duration_ms": 50}), h.dir.path())
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.outcome, Outcome::Success);
    assert!(
        result.text().contains("Slept for 50 ms"),
        "{}",
        result.text()
    );
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[tokio::test]
async fn ends_early_when_cancelled() {
    let h = harness();
    let ctx = h.context(h.dir.path());
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel(CancelReason::NewMessage);
    });
    let started = Instant::now();
    let result = h
        .run_with("Sleep", json!({"duration_ms": 120_000}), ctx)
        .await;
    // Generous bound: the point is "not two minutes".
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(result.is_error);
    assert_eq!(result.outcome, Outcome::Cancelled { started: true });
    assert!(result.text().contains("Stopped after"), "{}", result.text());
}

#[tokio::test]
async fn reports_progress_while_sleeping() {
    let h = harness();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = seen.clone();
    let mut ctx = h.context(h.dir.path());
    ctx.progress = ProgressSink::new(move |p| sink_seen.lock().push(p));
    let result = h
        .run_with("Sleep", json!({"duration_ms": 2_300}), ctx)
        .await;
    assert!(!result.is_error);
    let seen = seen.lock();
    assert!(!seen.is_empty(), "no progress in 2.3 s");
    assert!(seen[0].message.contains("of 2300 ms"), "{:?}", seen[0]);
    assert_eq!(seen[0].data.as_ref().unwrap()["duration_ms"], 2300);
}

#[tokio::test]
async fn bad_inputs_are_clear_errors() {
    let config = BuiltinConfig {
        sleep_max_ms: 1_000,
        ..BuiltinConfig::default()
    };
    let h = Harness::new(vec![super::tool(&config).unwrap()]);
    let too_long = h
        .run("Sleep", json!({"duration_ms": 5_000}), h.dir.path())
        .await;
    assert!(too_long.is_error);
    assert_eq!(too_long.outcome, Outcome::ValidationFailed);
    assert!(too_long.text().contains("1000 ms"), "{}", too_long.text());

    let negative = h
        .run("Sleep", json!({"duration_ms": -5}), h.dir.path())
        .await;
    assert!(negative.is_error);
    assert_eq!(negative.outcome, Outcome::InvalidInput);

    let missing = h.run("Sleep", json!({}), h.dir.path()).await;
    assert!(missing.is_error);
    assert!(missing.text().contains("duration_ms"), "{}", missing.text());
}
