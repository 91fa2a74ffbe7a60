//! The small points of issue 24: `--mcp-config` files that cannot be used
//! are errors, settings problems one per line, no warning on the README's
//! first command, `Sleep` deferred, `baton run` on a message without calls.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;
use std::process::Output;

fn baton(home: &Path, args: &[&str]) -> Output {
    crate::support::baton()
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_mcp_config_that_cannot_be_used_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"mcpServers\": {").unwrap();
    let shapeless = dir.path().join("shapeless.json");
    std::fs::write(&shapeless, "{\"servers\": {}}").unwrap();
    let missing = dir.path().join("missing.json");
    for file in [&missing, &broken, &shapeless] {
        let out = baton(
            dir.path(),
            &[
                "tools",
                "--cwd",
                cwd,
                "--mcp-config",
                file.to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            file.display(),
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(file.to_str().unwrap()),
            "{}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty());
    }
    // A usable file with no servers is fine.
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "{\"mcpServers\": {}}").unwrap();
    let out = baton(
        dir.path(),
        &[
            "tools",
            "--cwd",
            cwd,
            "--mcp-config",
            empty.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn settings_problems_are_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".claude")).unwrap();
    std::fs::write(dir.path().join(".claude/settings.json"), "{not json").unwrap();
    let extra = dir.path().join("extra.json");
    std::fs::write(&extra, "[1]").unwrap();
    let out = baton(
        dir.path(),
        &[
            "tools",
            "--cwd",
            dir.path().to_str().unwrap(),
            "--settings",
            extra.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.iter().all(|l| l.starts_with("baton: ")), "{err}");
    assert!(!err.contains("; "), "{err}");
    assert_eq!(
        lines.iter().filter(|l| l.contains("settings.json")).count(),
        1,
        "{err}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.contains("extra.json")).count(),
        1,
        "{err}"
    );
}

#[test]
fn the_readmes_first_command_prints_no_warning_on_a_fresh_machine() {
    let home = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The demo's scratch directory does not exist on a fresh machine (the
    // demo itself creates it); a parent that exists is what matters.
    let state = home.path().join("state");
    // As on a fresh machine (the demo's first call removes it anyway).
    let _ = std::fs::remove_dir_all("/tmp/baton-demo");
    let out = crate::support::baton()
        .current_dir(root)
        .args([
            "run",
            "--settings",
            "examples/demo/settings.json",
            "--state-dir",
        ])
        .arg(&state)
        .arg("examples/demo/message.json")
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "the README's first command warned");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["content"].as_array().unwrap().len(), 10);
}

#[test]
fn sleep_is_deferred_in_the_default_pool() {
    let dir = tempfile::tempdir().unwrap();
    let out = baton(
        dir.path(),
        &["tools", "--list", "--cwd", dir.path().to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.ends_with(" Sleep")).unwrap_or("");
    assert!(line.starts_with("deferred"), "{text}");
}

#[test]
fn run_on_a_message_without_calls_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    std::fs::write(
        &file,
        r#"{"role":"assistant","content":[{"type":"text","text":"All done."}]}"#,
    )
    .unwrap();
    let cwd = dir.path().to_str().unwrap();
    let out = baton(dir.path(), &["run", "--cwd", cwd, file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "null");
    assert!(stderr(&out).contains("no tool calls"), "{}", stderr(&out));
    let out = baton(
        dir.path(),
        &["run", "--events", "--cwd", cwd, file.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let done: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(done["type"], "done");
    assert!(done["message"].is_null(), "{done}");
    assert!(done["reason"].as_str().unwrap().contains("no tool calls"));
}
