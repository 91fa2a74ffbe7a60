//! Remote execution on loopback: 4 `baton mcp serve --http` workers, one
//! host, 2,000 calls (reads, greps, shell, writes) spread over 8 sessions,
//! against the same calls executed locally in the same run.
//!
//! Prints throughput and per-call latency (p50/p99, from the batch's start to
//! the call's result) for both, then lets criterion time one 250-call session
//! batch each way, and finally runs the 2,000 remote calls once more with
//! one worker killed a third of the way through. A result missing or out of
//! order, or an error not caused by the killed worker, aborts the bench.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::permission::AllowAllUnsafe;
use baton::engine::{PoolSpec, ToolPool};
use baton::remote::{route, RemoteConfig};
use baton::{Engine, Event, ToolUse};
use baton_test_support::worker::Worker;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const TOKEN: &str = "bench-token";
const SESSIONS: usize = 8;
const CALLS_PER_SESSION: usize = 250;

fn engine(dir: &Path, remote: Option<&RemoteConfig>, key: &str) -> Engine {
    let mut tools = baton::BuiltinConfig::default().tools().unwrap();
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

/// Runs one session's batch; returns each call's latency and how many
/// results were errors naming `dead` (the worker killed mid-run) and the
/// other errors. Without a dead worker any error aborts the bench.
async fn session(
    engine: &Engine,
    calls: Vec<ToolUse>,
    dead: Option<&str>,
) -> (Vec<Duration>, usize, Vec<String>) {
    let n = calls.len();
    let start = Instant::now();
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let mut latencies = Vec::with_capacity(n);
    let mut errors = 0;
    let mut others = Vec::new();
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { index, result } => {
                assert_eq!(index, latencies.len(), "results out of order");
                if result.is_error {
                    let text = result.text();
                    match dead {
                        Some(url) if text.contains(url) => errors += 1,
                        // After a move, the new worker has not seen the
                        // session's reads: a Write may be refused until the
                        // file is read there. Counted and shown, not hidden.
                        Some(_) => others.push(format!("{}: {text}", result.call_id)),
                        None => panic!("{}: {text}", result.call_id),
                    }
                }
                latencies.push(start.elapsed());
            }
            Event::Done(_) => break,
            _ => {}
        }
    }
    assert_eq!(latencies.len(), n, "a result is missing");
    (latencies, errors, others)
}

async fn load(
    engines: &[(Engine, PathBuf)],
    dead: Option<&str>,
) -> (Duration, Vec<Duration>, usize, Vec<String>) {
    let start = Instant::now();
    let runs = engines
        .iter()
        .enumerate()
        .map(|(i, (e, dir))| session(e, calls(dir, i), dead));
    let mut all = Vec::new();
    let mut errors = 0;
    let mut others = Vec::new();
    for (lat, err, other) in futures::future::join_all(runs).await {
        all.extend(lat);
        errors += err;
        others.extend(other);
    }
    (start.elapsed(), all, errors, others)
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
    let mut workers: Vec<Worker> = (0..4)
        .map(|i| {
            Worker::start(
                env!("CARGO_BIN_EXE_baton"),
                &root.join(format!("w{i}")),
                TOKEN,
            )
        })
        .collect();
    let config = RemoteConfig {
        workers: workers.iter().map(|w| w.url.clone()).collect(),
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
    // Local and remote sessions write files of their own: a file another
    // session wrote must be read before it may be overwritten.
    let (local_dir, remote_dir) = (shared.join("local"), shared.join("remote"));
    std::fs::create_dir_all(&local_dir).unwrap();
    std::fs::create_dir_all(&remote_dir).unwrap();
    let local: Vec<(Engine, PathBuf)> = (0..SESSIONS)
        .map(|i| (engine(&shared, None, &format!("l{i}")), local_dir.clone()))
        .collect();
    let remote: Vec<(Engine, PathBuf)> = (0..SESSIONS)
        .map(|i| {
            (
                engine(&shared, Some(&config), &format!("r{i}")),
                remote_dir.clone(),
            )
        })
        .collect();

    let (t, lat, _, _) = rt.block_on(load(&local, None));
    report("local", t, lat);
    let (remote_took, lat, _, _) = rt.block_on(load(&remote, None));
    report("remote", remote_took, lat);

    let mut group = c.benchmark_group("remote_session_250_calls");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("local", |b| {
        b.iter(|| rt.block_on(session(&local[0].0, calls(&local_dir, 0), None)))
    });
    group.bench_function("remote", |b| {
        b.iter(|| rt.block_on(session(&remote[0].0, calls(&remote_dir, 0), None)))
    });
    group.finish();

    // The same 2,000 calls again, with the worker of session 0 killed
    // (SIGKILL) a third of the way through: every result must still come,
    // in order; the calls that were in flight on it are errors naming it,
    // the rest move on to the other workers.
    let pwd = rt.block_on(async {
        let mut batch = remote[0].0.open_batch().await.unwrap();
        batch
            .add(ToolUse::new("pwd", "Bash", json!({"command": "pwd"})))
            .unwrap();
        batch.end();
        let mut text = String::new();
        while let Some(e) = batch.next_event().await {
            if let Event::Result { result, .. } = e {
                text = result.text();
            }
        }
        text
    });
    let k = workers
        .iter()
        .position(|w| pwd.contains(w.dir.to_str().unwrap_or("?")))
        .unwrap_or_else(|| panic!("session 0 runs on no worker: {pwd}"));
    let dead = workers[k].url.clone();
    let mut victim = workers.swap_remove(k);
    let (t, lat, errors, others) = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(remote_took / 3);
            victim.kill();
        });
        rt.block_on(load(&remote, Some(&dead)))
    });
    report("killed", t, lat);
    println!(
        "  killed: every result came, in order; {errors} were errors naming the dead worker, \
         {} other errors{}",
        others.len(),
        others
            .first()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );
    for (e, _) in local.iter().chain(&remote) {
        e.shutdown();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
