//! Bench: interactive sessions and monitors (issue 21), each beside its
//! baseline in the same run.
//!
//! 1. `write_stdin` round trip: a line written to `cat` on a PTY session
//!    until its echo is back, through the whole pipeline (validation,
//!    judgement, the session store, the 50 ms settle that tells an answer
//!    from a pause), against a bare PTY echo loop (openpty, `cat`, write,
//!    read until the line is back).
//! 2. Monitor on a 1M-line flood (`seq 1 1000000`): time until the monitor
//!    reports its end, lines per second, and the growth of the process's
//!    peak memory, against `seq 1 1000000 > /dev/null` run by bash.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]
mod common;

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::call::CallResult;
use baton::engine::{Context, Pipeline, Session, ToolContext, ToolPool, ToolUse};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

struct Harness {
    _dir: tempfile::TempDir,
    cwd: std::path::PathBuf,
    session: Arc<Session>,
    pipeline: Pipeline,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut tools = baton_tools::exec::tools(&Default::default()).expect("exec tools");
        tools.push(baton_tools::monitor::tool().expect("monitor"));
        Harness {
            cwd: dir.path().to_path_buf(),
            session: Session::new("bench", dir.path().join("state")),
            _dir: dir,
            pipeline: Pipeline::allow_all_unsafe(ToolPool::of(tools)),
        }
    }

    async fn run(&self, name: &str, input: Value) -> CallResult {
        let ctx = ToolContext::standalone("c", Context::new(&self.cwd), self.session.clone());
        let prepared = self.pipeline.prepare(ToolUse::new("c", name, input));
        self.pipeline.run(prepared, ctx).await
    }
}

fn text(r: &CallResult) -> String {
    r.content.iter().filter_map(|b| b.as_text()).collect()
}

fn round_trip(c: &mut Criterion) {
    let rt = common::runtime();
    let h = Harness::new();
    let reply = rt.block_on(h.run(
        "exec_command",
        json!({"cmd": "cat", "tty": true, "yield_time_ms": 300}),
    ));
    let id: i32 = text(&reply)
        .lines()
        .find_map(|l| l.strip_prefix("Process running with session ID "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a session id");

    // The baseline: a PTY and cat, driven by hand.
    let (mut m, mut sl) = (0, 0);
    // SAFETY: openpty into our own integers; both fds are owned below.
    let rc = unsafe {
        libc::openpty(
            &mut m,
            &mut sl,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: fresh descriptors nobody else owns.
    let (master_fd, slave) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::fs::File::from_raw_fd(m),
            std::fs::File::from_raw_fd(sl),
        )
    };
    let mut child = std::process::Command::new("cat")
        .stdin(slave.try_clone().expect("dup"))
        .stdout(slave.try_clone().expect("dup"))
        .stderr(slave)
        .spawn()
        .expect("cat");
    let mut master = master_fd;

    let mut group = c.benchmark_group("interactive/round_trip");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("bare_pty_echo", |b| {
        let mut buf = [0u8; 4096];
        b.iter(|| {
            master.write_all(b"ping\n").expect("write");
            let mut got = Vec::new();
            // The terminal echoes the line, then cat prints it: two copies.
            while got.windows(4).filter(|w| w == b"ping").count() < 2 {
                let n = master.read(&mut buf).expect("read");
                got.extend_from_slice(&buf[..n]);
            }
        })
    });
    group.bench_function("write_stdin", |b| {
        b.iter(|| {
            let r = rt.block_on(h.run(
                "write_stdin",
                json!({"session_id": id, "chars": "ping\n", "yield_time_ms": 5000}),
            ));
            assert!(text(&r).contains("ping"), "{}", text(&r));
        })
    });
    group.finish();
    let _ = child.kill();
    let _ = child.wait();
    rt.block_on(baton_tools::exec::stop_all(&h.session));
}

/// Peak resident memory of this process, in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn flood(c: &mut Criterion) {
    let rt = common::runtime();
    let h = Harness::new();
    let mut group = c.benchmark_group("interactive/monitor_1m_lines");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("bash_seq_to_dev_null", |b| {
        b.iter(|| {
            let status = std::process::Command::new("bash")
                .args(["-c", "seq 1 1000000 > /dev/null"])
                .status()
                .expect("bash");
            assert!(status.success());
        })
    });
    let before = peak_kib();
    let mut rates = Vec::new();
    group.bench_function("monitor", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut rx = h.session.subscribe();
                let start = Instant::now();
                let r = rt.block_on(h.run(
                    "Monitor",
                    json!({"description": "flood", "command": "seq 1 1000000"}),
                ));
                assert!(!r.is_error, "{}", text(&r));
                let lines = rt.block_on(async {
                    loop {
                        match rx.recv().await {
                            Ok(n) if n.kind == "monitor_finished" => {
                                break n.data.and_then(|d| d["lines"].as_u64()).unwrap_or(0)
                            }
                            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                            Err(_) => break 0,
                        }
                    }
                });
                let took = start.elapsed();
                assert_eq!(lines, 1_000_000);
                rates.push(1_000_000.0 / took.as_secs_f64());
                total += took;
            }
            total
        })
    });
    group.finish();
    rates.sort_by(f64::total_cmp);
    let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
    eprintln!(
        "monitor: median {:.0} lines/s over {} runs; peak memory grew by {} KiB over them",
        median,
        rates.len(),
        peak_kib().saturating_sub(before)
    );
}

criterion_group!(benches, round_trip, flood);
criterion_main!(benches);
