//! Memory stays bounded whatever a command prints (SPEC §13): 2 GB of
//! output through the Bash tool, with the peak resident set of this test
//! process read from /proc/self/status. The test runs in a process of its
//! own, so the peak belongs to it alone.

use std::time::Instant;

use bash_common::Harness;
use baton_test_support::own_process;
use serde_json::json;

use crate::bash_common;

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn two_gigabytes_of_output_keep_peak_rss_under_64_mb() {
    own_process!(two_gigabytes_of_output_keep_peak_rss_under_64_mb, || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(two_gigabytes())
    });
}

async fn two_gigabytes() {
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
