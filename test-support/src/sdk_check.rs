//! Checks requests Baton sent against the official SDKs' types
//! (`tests/sdk_check.py`, with the `anthropic` and `openai` packages that
//! `.ci/deps` installs).

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// Fails unless the SDK of `format` (a wire format's name, such as
/// `anthropic`) accepts every request.
pub fn sdk_check(format: &str, requests: &[Value]) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "baton-sdk-check-{}-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        format
    ));
    std::fs::write(&path, serde_json::to_string(requests).unwrap()).unwrap();
    let script = crate::workspace().join("tests/sdk_check.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(format)
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{format}: the SDK types reject a request (run ./.ci/deps if the SDKs are missing):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
