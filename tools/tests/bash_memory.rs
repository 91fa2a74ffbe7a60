//! Memory stays bounded whatever a command prints (SPEC §13): 2 GB of
//! output through the Bash tool, with the peak resident set of this test
//! process read from /proc/self/status. This file holds a single test so
//! the peak belongs to it alone.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod bash_common;

use std::time::Instant;

use bash_common::Harness;
use serde_json::json;

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gigabytes_of_output_keep_peak_rss_under_64_mb() {
    let h = Harness::new();
    let before = vm_hwm_kb();
    let start = Instant::now();
    let r = h
        .bash(json!({"command": "yes | head -c 2000000000", "timeout": 600_000}))
        .await;
    let elapsed = start.elapsed();
    let peak = vm_hwm_kb();
    eprintln!(
        "2 GB of output: {:.1} s, peak RSS {} kB before the call, {} kB after ({} MB)",
        elapsed.as_secs_f64(),
        before,
        peak,
        peak / 1024
    );
    let text = r.text();
    assert!(!r.is_error, "{}", &text[text.len().saturating_sub(500)..]);
    assert!(text.starts_with("y\ny\ny\n"));
    assert!(
        text.contains("1.9 GB"),
        "{}",
        &text[text.len().saturating_sub(800)..]
    );
    assert!(text.len() < 40_000, "inline text is {} bytes", text.len());
    assert!(peak < 64 * 1024, "peak RSS {peak} kB is over 64 MB");
}
