//! `autoAllowBashIfSandboxed` covers codex's shell tools too: an
//! `exec_command` (and `shell_command` under `--tool-set codex`) whose
//! command runs sandboxed runs unasked, as a Bash call would; asking out of
//! the sandbox (`sandbox_permissions: "require_escalated"`) or the setting
//! being off leaves the question, which `baton run` answers with no.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;

use serde_json::{json, Value};

fn confinable() -> bool {
    let support = baton_engine::sandbox::support();
    let ok = support.usable() && support.user_namespaces;
    if !ok {
        eprintln!("skipping: the kernel cannot confine here");
    }
    ok
}

/// `baton run` on one message of `(name, input)` calls; each result's
/// text and error flag.
fn run(work: &Path, settings: &Value, set: &str, calls: &[(&str, Value)]) -> Vec<(String, bool)> {
    let state = tempfile::tempdir().unwrap();
    let content: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"type": "tool_use", "id": format!("c{i}"), "name": name, "input": input})
        })
        .collect();
    let message = state.path().join("message.json");
    std::fs::write(
        &message,
        json!({"role": "assistant", "content": content}).to_string(),
    )
    .unwrap();
    let file = state.path().join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let out = crate::support::baton()
        .args(["run", "--tool-set", set, "--cwd"])
        .arg(work)
        .arg("--state-dir")
        .arg(state.path())
        .arg("--settings")
        .arg(&file)
        .env("HOME", state.path())
        .env_remove(baton_engine::confine::WAIVE_VAR)
        .env_remove(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR)
        .arg(&message)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    reply["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["content"].to_string(), r["is_error"] == true))
        .collect()
}

#[test]
fn sandboxed_codex_shell_commands_run_unasked() {
    if !confinable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let on = json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}});
    let off = json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false}});
    let calls = [
        // Writes, so not read-only: only the sandbox can vouch for them.
        (
            "exec_command",
            json!({"cmd": "touch e && echo EXEC-$((20+22))"}),
        ),
        (
            "exec_command",
            json!({"cmd": "touch o && echo OUT-$((1+1))", "sandbox_permissions": "require_escalated"}),
        ),
        (
            "shell_command",
            json!({"command": "touch s && echo SC-$((3*3))"}),
        ),
    ];
    let got = run(&work, &on, "codex", &calls);
    assert!(got[0].0.contains("EXEC-42") && !got[0].1, "{:?}", got[0]);
    assert!(
        got[1].1 && !got[1].0.contains("OUT-2"),
        "asking out of the sandbox must not be auto-allowed: {:?}",
        got[1]
    );
    assert!(got[2].0.contains("SC-9") && !got[2].1, "{:?}", got[2]);
    let got = run(&work, &off, "codex", &calls);
    for (text, error) in &got {
        assert!(*error, "ran without the setting: {text}");
        assert!(
            !text.contains("EXEC-42") && !text.contains("SC-9"),
            "{text}"
        );
    }
}
