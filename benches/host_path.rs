//! Bench: the per-call cost of the host paths, `baton run` and `baton
//! serve` (issue 26), as the marginal cost of a call.
//!
//! Each run is a real `baton` process given one assistant message of N
//! no-op calls (`Sleep` of 0 ms: concurrency-safe, read-only, returns
//! without waiting). The time of a run includes the process's start and
//! exit, so the per-call figure is the marginal one:
//! `(t(10,000) − t(1,000)) / 9,000`, which removes everything paid once.
//! Sizes alternate (1,000, 10,000, 1,000, …) so that a change in the shared
//! machine's load hits both; the median of each size is kept.
//!
//! The baseline, in the same run, is the same marginal cost of `cat`
//! copying the message to a pipe: what reading the input alone costs.
//! Knobs: `BATON_HOST_ROUNDS` (runs per size, default 7), `BATON_BIN`. Printed, never
//! asserted.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `baton` built with this bench; `BATON_BIN` names another (an older
/// build, to compare before and after in one run).
fn baton() -> String {
    let named = std::env::var("BATON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").into());
    // Runs start in a temporary directory: a relative path would miss.
    std::fs::canonicalize(&named)
        .map(|p| p.display().to_string())
        .unwrap_or(named)
}
const SMALL: usize = 1_000;
const LARGE: usize = 10_000;

fn message(n: usize) -> String {
    let calls: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"type":"tool_use","id":"toolu_{i:06}","name":"Sleep","input":{{"duration_ms":0}}}}"#
            )
        })
        .collect();
    format!(r#"{{"role":"assistant","content":[{}]}}"#, calls.join(","))
}

/// One process fed `input` on stdin; the time until it exits, and its
/// stdout (checked, so a run that failed is not timed as a fast one).
fn timed(program: &str, args: &[&str], input: &str, dir: &std::path::Path) -> (Duration, String) {
    let t0 = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the program starts");
    let mut stdin = child.stdin.take().expect("a stdin pipe");
    let owned = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(owned.as_bytes());
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("a stdout pipe")
        .read_to_string(&mut out)
        .expect("stdout is UTF-8");
    let _ = child.wait();
    let took = t0.elapsed();
    let _ = writer.join();
    (took, out)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median times at SMALL and LARGE, sizes alternating, and the marginal
/// cost per call in µs; `run` checks each run's output itself.
fn marginal(rounds: usize, mut run: impl FnMut(usize) -> Duration) -> (Duration, Duration, f64) {
    let (mut small, mut large) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        small.push(run(SMALL));
        large.push(run(LARGE));
    }
    let (s, l) = (median(small), median(large));
    let per_call = (l.as_secs_f64() - s.as_secs_f64()) / (LARGE - SMALL) as f64;
    (s, l, per_call * 1e6)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let rounds = std::env::var("BATON_HOST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v: &usize| v > 0)
        .unwrap_or(7);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let messages = [(SMALL, message(SMALL)), (LARGE, message(LARGE))];
    let text = |n: usize| &messages.iter().find(|(m, _)| *m == n).expect("a size").1;
    let serve_input = |n: usize| format!("{{\"type\":\"message\",\"message\":{}}}\n", text(n));
    let common = ["--tool-search", "false", "--permission-mode", "default"];
    let baton = baton();
    println!(
        "host path: {baton}; {rounds} runs per size; load average {}",
        loadavg()
    );
    let run = marginal(rounds, |n| {
        let mut args = vec!["run"];
        args.extend(common);
        args.push("-");
        let (t, out) = timed(&baton, &args, text(n), dir.path());
        let results = out.matches("\"tool_result\"").count();
        assert_eq!(results, n, "baton run answered every call");
        t
    });
    let serve = marginal(rounds, |n| {
        let mut args = vec!["serve"];
        args.extend(common);
        let (t, out) = timed(&baton, &args, &serve_input(n), dir.path());
        let results = out.lines().filter(|l| l.starts_with("{\"")).count();
        assert!(
            out.contains("\"type\":\"done\""),
            "serve reported done ({results} lines)"
        );
        t
    });
    let cat = marginal(rounds, |n| timed("cat", &[], text(n), dir.path()).0);
    println!("| path | t(1,000) | t(10,000) | marginal per call |");
    println!("|---|---|---|---|");
    for (name, (s, l, per)) in [
        ("baton run", run),
        ("baton serve", serve),
        ("cat (baseline)", cat),
    ] {
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {per:.2} µs |",
            s.as_secs_f64() * 1e3,
            l.as_secs_f64() * 1e3
        );
    }
    println!("load average after: {}", loadavg());
}
