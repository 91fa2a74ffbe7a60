//! Scheduling through real actors and real timing (SPEC §5, §6, §1).

use std::time::{Duration, Instant};

use baton::{Outcome, SiblingPolicy};
use common::*;
use serde_json::json;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_safe_unsafe_safe_safe_runs_in_three_waves() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = vec![
        call("c1", "Probe", json!({"ms": 200})),
        call("c2", "Probe", json!({"ms": 200})),
        call("c3", "Probe", json!({"ms": 200, "safe": false})),
        call("c4", "Probe", json!({"ms": 200})),
        call("c5", "Probe", json!({"ms": 200})),
    ];
    let run = run_all(&f.engine, calls).await;
    assert_in_order(&run, 5);
    let t = f.timeline();
    let s = |id: &str| t.span(id).unwrap();
    // {1,2} together.
    assert!(s("c2").start < s("c1").end && s("c1").start < s("c2").end);
    // {3} alone, after both.
    assert!(s("c3").start >= s("c1").end && s("c3").start >= s("c2").end);
    // {4,5} together, after 3.
    assert!(s("c4").start >= s("c3").end && s("c5").start >= s("c3").end);
    assert!(s("c5").start < s("c4").end && s("c4").start < s("c5").end);
    assert!(run.results.iter().all(|r| r.1.outcome == Outcome::Success));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_half_second_calls_with_cap_ten_take_two_rounds() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = (0..20)
        .map(|i| call(&format!("c{i}"), "Probe", json!({"ms": 500})))
        .collect();
    let start = Instant::now();
    let run = run_all(&f.engine, calls).await;
    let elapsed = start.elapsed();
    assert_in_order(&run, 20);
    assert!(elapsed >= Duration::from_millis(1000), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
    assert_eq!(f.timeline().max_parallel(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_later_result_waits_but_its_progress_does_not() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = vec![
        call("slow", "Probe", json!({"ms": 800, "progress": true})),
        call("fast", "Probe", json!({"ms": 10, "progress": true})),
    ];
    let run = run_all(&f.engine, calls).await;
    assert_eq!(run.ids(), ["slow", "fast"]);
    let fast_progress = run.progress.iter().find(|p| p.0 == 1).unwrap().1;
    let slow_result = run.result_time("slow");
    assert!(fast_progress < slow_result, "progress was held back");
    // The fast call finished long before its result left.
    let fast_end = f.timeline().span("fast").unwrap().end;
    assert!(run.result_time("fast") >= slow_result);
    assert!(slow_result.duration_since(fast_end) > Duration::from_millis(300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_added_while_streaming_start_before_the_message_ends() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let mut batch = f.engine.open_batch().await.unwrap();
    batch.add(call("a", "Probe", json!({"ms": 50}))).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The first call already ran although the message has not ended.
    assert!(f.timeline().ran("a"));
    batch.add(call("b", "Probe", json!({"ms": 50}))).unwrap();
    batch.end();
    assert!(batch.add(call("late", "Probe", json!({}))).is_err());
    let run = drain(&mut batch).await;
    assert_eq!(run.ids(), ["a", "b"]);
    assert_eq!(run.done.unwrap().calls, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_changes_of_unsafe_calls_reach_later_calls_and_messages() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = vec![
        call("cd", "Probe", json!({"safe": false, "cd": "sub"})),
        call("after", "Probe", json!({})),
        // A safe call's change is ignored.
        call("safe-cd", "Probe", json!({"cd": "/"})),
        call("last", "Probe", json!({"safe": false})),
    ];
    let run = run_all(&f.engine, calls).await;
    let sub = f.dir.path().join("work/sub");
    assert!(run
        .result("after")
        .text()
        .ends_with(&sub.display().to_string()));
    assert!(run
        .result("last")
        .text()
        .ends_with(&sub.display().to_string()));
    // The next message of the session starts where the last one left off.
    let next = run_all(&f.engine, vec![call("n", "Probe", json!({}))]).await;
    assert!(next
        .result("n")
        .text()
        .ends_with(&sub.display().to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_get_results_in_place() {
    let f = fixture(10, SiblingPolicy::ShellError);
    let calls = vec![
        call("ok", "Probe", json!({"ms": 30})),
        call("unknown", "NoSuchTool", json!({})),
        call("invalid", "Probe", json!({"ms": "soon"})),
        call("ok2", "Probe", json!({})),
    ];
    let run = run_all(&f.engine, calls).await;
    assert_in_order(&run, 4);
    assert_eq!(run.result("unknown").outcome, Outcome::UnknownTool);
    assert_eq!(run.result("invalid").outcome, Outcome::InvalidInput);
    assert_eq!(run.result("ok2").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_message_budget_spills_the_largest_results() {
    let f = fixture(10, SiblingPolicy::ShellError);
    // Each is under the per-tool limit (50k) but together they exceed 200k.
    let calls = (0..5)
        .map(|i| {
            call(
                &format!("big{i}"),
                "Probe",
                json!({"out_chars": 45_000 + i * 100}),
            )
        })
        .collect();
    let run = run_all(&f.engine, calls).await;
    let total: usize = run.results.iter().map(|r| r.1.text().len()).sum();
    assert!(total <= 200_000, "total {total}");
    let spilled: Vec<&str> = run
        .results
        .iter()
        .filter(|r| r.1.text().contains("too large"))
        .map(|r| r.1.call_id.as_str())
        .collect();
    assert!(!spilled.is_empty());
    assert!(f.dir.path().join("state/tool-results").exists());
}
