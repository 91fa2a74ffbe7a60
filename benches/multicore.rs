//! Bench: calls per second across cores (issue 26).
//!
//! Many sessions, each sending batches of no-op calls one after the other
//! (as a host's turns do), all sessions at once. The same work runs on a
//! tokio multi-thread runtime of 1, 2, 4, … worker threads up to every
//! core of the machine, so the table shows how throughput scales. Nothing
//! here is fixed to this machine: the levels and the number of sessions come
//! from `available_parallelism`, so the bench runs unchanged on 16 cores.
//!
//! Beside each engine figure, the same structure written by hand with tokio
//! (a task per call, results over a channel, a reorder buffer) runs on the
//! same runtime: its scaling is what the machine allows, so the engine's
//! scaling is read against it rather than against the ideal.
//!
//! Knobs (environment): `BATON_MC_SESSIONS` (default 4 × cores),
//! `BATON_MC_BATCHES` (batches per session, default 50),
//! `BATON_MC_CALLS` (calls per batch, default 64), `BATON_MC_ROUNDS`
//! (repetitions per level, best kept; default 3). Timing is printed, never
//! asserted.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use serde_json::json;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

/// 1, 2, 4, … up to `cores`, and `cores` itself when it is no power of two.
fn levels(cores: usize) -> Vec<usize> {
    let mut out: Vec<usize> = std::iter::successors(Some(1usize), |&n| Some(n * 2))
        .take_while(|&n| n <= cores)
        .collect();
    if out.last() != Some(&cores) {
        out.push(cores);
    }
    out
}

struct Shape {
    sessions: usize,
    batches: usize,
    calls: usize,
}

impl Shape {
    fn total(&self) -> usize {
        self.sessions * self.batches * self.calls
    }
}

/// One session's batches through the engine, one after the other.
async fn engine_session(engine: baton::Engine, shape: (usize, usize)) -> usize {
    let (batches, calls) = shape;
    let mut done = 0;
    for _ in 0..batches {
        done += common::run_batch(&engine, common::calls("Noop", calls, json!({}))).await;
    }
    done
}

async fn tokio_session(shape: (usize, usize)) -> usize {
    let (batches, calls) = shape;
    let mut done = 0;
    for _ in 0..batches {
        done += common::tokio_batch(calls).await;
    }
    done
}

/// Best of `rounds` runs of all sessions at once; calls per second.
fn measure(
    rt: &tokio::runtime::Runtime,
    shape: &Shape,
    rounds: usize,
    engines: Option<&[baton::Engine]>,
) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let t0 = Instant::now();
        let got: usize = rt.block_on(async {
            let mut tasks = Vec::with_capacity(shape.sessions);
            for s in 0..shape.sessions {
                let sh = (shape.batches, shape.calls);
                tasks.push(match engines {
                    Some(e) => tokio::spawn(engine_session(e[s].clone(), sh)),
                    None => tokio::spawn(tokio_session(sh)),
                });
            }
            let mut sum = 0;
            for t in tasks {
                sum += t.await.unwrap_or(0);
            }
            sum
        });
        let took = t0.elapsed();
        assert_eq!(got, shape.total(), "every call has its result");
        best = best.min(took);
    }
    shape.total() as f64 / best.as_secs_f64()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shape = Shape {
        sessions: knob("BATON_MC_SESSIONS", 4 * cores),
        batches: knob("BATON_MC_BATCHES", 50),
        calls: knob("BATON_MC_CALLS", 64),
    };
    let rounds = knob("BATON_MC_ROUNDS", 3);
    println!(
        "multicore: {cores} cores; {} sessions x {} batches x {} no-op calls = {} calls per run, best of {rounds}; load average {}",
        shape.sessions,
        shape.batches,
        shape.calls,
        shape.total(),
        loadavg()
    );
    println!("| workers | engine calls/s | scaling | tokio baseline calls/s | scaling | engine / baseline |");
    println!("|---|---|---|---|---|---|");
    let mut first: Option<(f64, f64)> = None;
    for workers in levels(cores) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let engines: Vec<baton::Engine> = {
            let _g = rt.enter();
            (0..shape.sessions).map(|_| common::engine(10)).collect()
        };
        let engine = measure(&rt, &shape, rounds, Some(&engines));
        let base = measure(&rt, &shape, rounds, None);
        let (e1, b1) = *first.get_or_insert((engine, base));
        println!(
            "| {workers} | {:.0} | {:.2}x | {:.0} | {:.2}x | {:.3} |",
            engine,
            engine / e1,
            base,
            base / b1,
            engine / base
        );
    }
    println!("load average after: {}", loadavg());
}
