//! Remote execution on loopback: 4 `baton mcp serve --http` workers, one
//! host, 2,000 calls (reads, greps, shell, writes) spread over 8 sessions,
//! against the same calls executed locally in the same run.
//!
//! Prints throughput and per-call latency (p50/p99, from the batch's start to
//! the call's result) for both, then lets criterion time one 250-call session
//! batch each way. A result missing or out of order aborts the bench.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::permission::AllowAllUnsafe;
use baton::engine::{PoolSpec, ToolPool};
use baton::remote::{route, RemoteConfig};
use baton::{Engine, Event, ToolUse};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const BATON: &str = env!("CARGO_BIN_EXE_baton");
const TOKEN: &str = "bench-token";
const SESSIONS: usize = 8;
const CALLS_PER_SESSION: usize = 250;

struct Worker(Child, String);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(dir: &Path) -> Worker {
    std::fs::create_dir_all(dir).unwrap();
    let mut child = Command::new(BATON)
        .args([
            "mcp",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--permission-mode",
            "bypassPermissions",
        ])
        .arg("--cwd")
        .arg(dir)
        .arg("--state-dir")
        .arg(dir.join(".state"))
        .env("BATON_MCP_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(i) = line.find("http://") {
            break line[i..].trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Worker(child, url)
}

fn engine(dir: &Path, remote: Option<&RemoteConfig>, key: &str) -> Engine {
    let mut tools = baton::builtins::builtin_tools().unwrap();
    if let Some(config) = remote {
        tools = route(tools, config, key).unwrap();
    }
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: tools,
            ..Default::default()
        },
        &AllowAllUnsafe,
    );
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join(".state"))
        .policy(Arc::new(AllowAllUnsafe))
        .build()
        .expect("the engine builds")
}

/// A session's calls: mostly reads (run together), some writes (alone).
fn calls(dir: &Path, session: usize) -> Vec<ToolUse> {
    let file = dir.join(format!("s{session}.txt"));
    let f = file.display().to_string();
    (0..CALLS_PER_SESSION)
        .map(|i| {
            let id = format!("c{i}");
            match i % 10 {
                0 => ToolUse::new(
                    id,
                    "Write",
                    json!({"file_path": f, "content": format!("line {i}\n")}),
                ),
                1..=4 => ToolUse::new(id, "Read", json!({"file_path": f})),
                5 | 6 => ToolUse::new(id, "Grep", json!({"pattern": "line", "path": f})),
                _ => ToolUse::new(id, "Bash", json!({"command": format!("echo {i}")})),
            }
        })
        .collect()
}

/// Runs one session's batch; returns each call's latency.
async fn session(engine: &Engine, calls: Vec<ToolUse>) -> Vec<Duration> {
    let n = calls.len();
    let start = Instant::now();
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let mut latencies = Vec::with_capacity(n);
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { index, result } => {
                assert_eq!(index, latencies.len(), "results out of order");
                assert!(!result.is_error, "{}: {}", result.call_id, result.text());
                latencies.push(start.elapsed());
            }
            Event::Done(_) => break,
            _ => {}
        }
    }
    assert_eq!(latencies.len(), n, "a result is missing");
    latencies
}

async fn load(engines: &[(Engine, PathBuf)]) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let runs = engines
        .iter()
        .enumerate()
        .map(|(i, (e, dir))| session(e, calls(dir, i)));
    let all: Vec<Duration> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    (start.elapsed(), all)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(label: &str, took: Duration, mut lat: Vec<Duration>) {
    lat.sort();
    println!(
        "{label:>7}: {} calls in {:.0} ms = {:.0} calls/s; latency p50 {:.1} ms, p99 {:.1} ms",
        lat.len(),
        took.as_secs_f64() * 1e3,
        lat.len() as f64 / took.as_secs_f64(),
        percentile(&lat, 0.5).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
    );
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let workers: Vec<Worker> = (0..4)
        .map(|i| worker(&root.join(format!("w{i}"))))
        .collect();
    let config = RemoteConfig {
        workers: workers.iter().map(|w| w.1.clone()).collect(),
        token: Some(TOKEN.into()),
        tools: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
            .map(String::from)
            .to_vec(),
    };
    // Each remote session writes under its worker's directory: paths are
    // absolute on the worker, so give every session a directory that exists
    // on every worker (the same layout a sandbox image would have).
    let shared = root.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let _guard = rt.enter();
    let local: Vec<(Engine, PathBuf)> = (0..SESSIONS)
        .map(|i| (engine(&shared, None, &format!("l{i}")), shared.clone()))
        .collect();
    let remote: Vec<(Engine, PathBuf)> = (0..SESSIONS)
        .map(|i| {
            (
                engine(&shared, Some(&config), &format!("r{i}")),
                shared.clone(),
            )
        })
        .collect();

    let (t, lat) = rt.block_on(load(&local));
    report("local", t, lat);
    let (t, lat) = rt.block_on(load(&remote));
    report("remote", t, lat);

    let mut group = c.benchmark_group("remote_session_250_calls");
    group.sample_size(10);
    group.bench_function("local", |b| {
        b.iter(|| rt.block_on(session(&local[0].0, calls(&shared, 0))))
    });
    group.bench_function("remote", |b| {
        b.iter(|| rt.block_on(session(&remote[0].0, calls(&shared, 0))))
    });
    group.finish();
    for (e, _) in local.iter().chain(&remote) {
        e.shutdown();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
