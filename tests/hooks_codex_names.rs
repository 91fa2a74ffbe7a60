//! Hooks written for Claude Code see codex's and OpenAI's native tools
//! under Claude Code's names: a `Bash` PreToolUse/PostToolUse hook fires
//! for `exec_command`, `shell`, `shell_command` and a Responses
//! `shell_call` with `tool_input.command`; an `Edit|Write` hook fires for
//! `apply_patch` once per path, and a deny for one path denies the patch.
//! Real hook processes, real commands, real files, through `baton run`.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;

use serde_json::{json, Value};

/// A hook that logs what it saw (one JSON line) and denies commands that
/// mention FORBIDDEN and writes to `.env`.
const HOOK: &str = r#"
import json, sys
event = json.load(sys.stdin)
seen = {"event": event["hook_event_name"], "tool": event["tool_name"],
        "real": event.get("baton_tool_name"),
        "command": event["tool_input"].get("command"),
        "file_path": event["tool_input"].get("file_path")}
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(seen) + "\n")
if event["hook_event_name"] == "PermissionRequest":
    # Grants commands marked GRANT, and writes of files named granted*.
    grant = "GRANT" in str(seen["command"]) or "granted" in str(seen["file_path"])
    if grant:
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                          "decision": {"behavior": "allow"}}}))
if event["hook_event_name"] == "PreToolUse":
    if "FORBIDDEN" in str(seen["command"]):
        sys.stderr.write("no forbidden commands")
        sys.exit(2)
    if str(seen["file_path"]).endswith(".env"):
        sys.stderr.write("no .env edits")
        sys.exit(2)
"#;

fn settings(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("hook.py");
    std::fs::write(&script, HOOK).unwrap();
    let log = dir.join("hook.log");
    let command = format!("python3 {} {}", script.display(), log.display());
    let group = |matcher: &str| json!({"matcher": matcher, "hooks": [{"type": "command", "command": command}]});
    let settings = json!({"hooks": {
        "PreToolUse": [group("Bash"), group("Edit|Write")],
        "PostToolUse": [group("Bash")],
        "PermissionRequest": [group("Bash"), group("Edit")],
    }});
    let path = dir.join("settings.json");
    std::fs::write(&path, settings.to_string()).unwrap();
    path
}

fn run(work: &Path, format: &str, message: Value) -> Value {
    run_in(work, format, "bypassPermissions", message)
}

fn run_in(work: &Path, format: &str, mode: &str, message: Value) -> Value {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("message.json");
    std::fs::write(&file, message.to_string()).unwrap();
    baton_test_support::cli::json_stdout(
        crate::support::baton()
            .args(["run", "--tool-set", "codex", "--format", format])
            .args(["--permission-mode", mode, "--cwd"])
            .arg(work)
            .arg("--state-dir")
            .arg(state.path())
            .arg("--settings")
            .arg(settings(work))
            .env("HOME", state.path())
            .arg(&file),
    )
}

fn log(work: &Path) -> Vec<Value> {
    std::fs::read_to_string(work.join("hook.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

#[test]
fn bash_hooks_fire_for_every_shell_tool() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let reply = run(
        &work,
        "anthropic",
        json!({"role": "assistant", "content": [
            tool_use("e", "exec_command", json!({"cmd": "echo exec-ran"})),
            tool_use("s", "shell", json!({"command": ["bash", "-lc", "echo shell-ran"]})),
            tool_use("c", "shell_command", json!({"command": "echo command-ran"})),
            tool_use("x", "exec_command", json!({"cmd": "echo FORBIDDEN > forbidden.txt"})),
        ]}),
    );
    let results = reply["content"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for (i, word) in ["exec-ran", "shell-ran", "command-ran"].iter().enumerate() {
        assert!(results[i].to_string().contains(word), "{}", results[i]);
    }
    assert_eq!(results[3]["is_error"], true, "{}", results[3]);
    assert!(results[3].to_string().contains("no forbidden commands"));
    assert!(
        !work.join("forbidden.txt").exists(),
        "the denied command ran"
    );
    let seen = log(&work);
    let pre: Vec<&Value> = seen.iter().filter(|s| s["event"] == "PreToolUse").collect();
    let post: Vec<&Value> = seen
        .iter()
        .filter(|s| s["event"] == "PostToolUse")
        .collect();
    assert_eq!(pre.len(), 4, "{seen:?}");
    assert_eq!(post.len(), 3, "{seen:?}");
    for s in &seen {
        assert_eq!(s["tool"], "Bash", "{s}");
    }
    let commands: Vec<&str> = pre.iter().filter_map(|s| s["command"].as_str()).collect();
    for wanted in ["echo exec-ran", "echo shell-ran", "echo command-ran"] {
        assert!(commands.contains(&wanted), "{commands:?}");
    }
    assert!(pre.iter().any(|s| s["real"] == "exec_command"), "{pre:?}");

    // A Responses `shell_call` (a native local tool) is a Bash call too.
    std::fs::remove_file(work.join("hook.log")).unwrap();
    let reply = run(
        &work,
        "openai-responses",
        json!({"output": [{"type": "shell_call", "id": "sh", "call_id": "c_sh",
            "status": "completed", "action": {"commands": ["echo native-ran"]}}]}),
    );
    assert!(reply.to_string().contains("native-ran"), "{reply}");
    let seen = log(&work);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen
        .iter()
        .all(|s| s["tool"] == "Bash" && s["command"] == "echo native-ran"));
}

#[test]
fn edit_hooks_see_each_path_of_a_patch() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let patch = |files: &[&str]| {
        let mut text = String::from("*** Begin Patch\n");
        for f in files {
            text.push_str(&format!("*** Add File: {f}\n+hello\n"));
        }
        text.push_str("*** End Patch\n");
        json!({"input": text})
    };
    let reply = run(
        &work,
        "anthropic",
        json!({"role": "assistant", "content": [
            tool_use("ok", "apply_patch", patch(&["a.txt", "b.txt"])),
        ]}),
    );
    assert_ne!(reply["content"][0]["is_error"], true, "{reply}");
    assert!(work.join("a.txt").exists() && work.join("b.txt").exists());
    let seen = log(&work);
    let paths: Vec<&str> = seen
        .iter()
        .filter_map(|s| s["file_path"].as_str())
        .collect();
    assert_eq!(
        paths,
        [
            work.join("a.txt").to_str().unwrap(),
            work.join("b.txt").to_str().unwrap()
        ],
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .all(|s| s["tool"] == "Edit" && s["real"] == "apply_patch"));

    // One forbidden path denies the whole patch: nothing is written.
    let reply = run(
        &work,
        "anthropic",
        json!({"role": "assistant", "content": [
            tool_use("no", "apply_patch", patch(&["c.txt", ".env"])),
        ]}),
    );
    assert_eq!(reply["content"][0]["is_error"], true, "{reply}");
    assert!(reply.to_string().contains("no .env edits"), "{reply}");
    assert!(!work.join("c.txt").exists() && !work.join(".env").exists());
}

#[test]
fn permission_request_hooks_answer_for_codex_tools() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let patch = |files: &[&str]| {
        let mut text = String::from("*** Begin Patch\n");
        for f in files {
            text.push_str(&format!("*** Add File: {f}\n+hello\n"));
        }
        text.push_str("*** End Patch\n");
        json!({"input": text})
    };
    // Default mode: writes ask, and the PermissionRequest hook answers.
    let reply = run_in(
        &work,
        "anthropic",
        "default",
        json!({"role": "assistant", "content": [
            tool_use("g", "exec_command", json!({"cmd": "touch g && echo GRANT-ok"})),
            tool_use("n", "exec_command", json!({"cmd": "touch n && echo not-granted"})),
            tool_use("p", "apply_patch", patch(&["granted1.txt", "granted2.txt"])),
            tool_use("q", "apply_patch", patch(&["granted3.txt", "other.txt"])),
        ]}),
    );
    let results = reply["content"].as_array().unwrap();
    assert!(
        results[0].to_string().contains("GRANT-ok"),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(!work.join("n").exists());
    assert_ne!(results[2]["is_error"], true, "{}", results[2]);
    assert!(work.join("granted1.txt").exists() && work.join("granted2.txt").exists());
    // Granting one path of a patch is no grant for the other.
    assert_eq!(results[3]["is_error"], true, "{}", results[3]);
    assert!(!work.join("granted3.txt").exists() && !work.join("other.txt").exists());
    let asked: Vec<Value> = log(&work)
        .into_iter()
        .filter(|s| s["event"] == "PermissionRequest")
        .collect();
    assert!(asked
        .iter()
        .any(|s| s["tool"] == "Bash" && s["real"] == "exec_command"));
    assert!(asked
        .iter()
        .any(|s| s["tool"] == "Edit" && s["real"] == "apply_patch"));
}
