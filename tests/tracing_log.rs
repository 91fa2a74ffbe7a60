//! `BATON_LOG` (issue 9): tracing spans per batch and per call on stderr,
//! nothing extra on stdout, nothing at all when unset.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::Write;
use std::process::{Output, Stdio};

fn serve(dir: &std::path::Path, log: Option<&str>) -> Output {
    let mut cmd = crate::support::baton();
    cmd.args(["serve", "--cwd", dir.to_str().unwrap()])
        .args(["--permission-mode", "bypassPermissions"])
        .env_remove("BATON_LOG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(log) = log {
        cmd.env("BATON_LOG", log);
    }
    let mut child = cmd.spawn().unwrap();
    let message = serde_json::json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo hi"}},
        {"type": "tool_use", "id": "t2", "name": "Nope", "input": {}},
    ]}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{message}").unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// Every stdout line is a protocol line.
fn protocol_only(out: &Output) -> usize {
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    for line in stdout.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert!(v["type"].is_string(), "{line}");
    }
    assert!(stdout.contains("\"type\":\"done\""), "{stdout}");
    stdout.lines().count()
}

#[test]
fn baton_log_debug_writes_batch_and_call_spans_to_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = serve(dir.path(), Some("debug"));
    assert!(out.status.success());
    let lines = protocol_only(&out);
    let quiet = serve(dir.path(), None);
    assert_eq!(protocol_only(&quiet), lines, "logging changed stdout");
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );

    let stderr = String::from_utf8(out.stderr).unwrap();
    let call = stderr
        .lines()
        .find(|l| l.contains("call{call_id=t1 tool=Bash") && l.contains("close"))
        .unwrap_or_else(|| panic!("no closed call span for t1:\n{stderr}"));
    assert!(call.contains("batch{depth=0"), "{call}");
    for field in [
        "queue_ms=",
        "validate_ms=",
        "hooks_ms=",
        "permission_ms=",
        "exec_ms=",
    ] {
        assert!(call.contains(field), "{field} missing: {call}");
    }
    assert!(call.contains("outcome=\"success\""), "{call}");
    let unknown = stderr
        .lines()
        .find(|l| l.contains("call{call_id=t2 tool=Nope") && l.contains("close"))
        .unwrap_or_else(|| panic!("no closed call span for t2:\n{stderr}"));
    assert!(unknown.contains("outcome=\"unknown_tool\""), "{unknown}");
    assert!(
        !unknown.contains("exec_ms="),
        "never reached the tool: {unknown}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("batch{depth=0 calls=2}") && l.contains("close")),
        "{stderr}"
    );
}

#[test]
fn a_bad_baton_log_is_reported_and_logging_stays_off() {
    let dir = tempfile::tempdir().unwrap();
    let out = serve(dir.path(), Some("baton=notalevel"));
    assert!(out.status.success());
    protocol_only(&out);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("BATON_LOG"), "{stderr}");
    assert!(!stderr.contains("call{"), "{stderr}");
}
