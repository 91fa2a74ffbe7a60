//! SPEC §8: only a command that ran and failed cancels its siblings. A
//! denial (rule, hook, approver, no approver) or a rejected input is a
//! decision for the model to read.

use serde_json::json;

use super::*;

const AUTO: &str = "automatically by the engine";

fn cancelled(r: &CallResult) -> bool {
    matches!(r.outcome, Outcome::Cancelled { .. })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_bash_calls_do_not_cancel_their_siblings() {
    let settings = r#"{"permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "grep -q forbidden-by-hook && exit 2 || exit 0"}]}]}}"#;
    for (mode, asker) in [
        (PermissionMode::Default, Asker::Nobody),
        (PermissionMode::Default, Asker::No),
        (PermissionMode::AcceptEdits, Asker::Nobody),
        (PermissionMode::DontAsk, Asker::Yes),
        (PermissionMode::Plan, Asker::Yes),
    ] {
        let ws = Ws::new();
        let calls = vec![
            ("rule", "Bash", json!({"command": "rm -rf build"})),
            ("hook", "Bash", json!({"command": "echo forbidden-by-hook"})),
            ("unapproved", "Bash", json!({"command": "touch made"})),
            ("bad_input", "Bash", json!({"cmd": "ls"})),
            ("later", "Bash", json!({"command": "echo still-ran"})),
            ("read", "Glob", json!({"pattern": "*"})),
        ];
        let run = run(&ws, settings, mode, asker, calls).await;
        assert!(denied(run.get("rule")), "{mode}: {}", run.text("rule"));
        assert!(denied(run.get("hook")), "{mode}: {}", run.text("hook"));
        assert!(
            denied(run.get("unapproved")),
            "{mode} {asker:?}: {}",
            run.text("unapproved")
        );
        assert_eq!(run.get("bad_input").outcome, Outcome::InvalidInput);
        for r in &run.results {
            assert!(
                !cancelled(r),
                "{mode} {asker:?}: {} was cancelled: {}",
                r.call_id,
                text(r)
            );
            assert!(!text(r).contains(AUTO), "{mode}: {}", text(r));
        }
        assert!(
            run.text("later").contains("still-ran"),
            "{mode}: {}",
            run.text("later")
        );
        assert!(!ws.root.join("made").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ran_and_failed_still_cancels() {
    let ws = Ws::new();
    let calls = vec![
        ("fails", "Bash", json!({"command": "ls no-such-dir"})),
        (
            "after",
            "Bash",
            json!({"command": "sleep 5; echo never > after.txt"}),
        ),
    ];
    let run = run(
        &ws,
        "{}",
        PermissionMode::BypassPermissions,
        Asker::Nobody,
        calls,
    )
    .await;
    assert!(!ws.root.join("after.txt").exists());
    assert_eq!(
        run.get("fails").outcome,
        Outcome::ToolError,
        "{}",
        run.text("fails")
    );
    assert!(cancelled(run.get("after")), "{}", run.text("after"));
    assert!(run.text("after").contains(AUTO));
}

#[test]
fn the_demo_without_its_settings_loses_no_call_to_a_denial() {
    let out = crate::support::baton()
        .args(["run", "examples/demo/message.json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HOME", std::env::temp_dir().join("baton-no-home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let blocks = message["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 10, "{stdout}");
    let cancelled: Vec<&Value> = blocks
        .iter()
        .filter(|b| b.to_string().contains(AUTO))
        .collect();
    assert!(
        cancelled.is_empty(),
        "calls lost to a denial: {cancelled:?}"
    );
    // TodoWrite needs no approval and ran.
    assert_eq!(blocks[7]["is_error"], Value::Null, "{}", blocks[7]);
}
