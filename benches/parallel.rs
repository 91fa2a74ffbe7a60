//! Bench 2: parallel efficiency. 100 safe calls of 10 ms with cap 10 can at
//! best take 100 ms (ten rounds of ten); efficiency = 100 ms / measured.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

fn parallel(c: &mut Criterion) {
    let rt = common::runtime();
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    let run = || {
        let calls = common::calls("Wait", 100, json!({"ms": 10}));
        assert_eq!(rt.block_on(common::run_batch(&engine, calls)), 100);
    };
    // The same work without the engine: a semaphore of 10 permits and the
    // same precise 10 ms of work per call.
    let baseline = || {
        rt.block_on(async {
            let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(10));
            let tasks: Vec<_> = (0..100)
                .map(|_| {
                    let permits = permits.clone();
                    tokio::spawn(async move {
                        let _permit = permits.acquire_owned().await;
                        common::precise_work(Duration::from_millis(10)).await;
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        })
    };
    let mean_of = |f: &dyn Fn()| {
        let runs = 10;
        let start = Instant::now();
        for _ in 0..runs {
            f();
        }
        start.elapsed() / runs
    };
    let engine_mean = mean_of(&run);
    let base_mean = mean_of(&baseline);
    eprintln!(
        "parallel efficiency: engine {:.1} ms, tokio baseline {:.1} ms, ideal 100 ms -> {:.3} of ideal, {:.3} of baseline",
        engine_mean.as_secs_f64() * 1e3,
        base_mean.as_secs_f64() * 1e3,
        0.1 / engine_mean.as_secs_f64(),
        base_mean.as_secs_f64() / engine_mean.as_secs_f64()
    );
    let mut group = c.benchmark_group("parallel");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("engine_100x10ms_cap10", |b| b.iter(run));
    group.bench_function("tokio_baseline_100x10ms_cap10", |b| b.iter(baseline));
    group.finish();
}

criterion_group!(benches, parallel);
criterion_main!(benches);
