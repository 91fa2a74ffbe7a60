//! Checks requests Baton sent against the official SDKs' types
//! (`tests/sdk_check.py`, with the `anthropic` and `openai` packages that
//! `.ci/deps` installs). Included with `#[path]` by `tests/agent.rs` and
//! `tests/agent_nested.rs`.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use baton::engine::wire::WireFormat;
use serde_json::Value;

pub fn sdk_check(format: WireFormat, requests: &[Value]) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "baton-sdk-check-{}-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        format.name()
    ));
    std::fs::write(&path, serde_json::to_string(requests).unwrap()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk_check.py");
    let out = Command::new("python3")
        .args([script, format.name()])
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
