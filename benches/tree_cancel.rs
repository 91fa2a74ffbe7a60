//! Bench 4: cancelling a nested tree (depth 4, fan-out 4: 84 nested
//! batches, 256 leaves waiting to be cancelled). Measured: from the
//! interrupt of the root batch until its done event, which comes only once
//! every nested batch, down to every leaf, has its result.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use baton::{Engine, Event, InterruptKind, ToolUse};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

const FAN_OUT: usize = 4;
const DEPTH: u32 = 4;

/// The input of a Nest call whose subtree has `levels` levels below it.
fn subtree(levels: u32) -> Value {
    let child = if levels == 1 {
        json!({"name": "Leaf", "input": {}})
    } else {
        json!({"name": "Nest", "input": subtree(levels - 1)})
    };
    json!({"calls": vec![child; FAN_OUT]})
}

async fn one_cancel(engine: &Engine) -> Duration {
    let leaves = FAN_OUT.pow(DEPTH);
    let before = common::LEAVES_STARTED.load(Ordering::SeqCst);
    let done_before = common::LEAVES_DONE.load(Ordering::SeqCst);
    let mut batch = engine.open_batch().await.unwrap();
    for i in 0..FAN_OUT {
        batch
            .add(ToolUse::new(format!("root{i}"), "Nest", subtree(DEPTH - 1)))
            .unwrap();
    }
    batch.end();
    while common::LEAVES_STARTED.load(Ordering::SeqCst) - before < leaves {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let start = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    while let Some(e) = batch.next_event().await {
        if let Event::Done(_) = e {
            break;
        }
    }
    let took = start.elapsed();
    assert_eq!(
        common::LEAVES_DONE.load(Ordering::SeqCst) - done_before,
        leaves
    );
    batch.quiescent().await;
    took
}

fn tree(c: &mut Criterion) {
    let rt = common::runtime();
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    let samples: Vec<Duration> = (0..10).map(|_| rt.block_on(one_cancel(&engine))).collect();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let max = samples.iter().max().copied().unwrap_or_default();
    eprintln!(
        "tree cancellation (depth {DEPTH}, fan-out {FAN_OUT}): mean {:.2} ms, max {:.2} ms",
        mean.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    let mut group = c.benchmark_group("tree_cancel");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("depth4_fanout4", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| rt.block_on(one_cancel(&engine))).sum())
    });
    group.finish();
}

criterion_group!(benches, tree);
criterion_main!(benches);
