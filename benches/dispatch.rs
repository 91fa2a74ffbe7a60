//! Bench 1: dispatch cost per no-op call through the whole engine
//! (validation on, allow-all permissions, actors, ordering, events) against
//! a minimal hand-written tokio equivalent (spawn + oneshot-style reply +
//! reorder buffer), for batches of 1, 10, 100 and 1000 calls.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use serde_json::json;

/// Both runtime flavours: the multi-threaded one pays cross-thread wake-ups
/// on every hand-off, the current-thread one shows the CPU cost alone.
fn dispatch(c: &mut Criterion) {
    for (flavour, rt) in [
        ("multi_thread", common::runtime()),
        (
            "current_thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        ),
    ] {
        dispatch_on(c, flavour, rt);
    }
}

fn dispatch_on(c: &mut Criterion, flavour: &str, rt: tokio::runtime::Runtime) {
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    let mut group = c.benchmark_group(format!("dispatch_{flavour}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in [1usize, 10, 100, 1000] {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("engine", n), &n, |b, &n| {
            // Building the calls is the host's work, not dispatch: set up
            // outside the measurement.
            b.iter_batched(
                || common::calls("Noop", n, json!({"n": 1})),
                |calls| {
                    // The host loop runs on the runtime, as in a real host.
                    let engine = engine.clone();
                    let got = rt
                        .block_on(rt.spawn(async move { common::run_batch(&engine, calls).await }))
                        .unwrap();
                    assert_eq!(got, n);
                },
                BatchSize::SmallInput,
            )
        });
        // The per-call pipeline alone (prepare + run, one call after the
        // other, no actors): what the engine's stages cost by themselves.
        let pipeline = engine.runtime().pipeline().clone();
        let session = engine.runtime().session().clone();
        let context = engine.runtime().context();
        group.bench_with_input(BenchmarkId::new("pipeline_only", n), &n, |b, &n| {
            b.iter_batched(
                || common::calls("Noop", n, json!({"n": 1})),
                |calls| rt.block_on(one_by_one(&pipeline, &context, &session, calls)),
                BatchSize::SmallInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("tokio_baseline", n), &n, |b, &n| {
            b.iter(|| assert_eq!(rt.block_on(rt.spawn(common::tokio_batch(n))).unwrap(), n))
        });
    }
    group.finish();
}

/// `calls` through the per-call pipeline alone, one after the other (no
/// actors); every one must succeed.
async fn one_by_one(
    pipeline: &baton::engine::Pipeline,
    context: &baton::engine::Context,
    session: &std::sync::Arc<baton::engine::Session>,
    calls: Vec<baton::ToolUse>,
) {
    for call in calls {
        let ctx = baton::engine::ToolContext::standalone(
            call.id.clone(),
            context.clone(),
            session.clone(),
        );
        let r = pipeline.run(pipeline.prepare(call), ctx).await;
        assert!(!r.is_error);
    }
}

/// What recording metrics costs per call: the pipeline alone, 100 calls,
/// without a recorder (a library host that installed none) and with the
/// Prometheus recorder `baton mcp serve --http` installs. Thread-local
/// recorder on a current-thread runtime, so the process-wide one stays
/// unset for the other groups.
fn metrics_recording(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    let pipeline = engine.runtime().pipeline().clone();
    let session = engine.runtime().session().clone();
    let context = engine.runtime().context();
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let mut group = c.benchmark_group("metrics_recording");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(100));
    let run =
        |calls: Vec<baton::ToolUse>| rt.block_on(one_by_one(&pipeline, &context, &session, calls));
    group.bench_function("no_recorder", |b| {
        b.iter_batched(
            || common::calls("Noop", 100, json!({"n": 1})),
            &run,
            BatchSize::SmallInput,
        )
    });
    group.bench_function("prometheus", |b| {
        b.iter_batched(
            || common::calls("Noop", 100, json!({"n": 1})),
            |calls| metrics::with_local_recorder(&recorder, || run(calls)),
            BatchSize::SmallInput,
        )
    });
    // The recording alone, per call, without a recorder: what a library
    // host that installed none pays (one call's counter, six phase
    // timings, the queue and running gauges).
    group.throughput(Throughput::Elements(1));
    group.bench_function("record_one_call_no_recorder", |b| {
        use baton::engine::metrics as m;
        b.iter(|| {
            let running = m::Queued::enter().start();
            for phase in ["queue", "validate", "hooks", "permission", "exec"] {
                m::phase(phase, Duration::from_micros(3));
            }
            drop(running);
            m::call_finished(Some("Noop"), &baton::Outcome::Success);
        })
    });
    group.finish();
}

criterion_group!(benches, dispatch, metrics_recording);
criterion_main!(benches);
