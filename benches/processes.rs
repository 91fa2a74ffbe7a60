//! Bench: real processes (issue 9).
//!
//! 1. Fan-out: N `Bash` calls of `true` in one batch (all allowed to run at
//!    once) against the baseline of N `bash -c true` spawned directly by
//!    tokio and awaited together, in the same run. Target ≤ 1.3× at N = 64
//!    and 256.
//! 2. The OS sandbox (issue 20): the same fan-out with every shell under
//!    the read-only floor (the default rules judge `true` read-only) and
//!    under the `sandbox` settings (every command sandboxed), beside the
//!    unconfined engine and the tokio baseline, interleaved in one run; and
//!    one call at a time, where the per-call cost shows. Goals: fan-out
//!    ≤ 1.3× the baseline, the sandbox ≤ 1.2× an unconfined call.
//! 3. Interrupt: four shell calls running `sleep & sleep; wait` (four
//!    batches); the time from the interrupt until every result is out.
//!    Target ≤ 50 ms, with the machine's own init reaping the orphans.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use baton::{Engine, Event, InterruptKind, ToolUse};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

/// Which confinement the bench's shells run under.
#[derive(Clone, Copy, Debug)]
enum Confine {
    /// Allow-all rules: nothing confines.
    None,
    /// The default rules: `true` is judged read-only and runs under the
    /// floor.
    Floor,
    /// Allow-all rules plus the `sandbox` settings: every command
    /// sandboxed (writes in the workspace, no network).
    Settings,
}

fn confined_engine(cap: usize, confine: Confine) -> Engine {
    use baton::engine::confine::Confinement;
    use baton::engine::permission::RulePolicy;
    use baton::engine::settings::SandboxConfig;
    let builder = common::builder(common::builtin_pool(), "proc", cap);
    let builder = match confine {
        Confine::None => builder.allow_all_unsafe(),
        Confine::Floor => builder.policy(std::sync::Arc::new(RulePolicy::new())),
        Confine::Settings => {
            builder
                .allow_all_unsafe()
                .confinement(Confinement::detect().with_sandbox(SandboxConfig {
                    enabled: true,
                    write_roots: vec![std::env::temp_dir()],
                    ..SandboxConfig::default()
                }))
        }
    };
    builder.build().expect("the engine builds")
}

/// N `true` calls through `engine`, one batch; every one must succeed (a
/// sandbox that failed to start would be fast and prove nothing).
fn fan_out(rt: &tokio::runtime::Runtime, engine: &Engine, n: usize) {
    let calls = common::calls("Bash", n, json!({"command": "true"}));
    let results = rt.block_on(async {
        let batch = engine.open_batch().await.unwrap();
        for c in calls {
            batch.add(c).unwrap();
        }
        batch.finish().await.0
    });
    assert_eq!(results.len(), n);
    if let Some(r) = results
        .iter()
        .find(|r| r.is_error && !r.text().contains("Cancelled automatically"))
    {
        panic!("a call failed: {}", r.text());
    }
    assert!(results.iter().all(|r| !r.is_error));
}

fn shell_engine(cap: usize) -> Engine {
    common::builder(common::builtin_pool(), "proc", cap)
        .allow_all_unsafe()
        .build()
        .expect("the engine builds")
}

async fn baseline(n: usize) {
    let children: Vec<_> = (0..n)
        .map(|_| {
            tokio::spawn(async {
                tokio::process::Command::new("bash")
                    .arg("-c")
                    .arg("true")
                    .status()
                    .await
                    .unwrap()
            })
        })
        .collect();
    for c in children {
        assert!(c.await.unwrap().success());
    }
}

/// Rounds of the interleaved fan-out measurement (`BATON_FANOUT_ROUNDS`,
/// default 1); with `BATON_FANOUT_ONLY` set, only those rounds run.
fn fan_out_rounds() -> usize {
    std::env::var("BATON_FANOUT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v: &usize| v > 0)
        .unwrap_or(1)
}

/// User + system time of this process and of its children waited for so
/// far (the shells of both the engine and the baseline).
fn cpu_time() -> Duration {
    let of = |who| {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let t = |v: libc::timeval| Duration::new(v.tv_sec as u64, v.tv_usec as u32 * 1000);
        t(u.ru_utime) + t(u.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn mean_of(runs: u32, f: &dyn Fn()) -> Duration {
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    start.elapsed() / runs
}

async fn interrupt_four(engine: &Engine) -> Duration {
    let mut batches = Vec::new();
    for i in 0..4 {
        let batch = engine.open_batch().await.unwrap();
        batch
            .add(ToolUse::new(
                format!("s{i}"),
                "Bash",
                json!({"command": "sleep 100 & sleep 100; wait"}),
            ))
            .unwrap();
        batch.end();
        batches.push(batch);
    }
    // Let the shells start their children.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t0 = Instant::now();
    for b in &batches {
        b.interrupt(InterruptKind::Cancel);
    }
    for b in &mut batches {
        while let Some(e) = b.next_event().await {
            if matches!(e, Event::Done(_)) {
                break;
            }
        }
    }
    t0.elapsed()
}

/// The runtime of the host: as many workers as `baton` itself uses
/// (`process::runtime_workers`), or `BATON_BENCH_WORKERS`. Engine and
/// baseline share it: both start processes from its workers.
fn host_runtime() -> tokio::runtime::Runtime {
    let workers = std::env::var("BATON_BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v: &usize| v > 0)
        .unwrap_or_else(baton::engine::process::runtime_workers);
    eprintln!("runtime: {workers} worker threads");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn processes(c: &mut Criterion) {
    let rt = host_runtime();
    let mut group = c.benchmark_group("processes");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    // First as a library host that did not opt in, then as the `baton` CLI
    // runs: a child subreaper with the orphan sentinel, which lets a tree
    // whose shell ended be checked from its adopted orphans instead of a
    // scan of every process.
    for (mode, n) in [
        ("library", 64usize),
        ("library", 256),
        ("cli", 64),
        ("cli", 256),
    ] {
        if mode == "cli" {
            assert!(baton::engine::process::install_orphan_guard().is_empty());
        }
        let engine = {
            let _g = rt.enter();
            shell_engine(n)
        };
        let run = || {
            let calls = common::calls("Bash", n, json!({"command": "true"}));
            assert_eq!(rt.block_on(common::run_batch(&engine, calls)), n);
        };
        let base = || rt.block_on(baseline(n));
        // Interleaved, so load changes on the shared machine hit both; CPU
        // time of this process and its reaped shells beside the wall time.
        for _ in 0..fan_out_rounds() {
            let (mut e, mut b) = (Duration::ZERO, Duration::ZERO);
            let (mut ec, mut bc) = (Duration::ZERO, Duration::ZERO);
            for _ in 0..5 {
                let cpu = cpu_time();
                e += mean_of(1, &run);
                ec += cpu_time() - cpu;
                let cpu = cpu_time();
                b += mean_of(1, &base);
                bc += cpu_time() - cpu;
            }
            eprintln!(
                "fan-out N={n} ({mode}): engine {:.1} ms (CPU {:.1} ms), tokio `bash -c true` baseline {:.1} ms (CPU {:.1} ms) -> {:.2}x wall, {:.2}x CPU; load {}",
                e.as_secs_f64() * 1e3 / 5.0,
                ec.as_secs_f64() * 1e3 / 5.0,
                b.as_secs_f64() * 1e3 / 5.0,
                bc.as_secs_f64() * 1e3 / 5.0,
                e.as_secs_f64() / b.as_secs_f64(),
                ec.as_secs_f64() / bc.as_secs_f64(),
                loadavg()
            );
        }
        if std::env::var_os("BATON_FANOUT_ONLY").is_some() {
            continue;
        }
        group.bench_function(format!("engine_bash_true_x{n}_{mode}"), |bch| bch.iter(run));
        group.bench_function(format!("tokio_bash_true_x{n}_{mode}"), |bch| bch.iter(base));
    }
    // The sandbox, interleaved with its baselines (the orphan guard is
    // installed by now, as the CLI runs).
    if std::env::var_os("BATON_FANOUT_ONLY").is_some() {
        group.finish();
        return;
    }
    if baton::engine::sandbox::support().usable()
        && baton::engine::sandbox::support().user_namespaces
    {
        for (n, cap) in [(64usize, 64usize), (32, 1)] {
            let engines: Vec<(Confine, Engine)> =
                [Confine::None, Confine::Floor, Confine::Settings]
                    .into_iter()
                    .map(|c| {
                        let _g = rt.enter();
                        (c, confined_engine(cap, c))
                    })
                    .collect();
            let mut totals = [Duration::ZERO; 4];
            for _ in 0..5 {
                for (i, (_, engine)) in engines.iter().enumerate() {
                    totals[i] += mean_of(1, &|| fan_out(&rt, engine, n));
                }
                totals[3] += mean_of(1, &|| rt.block_on(baseline(n)));
            }
            let ms = |d: Duration| d.as_secs_f64() * 1e3 / 5.0;
            let label = if cap == 1 {
                "one at a time"
            } else {
                "all at once"
            };
            eprintln!(
                "sandbox, N={n} {label}: unconfined {:.1} ms, floor {:.1} ms ({:.2}x), settings sandbox {:.1} ms ({:.2}x); tokio baseline {:.1} ms (floor {:.2}x, settings {:.2}x)",
                ms(totals[0]),
                ms(totals[1]),
                totals[1].as_secs_f64() / totals[0].as_secs_f64(),
                ms(totals[2]),
                totals[2].as_secs_f64() / totals[0].as_secs_f64(),
                ms(totals[3]),
                totals[1].as_secs_f64() / totals[3].as_secs_f64(),
                totals[2].as_secs_f64() / totals[3].as_secs_f64(),
            );
            for (confine, engine) in &engines {
                group.bench_function(format!("sandbox_{confine:?}_true_x{n}_cap{cap}"), |bch| {
                    bch.iter(|| fan_out(&rt, engine, n))
                });
            }
        }
    }
    let engine = {
        let _g = rt.enter();
        shell_engine(10)
    };
    let mut times: Vec<Duration> = (0..10)
        .map(|_| rt.block_on(interrupt_four(&engine)))
        .collect();
    times.sort();
    eprintln!(
        "interrupt of 4 running shell calls: median {:.1} ms, max {:.1} ms",
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
    group.finish();
}

criterion_group!(benches, processes);
criterion_main!(benches);
