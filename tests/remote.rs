//! Remote execution against real workers: `baton mcp serve --http` child
//! processes on 127.0.0.1, driven by an engine whose file and shell tools
//! are routed to them.

use std::path::Path;
use std::time::{Duration, Instant};

use baton::{Engine, Event, InterruptKind, Outcome, ToolUse};
use baton_test_support::worker::Worker;
use serde_json::json;

use crate::support::BATON;

const TOKEN: &str = "worker-test-token";

fn engine(local: &Path, workers: &[&Worker], key: &str) -> Engine {
    crate::support::routed::routed_engine(
        local,
        workers,
        key,
        TOKEN,
        &["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
    )
}

struct Outcome2 {
    results: Vec<baton::CallResult>,
    progress: usize,
}

async fn run(engine: &Engine, calls: Vec<ToolUse>) -> Outcome2 {
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let mut results = Vec::new();
    let mut progress = 0;
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { result, .. } => results.push(*result),
            Event::Progress { .. } => progress += 1,
            Event::Done(_) => break,
            _ => {}
        }
    }
    Outcome2 { results, progress }
}

fn bash(id: &str, command: &str) -> ToolUse {
    ToolUse::new(id, "Bash", json!({ "command": command }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_run_on_the_worker_in_order_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let w = Worker::start(BATON, &root.join("worker"), TOKEN);
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = engine(&local, &[&w], "s1");
    let file = w.dir.join("remote.txt");
    let f = file.to_str().unwrap();
    let out = run(
        &engine,
        vec![
            ToolUse::new(
                "1",
                "Write",
                json!({"file_path": f, "content": "alpha\nbeta\n"}),
            ),
            ToolUse::new("2", "Read", json!({"file_path": f})),
            ToolUse::new("3", "Grep", json!({"pattern": "beta", "path": f})),
            bash("4", "hostname >/dev/null; pwd; cat remote.txt | wc -l"),
            ToolUse::new(
                "5",
                "Edit",
                json!({"file_path": f, "old_string": "beta", "new_string": "gamma"}),
            ),
            bash("6", "for i in 1 2 3; do echo step $i; sleep 1; done"),
        ],
    )
    .await;
    let ids: Vec<&str> = out.results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    for r in &out.results {
        assert!(!r.is_error, "{}: {}", r.call_id, r.text());
    }
    assert!(out.results[1].text().contains("beta"));
    assert!(
        out.results[3].text().contains(w.dir.to_str().unwrap()),
        "{}",
        out.results[3].text()
    );
    assert!(out.results[3].text().trim().ends_with('2'));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
    assert!(!local.join("remote.txt").exists());
    assert!(
        out.progress > 0,
        "progress from the worker reached the host"
    );
    engine.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_interrupt_stops_the_remote_process_and_the_connection_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let w = Worker::start(BATON, &root.join("worker"), TOKEN);
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = engine(&local, &[&w], "s2");
    let pidfile = w.dir.join("pid");
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(bash(
            "1",
            &format!(
                "echo started; sleep 300 & echo $! > {}; wait",
                pidfile.display()
            ),
        ))
        .unwrap();
    batch.end();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pidfile.exists() {
        assert!(
            Instant::now() < deadline,
            "the remote command never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    batch.interrupt(InterruptKind::Cancel);
    let mut result = None;
    while let Some(e) = batch.next_event().await {
        if let Event::Result { result: r, .. } = e {
            result = Some(r);
        }
    }
    let result = result.unwrap();
    assert_eq!(
        result.outcome,
        Outcome::Cancelled { started: true },
        "{}",
        result.text()
    );
    let gone = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < gone,
            "the remote sleep {pid} survived the interrupt"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = run(&engine, vec![bash("2", "echo still here")]).await;
    assert!(
        out.results[0].text().contains("still here"),
        "{}",
        out.results[0].text()
    );
    engine.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_worker_loses_nothing_and_the_session_moves() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut workers = [
        Worker::start(BATON, &root.join("w0"), TOKEN),
        Worker::start(BATON, &root.join("w1"), TOKEN),
    ];
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = {
        let refs: Vec<&Worker> = workers.iter().collect();
        engine(&local, &refs, "s3")
    };
    // Find the worker this session sticks to.
    let out = run(&engine, vec![bash("1", "pwd")]).await;
    let here = out.results[0].text();
    let i = workers
        .iter()
        .position(|w| here.contains(w.dir.to_str().unwrap()))
        .unwrap_or_else(|| panic!("pwd {here} is on no worker"));
    // Kill it while a call runs there.
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(bash("2", "sleep 20; echo never")).unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let _ = workers[i].child.kill();
    let _ = workers[i].child.wait();
    let mut results = Vec::new();
    while let Some(e) = batch.next_event().await {
        if let Event::Result { result, .. } = e {
            results.push(result);
        }
    }
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert!(
        results[0].text().contains(&workers[i].url),
        "{}",
        results[0].text()
    );
    // Later calls go to the other worker, and the first one there says so
    // (the two calls are read-only and may start together: either can be
    // the first).
    let out = run(&engine, vec![bash("3", "pwd"), bash("4", "echo ok")]).await;
    let other = &workers[1 - i];
    let notices = out
        .results
        .iter()
        .filter(|r| r.text().contains("now runs on"))
        .count();
    assert_eq!(
        notices,
        1,
        "{:?}",
        out.results.iter().map(|r| r.text()).collect::<Vec<_>>()
    );
    assert!(out.results[0].text().contains(other.dir.to_str().unwrap()));
    assert!(out.results[1].text().contains("ok") && !out.results[1].is_error);
    engine.shutdown();
}

/// No worker can be reached: the call's error names each worker and says
/// why in words (`Connection refused`), not with rmcp's dump of the
/// transport's Rust type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_worker_is_named_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().canonicalize().unwrap();
    // Nothing listens on port 1.
    let url = "http://127.0.0.1:1/mcp".to_string();
    let engine = crate::support::routed::engine_on_urls(
        &local,
        std::slice::from_ref(&url),
        "s4",
        TOKEN,
        &["Bash"],
    );
    let out = run(&engine, vec![bash("1", "echo never")]).await;
    let text = out.results[0].text();
    assert!(out.results[0].is_error, "{text}");
    assert!(text.contains(&url) && text.contains("refused"), "{text}");
    assert!(
        !text.contains("rmcp::") && !text.contains("Transport ["),
        "{text}"
    );
    engine.shutdown();
}
