//! Concurrency limits by kind of work (SPEC §5), through the whole engine
//! with the real built-in tools: real `sleep` processes in the process pool,
//! the `Sleep` timer in the wait pool, and a cap the user sets still bounding
//! both. Bounds are generous (a shared two-core machine); each still fails
//! when the calls run in the waves an overall cap of 10 would force.

use std::time::{Duration, Instant};

use baton::{Engine, Outcome};
use common::{call, run_all};
use serde_json::json;

use crate::common;

fn engine(dir: &std::path::Path, cap: Option<usize>) -> Engine {
    let mut builder = crate::common::allow_all_builder(dir);
    if let Some(n) = cap {
        builder = builder.max_concurrency(n);
    }
    builder.build().unwrap()
}

fn assert_all_ok_in_order(run: &common::Run, n: usize) {
    let ids: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    assert_eq!(run.ids(), ids, "results out of order");
    for (_, result, _) in &run.results {
        assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_sleep_processes_run_in_one_wave_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), None);
    let calls = (0..16)
        .map(|i| call(&format!("c{i}"), "Bash", json!({"command": "sleep 0.5"})))
        .collect();
    let started = Instant::now();
    let run = run_all(&engine, calls).await;
    let took = started.elapsed();
    println!(
        "16 x Bash `sleep 0.5`, default limits: {} ms",
        took.as_millis()
    );
    assert_all_ok_in_order(&run, 16);
    // Two waves under a cap of 10 take at least 1 s; one wave takes 0.5 s
    // plus the cost of starting 16 shells.
    assert!(took < Duration::from_millis(950), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_calls_use_the_large_pool() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), None);
    let calls = (0..32)
        .map(|i| call(&format!("c{i}"), "Sleep", json!({"duration_ms": 500})))
        .collect();
    let started = Instant::now();
    let run = run_all(&engine, calls).await;
    let took = started.elapsed();
    println!("32 x Sleep 500 ms, default limits: {} ms", took.as_millis());
    assert_all_ok_in_order(&run, 32);
    // A cap of 10 needs four waves (2 s); the process pool alone two (1 s).
    assert!(took < Duration::from_millis(950), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_the_user_sets_bounds_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), Some(4));
    // 4 timers and 4 processes under one cap of 4: two waves at least.
    let calls = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                call(&format!("c{i}"), "Sleep", json!({"duration_ms": 400}))
            } else {
                call(&format!("c{i}"), "Bash", json!({"command": "sleep 0.4"}))
            }
        })
        .collect();
    let started = Instant::now();
    let run = run_all(&engine, calls).await;
    let took = started.elapsed();
    assert_all_ok_in_order(&run, 8);
    assert!(took >= Duration::from_millis(800), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_still_runs_alone_between_the_pools() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), None);
    // The write waits for the timers and the reader before it, and the
    // reader after it sees the file: the barrier holds across both pools.
    let calls = vec![
        call("c0", "Sleep", json!({"duration_ms": 300})),
        call("c1", "Bash", json!({"command": "sleep 0.3"})),
        call("c2", "Bash", json!({"command": "echo hi > out.txt"})),
        call("c3", "Bash", json!({"command": "cat out.txt"})),
        call("c4", "Sleep", json!({"duration_ms": 10})),
    ];
    let run = run_all(&engine, calls).await;
    assert_all_ok_in_order(&run, 5);
    assert!(
        run.result("c3").text().contains("hi"),
        "{}",
        run.result("c3").text()
    );
    assert!(run.result_time("c2") >= run.result_time("c1"));
}
