//! Subagent benches (SPEC §15), with the scripted model loop of the tests
//! and real Bash processes:
//! - 20 subagents in parallel, each running 10 `echo` calls, against one
//!   flat batch of the same 200 calls, in the same run;
//! - cancelling a depth-3 tree of subagents (2 × 2 × 1, a sleeping Bash at
//!   each leaf) from the root, until every result is in and every leaf
//!   process is gone.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::subagent::{SubagentLimits, SubagentService};
use baton::engine::AllowAllUnsafe;
use baton::{Engine, Event, InterruptKind, ToolUse};
use baton_test_support::procs::{alive, pids_in};
use baton_test_support::scripted::*;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;

fn engine(dir: &std::path::Path) -> Engine {
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join("state"))
        .subagent_service(SubagentService::with_limits(
            Scripted::new(),
            SubagentLimits {
                max_depth: 3,
                max_concurrent: 100,
            },
        ))
        .allow_all_unsafe()
        .build()
        .expect("the engine builds")
}

fn to_call(v: &Value) -> ToolUse {
    ToolUse::new(
        v["id"].as_str().unwrap_or_default(),
        v["name"].as_str().unwrap_or_default(),
        v["input"].clone(),
    )
}

async fn run(engine: &Engine, calls: Vec<ToolUse>) -> Duration {
    let start = Instant::now();
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let mut errors = 0;
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { result, .. } => errors += usize::from(result.is_error),
            Event::Done(_) => break,
            _ => {}
        }
    }
    assert_eq!(errors, 0);
    batch.quiescent().await;
    start.elapsed()
}

fn tree_of_agents() -> Vec<ToolUse> {
    (0..20)
        .map(|a| {
            let calls = (0..10)
                .map(|i| bash(&format!("a{a}b{i}"), "echo x"))
                .collect();
            to_call(&agent(&format!("a{a}"), script(calls, "ok")))
        })
        .collect()
}

fn flat() -> Vec<ToolUse> {
    (0..200)
        .map(|i| to_call(&bash(&format!("b{i}"), "echo x")))
        .collect()
}

async fn cancel_tree(engine: &Engine, dir: &std::path::Path, round: usize) -> Duration {
    let pidfile = dir.join(format!("pids{round}"));
    let leaf = |tag: &str| {
        script(
            vec![bash(
                &format!("{tag}-x"),
                &format!("echo $$ >> {}; exec sleep 30", pidfile.display()),
            )],
            "leaf",
        )
    };
    let mid = |tag: &str| script(vec![agent(&format!("{tag}-l"), leaf(tag))], "mid");
    let top = |tag: &str| {
        script(
            vec![
                agent(&format!("{tag}-m1"), mid(&format!("{tag}1"))),
                agent(&format!("{tag}-m2"), mid(&format!("{tag}2"))),
            ],
            "top",
        )
    };
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(to_call(&agent("A", top("A")))).unwrap();
    batch.add(to_call(&agent("B", top("B")))).unwrap();
    batch.end();
    while pids_in(&pidfile).len() < 4 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let leaves = pids_in(&pidfile);
    let start = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    while let Some(e) = batch.next_event().await {
        if let Event::Done(_) = e {
            break;
        }
    }
    while leaves.iter().any(|p| alive(*p)) {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let took = start.elapsed();
    batch.quiescent().await;
    took
}

fn subagents(c: &mut Criterion) {
    let rt = common::runtime();
    let dir = tempfile::tempdir().unwrap();
    let engine = {
        let _g = rt.enter();
        engine(dir.path())
    };
    let engine = Arc::new(engine);

    let mut group = c.benchmark_group("subagents");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    let (mut tree_total, mut flat_total) = (Duration::ZERO, Duration::ZERO);
    group.bench_function("20_agents_x_10_bash", |b| {
        b.iter_custom(|iters| {
            let t: Duration = (0..iters)
                .map(|_| rt.block_on(run(&engine, tree_of_agents())))
                .sum();
            tree_total += t / iters as u32;
            t
        })
    });
    group.bench_function("flat_200_bash", |b| {
        b.iter_custom(|iters| {
            let t: Duration = (0..iters).map(|_| rt.block_on(run(&engine, flat()))).sum();
            flat_total += t / iters as u32;
            t
        })
    });
    group.finish();
    eprintln!(
        "20 agents x 10 Bash vs a flat batch of 200: {:.3} of the flat batch's time",
        tree_total.as_secs_f64() / flat_total.as_secs_f64().max(1e-9)
    );

    let samples: Vec<Duration> = (0..10)
        .map(|i| rt.block_on(cancel_tree(&engine, dir.path(), i)))
        .collect();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let max = samples.iter().max().copied().unwrap_or_default();
    eprintln!(
        "cancel a depth-3 tree of subagents (4 Bash leaves) until every result and process is gone: mean {:.2} ms, max {:.2} ms",
        mean.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
}

criterion_group!(benches, subagents);
criterion_main!(benches);
