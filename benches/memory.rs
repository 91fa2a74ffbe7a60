//! Bench: memory per queued call, counted by the allocator.
//!
//! Resident memory (what `many_batches` reports) moves in pages and keeps
//! whatever the allocator cached, so it cannot attribute bytes to a call.
//! Here a counting global allocator gives the live heap bytes exactly:
//! one batch of 10,000 no-op calls held behind gated calls that fill every
//! slot, so all the rest wait in the queue. The baseline is the same number
//! of parked tokio tasks, each waiting on a oneshot (the smallest thing a
//! hand-written host could keep per pending call).
//!
//! The figure is printed (and the number of allocations per call); criterion
//! is not used because nothing here is timed.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// Bytes ever allocated (not live): what the dispatch path asks of malloc.
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator unchanged and only
// adds relaxed counter updates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

const CALLS: usize = 10_000;
/// Gated calls that fill every slot, so the no-op calls stay queued.
const GATED: usize = 64;

/// Live bytes per parked tokio task waiting on a oneshot.
fn baseline(rt: &tokio::runtime::Runtime) -> (f64, f64) {
    let before = live();
    let allocs = ALLOCS.load(Ordering::Relaxed);
    let mut senders = Vec::with_capacity(CALLS);
    let mut tasks = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        senders.push(tx);
        tasks.push(rt.spawn(async move { rx.await.ok() }));
    }
    std::thread::sleep(Duration::from_millis(100));
    let per = (live() - before) as f64 / CALLS as f64;
    let per_allocs = (ALLOCS.load(Ordering::Relaxed) - allocs) as f64 / CALLS as f64;
    for tx in senders {
        let _ = tx.send("ok".into());
    }
    rt.block_on(async {
        for t in tasks {
            let _ = t.await;
        }
    });
    (per, per_allocs)
}

/// Live bytes per queued call of one 10,000-call batch, events drained.
fn engine(rt: &tokio::runtime::Runtime, input: &serde_json::Value) -> (f64, f64) {
    let engine = {
        let _g = rt.enter();
        common::engine(GATED)
    };
    common::close_gate();
    let (batch, drained) = rt.block_on(async {
        let mut batch = engine.open_batch().await.unwrap();
        for c in common::calls("Gated", GATED, json!({})) {
            batch.add(c).unwrap();
        }
        // Let the gated calls start before measuring the queue.
        tokio::time::sleep(Duration::from_millis(200)).await;
        while let Ok(Some(_)) =
            tokio::time::timeout(Duration::from_millis(20), batch.next_event()).await
        {}
        (batch, ())
    });
    let () = drained;
    let before = live();
    let allocs = ALLOCS.load(Ordering::Relaxed);
    let mut batch = batch;
    rt.block_on(async {
        let calls: Vec<_> = (0..CALLS)
            .map(|i| baton::ToolUse::new(format!("q{i}"), "Noop", input.clone()))
            .collect();
        for c in calls {
            batch.add(c).unwrap();
        }
        // Drain the `queued` events as a host would, then measure.
        tokio::time::sleep(Duration::from_millis(300)).await;
        while let Ok(Some(_)) =
            tokio::time::timeout(Duration::from_millis(50), batch.next_event()).await
        {}
    });
    let per = (live() - before) as f64 / CALLS as f64;
    let per_allocs = (ALLOCS.load(Ordering::Relaxed) - allocs) as f64 / CALLS as f64;
    common::release();
    batch.end();
    let results = rt.block_on(common::drain(&mut batch));
    assert!(results >= CALLS, "every queued call gets its result");
    (per, per_allocs)
}

/// Allocations and bytes allocated per no-op call dispatched to its result:
/// one 1,000-call batch run to its done event on a current-thread runtime
/// (the `dispatch` bench's slow case), after one batch to warm up. The
/// queued figure above leaves out everything a call allocates once it
/// runs; this is where the dispatch path's allocations show.
fn dispatched(input: &serde_json::Value) -> (f64, f64) {
    const N: usize = 1_000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let engine = {
        let _g = rt.enter();
        common::engine(10)
    };
    let run = |calls| {
        let engine = engine.clone();
        rt.block_on(rt.spawn(async move { common::run_batch(&engine, calls).await }))
            .expect("the batch task")
    };
    assert_eq!(run(common::calls("Noop", N, input.clone())), N);
    let calls = common::calls("Noop", N, input.clone());
    let allocs = ALLOCS.load(Ordering::Relaxed);
    let bytes = ALLOCATED.load(Ordering::Relaxed);
    assert_eq!(run(calls), N);
    let per_allocs = (ALLOCS.load(Ordering::Relaxed) - allocs) as f64 / N as f64;
    let per_bytes = (ALLOCATED.load(Ordering::Relaxed) - bytes) as f64 / N as f64;
    (per_allocs, per_bytes)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    for (what, input) in [("no-op {}", json!({})), ("{\"n\": 1}", json!({"n": 1}))] {
        let (allocs, bytes) = dispatched(&input);
        println!(
            "per dispatched call, input {what} (1000 calls, current-thread): \
             {allocs:.1} allocations, {bytes:.0} B allocated"
        );
    }
    let rt = common::runtime();
    let (base, base_allocs) = baseline(&rt);
    // An empty input (a no-op call) and a one-field object: serde_json
    // keeps objects in a B-tree whose first node alone is 632 bytes, so the
    // second shows what each copy of an input costs.
    for (what, input) in [("no-op {}", json!({})), ("{\"n\": 1}", json!({"n": 1}))] {
        let (baton, baton_allocs) = engine(&rt, &input);
        println!(
            "memory per queued call, input {what} ({CALLS} calls): Baton {baton:.0} B \
             ({baton_allocs:.1} allocations); parked tokio task + oneshot {base:.0} B \
             ({base_allocs:.1}); ratio {:.1}x",
            baton / base
        );
    }
}
