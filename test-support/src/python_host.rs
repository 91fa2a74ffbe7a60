//! Runs a Python host script from `tests/serve_host/` against this build's
//! `baton serve` and returns the JSON summary it prints. The host asserts
//! nothing itself; the Rust test reads the summary.

use std::path::Path;
use std::process::Command;

/// Runs `tests/serve_host/<script>` with `bin` (the `baton` binary) and
/// `dir`; the summary it printed.
pub fn run(bin: &str, script: &str, dir: &Path) -> serde_json::Value {
    let script = crate::workspace().join("tests/serve_host").join(script);
    let out = Command::new("python3")
        .arg(script)
        .arg(bin)
        .arg(dir)
        .output()
        .expect("python3 is needed (run ./.ci/deps)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "host failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}
