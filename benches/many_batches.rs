//! Bench 3: 1,000 and 10,000 concurrent batches of 4 calls each: throughput
//! (calls per second, all batches in flight together) and memory per batch
//! (resident memory while every batch waits on a gate, divided by the
//! number of batches).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use baton::{Engine, Event};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::json;

async fn run_many(engine: &Engine, batches: usize, tool: &str) -> Vec<baton::Batch> {
    let mut open = Vec::with_capacity(batches);
    for _ in 0..batches {
        let batch = engine.open_batch().await.unwrap();
        for c in common::calls(tool, 4, json!({})) {
            batch.add(c).unwrap();
        }
        batch.end();
        open.push(batch);
    }
    open
}

async fn drain(batches: Vec<baton::Batch>) -> usize {
    let mut results = 0;
    for mut b in batches {
        while let Some(e) = b.next_event().await {
            match e {
                Event::Result { .. } => results += 1,
                Event::Done(_) => break,
                _ => {}
            }
        }
    }
    results
}

fn many(c: &mut Criterion) {
    let rt = common::runtime();
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    for n in [1_000usize, 10_000] {
        // Memory: every batch open with its 4 calls in flight.
        common::close_gate();
        let before = common::rss_bytes();
        let start = Instant::now();
        let open = rt.block_on(run_many(&engine, n, "Gated"));
        std::thread::sleep(Duration::from_millis(200));
        let peak = common::rss_bytes();
        common::release();
        let results = rt.block_on(drain(open));
        assert_eq!(results, n * 4);
        let elapsed = start.elapsed();
        eprintln!(
            "{n} batches x 4 gated calls: {:.0} bytes per batch in flight, all done in {:.1} ms",
            peak.saturating_sub(before) as f64 / n as f64,
            elapsed.as_secs_f64() * 1e3
        );
    }
    let mut group = c.benchmark_group("many_batches");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(4));
    for n in [1_000usize, 10_000] {
        group.throughput(Throughput::Elements((n * 4) as u64));
        group.bench_with_input(BenchmarkId::new("batches_of_4", n), &n, |b, &n| {
            b.iter(|| {
                let got = rt.block_on(async {
                    let open = run_many(&engine, n, "Noop").await;
                    drain(open).await
                });
                assert_eq!(got, n * 4);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, many);
criterion_main!(benches);
