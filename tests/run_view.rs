//! `baton run` for a person (issue 24): on a terminal, a live view of the
//! calls and then the results as text; anywhere else, the JSON as before.
//! The terminal is a real pseudo-terminal, made by `script`.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::BATON;

fn message(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("m.json");
    let calls = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "echo hello-view"}},
        {"type": "tool_use", "id": "b", "name": "Bash",
            "input": {"command": "printf '\\033[2Jsneaky\\n'; exit 5"}},
    ]});
    std::fs::write(&file, calls.to_string()).unwrap();
    file
}

fn args(dir: &Path, file: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    for a in ["--permission-mode", "bypassPermissions", "--cwd"] {
        args.push(a.into());
    }
    args.push(dir.display().to_string());
    args.push("--state-dir".into());
    args.push(dir.join("state").display().to_string());
    args.push(file.display().to_string());
    args
}

fn piped(dir: &Path, file: &Path, extra: &[&str]) -> Vec<u8> {
    let out = crate::support::baton()
        .args(args(dir, file, extra))
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `baton` with a pseudo-terminal as its stdin, stdout and stderr;
/// returns what the terminal received.
fn on_terminal(dir: &Path, file: &Path, extra: &[&str]) -> String {
    // `script -c` takes one shell line; the paths are a temp dir's (no
    // quotes in them), quoted anyway.
    let line = std::iter::once(BATON.to_string())
        .chain(args(dir, file, extra))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("HOME", dir)
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("script(1) from util-linux runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn without_a_terminal_the_json_is_unchanged_and_json_forces_it() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let file = message(&cwd);
    let plain = piped(&cwd, &file, &[]);
    let forced = piped(&cwd, &file, &["--json"]);
    assert_eq!(plain, forced, "--json changes nothing off a terminal");
    let text = String::from_utf8(plain).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(!text.contains('\u{1b}'), "no terminal codes: {text:?}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["role"], "user", "{answer}");
    assert_eq!(answer["content"][0]["tool_use_id"], "a");
    assert_eq!(answer["content"][1]["is_error"], true);
}

#[test]
fn on_a_terminal_the_calls_and_their_results_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let file = message(&cwd);
    let shown = on_terminal(&cwd, &file, &[]);
    assert!(shown.contains("[1] Bash(echo hello-view)"), "{shown:?}");
    assert!(shown.contains("[2] Bash("), "{shown:?}");
    assert!(shown.contains("✓ success"), "{shown:?}");
    assert!(shown.contains("✗ tool_error"), "{shown:?}");
    // The results follow the view, as text.
    let results = shown
        .split("── [1]")
        .nth(1)
        .unwrap_or_else(|| panic!("{shown:?}"));
    assert!(results.contains("hello-view"), "{shown:?}");
    assert!(results.contains("── [2]"), "{shown:?}");
    // A command's escape sequence is shown, not obeyed.
    assert!(!shown.contains("\u{1b}[2J"), "{shown:?}");
    assert!(shown.contains("\\u{1b}[2Jsneaky"), "{shown:?}");
    assert!(!shown.contains("\"role\":\"user\""), "{shown:?}");
}

#[test]
fn on_a_terminal_json_forces_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let file = message(&cwd);
    let shown = on_terminal(&cwd, &file, &["--json"]);
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("{shown:?}"));
    let answer: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(answer["role"], "user", "{answer}");
}
