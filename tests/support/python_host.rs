//! Runs a Python host script from `tests/serve_host/` against this build's
//! `baton serve` and returns the JSON summary it prints. The host asserts
//! nothing itself; the Rust test reads the summary.

use std::path::Path;
use std::process::Command;

pub fn run(script: &str, dir: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/serve_host")
        .join(script);
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_baton"))
        .arg(dir)
        .output()
        .expect("python3 is needed (run ./.ci/deps)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "host failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}
