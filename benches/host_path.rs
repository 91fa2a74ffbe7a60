//! Bench: the per-call cost of the host paths, `baton run` and `baton
//! serve` (issue 26), as the marginal cost of a call, and the peak memory
//! of `baton run` on one very large message (issue 25).
//!
//! Each run is a real `baton` process given one assistant message of N
//! no-op calls (`Sleep` of 0 ms: concurrency-safe, read-only, returns
//! without waiting). The time of a run includes the process's start and
//! exit, so the per-call figure is the marginal one:
//! `(t(10,000) − t(1,000)) / 9,000`, which removes everything paid once.
//! Both the wall time and the CPU time (user + system, from `wait4`) are
//! reported; on a machine shared with other work the CPU time is the
//! steadier one. Sizes alternate (1,000, 10,000, 1,000, …) so that a
//! change in the machine's load hits both; the median of each size is kept.
//!
//! With `BATON_BIN_BASE` naming an older build, every run of the build
//! under test is paired with the same run of that one, interleaved, so
//! before and after see the same load. The baseline, in the same run, is
//! the same marginal cost of `cat` copying the message to a pipe: what
//! reading the input alone costs.
//!
//! Knobs: `BATON_HOST_ROUNDS` (runs per size, default 7), `BATON_BIN`,
//! `BATON_BIN_BASE`, `BATON_HOST_BIG` (calls of the peak-memory message,
//! default 100,000; 0 skips it). Printed, never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `BATON_BIN`, or the `baton` built with this bench, as an absolute path
/// (runs start in a temporary directory: a relative path would miss).
fn baton() -> String {
    let named = std::env::var("BATON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").into());
    absolute(named)
}

fn absolute(named: String) -> String {
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

/// What one process cost.
#[derive(Clone, Copy, Default)]
struct Cost {
    wall: Duration,
    cpu: Duration,
    /// Peak resident memory, in KiB.
    max_rss_kib: i64,
}

/// One process fed `input` on stdin: its cost, and its stdout (checked, so
/// a run that failed is not timed as a fast one).
// The child is reaped by `reap` (wait4), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn timed(program: &str, args: &[&str], input: &str, dir: &std::path::Path) -> (Cost, String) {
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
    let cost = reap(child.id() as libc::pid_t, t0);
    let _ = writer.join();
    (cost, out)
}

/// Waits for `pid` with `wait4`, which reports the child's own CPU time
/// and peak memory.
fn reap(pid: libc::pid_t, t0: Instant) -> Cost {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped; the pointers are valid.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4 reaped the child");
    let wall = t0.elapsed();
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Cost {
        wall,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Per size, the median wall and CPU time; marginal µs per call of each.
struct Marginal {
    wall: (Duration, Duration),
    cpu: (Duration, Duration),
}

impl Marginal {
    fn of(small: &[Cost], large: &[Cost]) -> Marginal {
        let med = |v: &[Cost], f: fn(&Cost) -> Duration| median(v.iter().map(f).collect());
        Marginal {
            wall: (med(small, |c| c.wall), med(large, |c| c.wall)),
            cpu: (med(small, |c| c.cpu), med(large, |c| c.cpu)),
        }
    }

    fn per_call(pair: (Duration, Duration)) -> f64 {
        (pair.1.as_secs_f64() - pair.0.as_secs_f64()) / (LARGE - SMALL) as f64 * 1e6
    }

    fn row(&self, name: &str) -> String {
        format!(
            "| {name} | {:.1} / {:.1} ms | {:.2} µs | {:.1} / {:.1} ms | **{:.2} µs** |",
            self.wall.0.as_secs_f64() * 1e3,
            self.wall.1.as_secs_f64() * 1e3,
            Self::per_call(self.wall),
            self.cpu.0.as_secs_f64() * 1e3,
            self.cpu.1.as_secs_f64() * 1e3,
            Self::per_call(self.cpu),
        )
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

const COMMON: [&str; 4] = ["--tool-search", "false", "--permission-mode", "default"];

/// `baton run` of `text`; checks that each of the `n` calls was answered.
fn run_once(bin: &str, text: &str, n: usize, dir: &std::path::Path) -> Cost {
    let mut args = vec!["run"];
    args.extend(COMMON);
    args.push("-");
    let (cost, out) = timed(bin, &args, text, dir);
    let results = out.matches("\"tool_result\"").count();
    assert_eq!(results, n, "{bin} run answered every call");
    cost
}

/// `baton serve` of one `message` line of `text`; checks its `done`.
fn serve_once(bin: &str, text: &str, dir: &std::path::Path) -> Cost {
    let mut args = vec!["serve"];
    args.extend(COMMON);
    let input = format!("{{\"type\":\"message\",\"message\":{text}}}\n");
    let (cost, out) = timed(bin, &args, &input, dir);
    assert!(
        out.contains("\"type\":\"done\""),
        "{bin} serve reported done"
    );
    cost
}

fn main() {
    let rounds = std::env::var("BATON_HOST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v: &usize| v > 0)
        .unwrap_or(7);
    let big = std::env::var("BATON_HOST_BIG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000usize);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let texts = [(SMALL, message(SMALL)), (LARGE, message(LARGE))];
    let mut bins = vec![("baton", baton())];
    if let Ok(base) = std::env::var("BATON_BIN_BASE") {
        bins.push(("base", absolute(base)));
    }
    println!(
        "host path: {}; {rounds} runs per size; load average {}",
        bins.iter()
            .map(|(name, path)| format!("{name} = {path}"))
            .collect::<Vec<_>>()
            .join(", "),
        loadavg()
    );
    // costs[bin][path][size]: path 0 = run, 1 = serve; size 0 = SMALL.
    let mut costs = vec![vec![vec![Vec::new(), Vec::new()]; 2]; bins.len()];
    let mut cat = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (size, (n, text)) in texts.iter().enumerate() {
            for (b, (_, bin)) in bins.iter().enumerate() {
                costs[b][0][size].push(run_once(bin, text, *n, dir.path()));
                costs[b][1][size].push(serve_once(bin, text, dir.path()));
            }
            cat[size].push(timed("cat", &[], text, dir.path()).0);
        }
    }
    println!("| path | wall t(1,000) / t(10,000) | wall per call | CPU t(1,000) / t(10,000) | CPU per call |");
    println!("|---|---|---|---|---|");
    for (b, (name, _)) in bins.iter().enumerate() {
        for (p, path) in ["run", "serve"].iter().enumerate() {
            let m = Marginal::of(&costs[b][p][0], &costs[b][p][1]);
            println!("{}", m.row(&format!("{name} {path}")));
        }
    }
    println!("{}", Marginal::of(&cat[0], &cat[1]).row("cat (baseline)"));
    println!("load average after the marginal runs: {}", loadavg());
    if big > 0 {
        let text = message(big);
        for (name, bin) in &bins {
            let cost = run_once(bin, &text, big, dir.path());
            println!(
                "{name} run, {big} calls: peak RSS {:.0} MB, CPU {:.2} s, wall {:.2} s (load {})",
                cost.max_rss_kib as f64 / 1024.0,
                cost.cpu.as_secs_f64(),
                cost.wall.as_secs_f64(),
                loadavg()
            );
        }
    }
}
