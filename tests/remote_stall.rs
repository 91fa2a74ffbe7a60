//! A paused remote worker (SIGSTOP) never hangs the host (issue 25): its
//! call is answered with an error naming it within a bounded time (health
//! checks), the session moves to another worker, and an interrupt ends a
//! call on it at once. Real `baton mcp serve --http` workers on 127.0.0.1.

use std::path::Path;
use std::time::{Duration, Instant};

use baton::{CallResult, Engine, Event, InterruptKind, ToolUse};
use baton_test_support::worker::Worker;
use serde_json::json;

use crate::support::BATON;

const TOKEN: &str = "stall-test-token";

fn engine(local: &Path, workers: &[&Worker], key: &str) -> Engine {
    crate::support::routed::routed_engine(local, workers, key, TOKEN, &["Bash"])
}

fn bash(id: &str, command: &str) -> ToolUse {
    ToolUse::new(id, "Bash", json!({ "command": command }))
}

async fn results(batch: &mut baton::Batch) -> Vec<CallResult> {
    let mut out = Vec::new();
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { result, .. } => out.push(*result),
            Event::Done(_) => break,
            _ => {}
        }
    }
    out
}

async fn run(engine: &Engine, calls: Vec<ToolUse>) -> Vec<CallResult> {
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    results(&mut batch).await
}

fn signal(worker: &Worker, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &worker.child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} failed");
}

/// Two workers and an engine; the index of the one the session uses.
async fn setup(root: &Path, key: &str) -> ([Worker; 2], Engine, usize) {
    let workers = [
        Worker::start(BATON, &root.join("w0"), TOKEN),
        Worker::start(BATON, &root.join("w1"), TOKEN),
    ];
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = {
        let refs: Vec<&Worker> = workers.iter().collect();
        engine(&local, &refs, key)
    };
    let out = run(&engine, vec![bash("where", "pwd")]).await;
    let here = out[0].text();
    let i = workers
        .iter()
        .position(|w| here.contains(w.dir.to_str().unwrap()))
        .unwrap_or_else(|| panic!("pwd {here} is on no worker"));
    (workers, engine, i)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_worker_is_detected_and_the_session_moves() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (workers, engine, i) = setup(&root, "stall-1").await;
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(bash("long", "sleep 60; echo never")).unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(700)).await;
    signal(&workers[i], "-STOP");
    let paused = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(45), results(&mut batch))
        .await
        .expect("no result from a paused worker within 45 s");
    let took = paused.elapsed();
    assert_eq!(out.len(), 1);
    assert!(out[0].is_error, "{}", out[0].text());
    assert!(
        out[0].text().contains(&workers[i].url) && out[0].text().contains("stopped answering"),
        "{}",
        out[0].text()
    );
    // The next call runs on the other worker, and says the session moved.
    let next = tokio::time::timeout(
        Duration::from_secs(30),
        run(&engine, vec![bash("after", "pwd")]),
    )
    .await
    .expect("the next call hung");
    let other = &workers[1 - i];
    assert!(
        next[0].text().contains(other.dir.to_str().unwrap()),
        "{}",
        next[0].text()
    );
    assert!(next[0].text().contains("now runs on"), "{}", next[0].text());
    eprintln!("paused worker detected in {took:?}");
    signal(&workers[i], "-CONT");
    engine.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_interrupt_ends_a_call_on_a_paused_worker_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (workers, engine, i) = setup(&root, "stall-2").await;
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(bash("long", "sleep 60; echo never")).unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(700)).await;
    signal(&workers[i], "-STOP");
    let asked = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    let out = tokio::time::timeout(Duration::from_secs(30), results(&mut batch))
        .await
        .expect("the interrupt hung on a paused worker");
    let took = asked.elapsed();
    assert_eq!(out.len(), 1);
    assert!(out[0].is_error);
    // One second for the health check, plus scheduling on a loaded machine.
    assert!(took < Duration::from_secs(4), "the interrupt took {took:?}");
    eprintln!("interrupt on a paused worker answered in {took:?}");
    signal(&workers[i], "-CONT");
    engine.shutdown();
}
