//! Signals during start-up (issue 25, item 6): SIGINT, SIGTERM or SIGHUP
//! while an MCP server connects (a real stdio server that reads
//! `initialize` and sleeps before answering) or while a SessionStart hook
//! runs. `baton run` must answer every call it was given ("never
//! started") and `baton serve` must exit cleanly; both leave no process
//! behind. Before, each of these cases killed Baton with no results.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use baton_test_support::procs;
use serde_json::{json, Value};

/// Generous: the slow parts sleep 600 s; the signal must not wait for them.
const PROMPT: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug)]
enum Phase {
    McpConnect,
    SessionStartHook,
}

/// A marker no other test uses, in the slow process's command line; a
/// valid `sleep` argument (digits only after `600.`).
fn marker() -> String {
    procs::marker("600.")
}

/// Settings and MCP files for `phase`; the slow process carries `marker`.
fn config(dir: &Path, phase: Phase, marker: &str) -> Vec<String> {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    match phase {
        Phase::McpConnect => {
            // Reads the initialize request, then sleeps before any answer.
            let script = format!("read -r line; sleep {marker}; echo never");
            let cfg = json!({"mcpServers": {"slow": {
                "command": "bash", "args": ["-c", script]}}});
            let path = dir.join("mcp.json");
            std::fs::write(&path, cfg.to_string()).unwrap();
            vec![
                "--strict-mcp-config".into(),
                "--mcp-config".into(),
                path.display().to_string(),
            ]
        }
        Phase::SessionStartHook => {
            let hook = json!([{"matcher": "*", "hooks": [
                {"type": "command", "command": format!("sleep {marker}")}]}]);
            let path = dir.join("settings.json");
            std::fs::write(&path, json!({"hooks": {"SessionStart": hook}}).to_string()).unwrap();
            vec!["--settings".into(), path.display().to_string()]
        }
    }
}

fn calls() -> Vec<Value> {
    (0..3)
        .map(|i| {
            json!({"type": "tool_use", "id": format!("c{i}"), "name": "Bash",
            "input": {"command": format!("echo ran-{i}")}})
        })
        .collect()
}

fn baton(dir: &Path, args: &[String]) -> Command {
    let mut cmd = crate::support::baton();
    cmd.args(args)
        .arg("--cwd")
        .arg(dir)
        .args(["--permission-mode", "bypassPermissions"])
        .arg("--state-dir")
        .arg(dir.join("state"))
        .env("HOME", dir.join("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Waits until the slow process runs (the start-up step is under way).
fn wait_running(marker: &str, child: &mut Child) {
    let start = Instant::now();
    while procs::running(marker) == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "baton ended before the slow step"
        );
        assert!(start.elapsed() < PROMPT, "the slow step never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the bash script reach its `sleep` too.
    std::thread::sleep(Duration::from_millis(200));
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Waits for exit within [`PROMPT`]; kills and fails otherwise.
fn finish(mut child: Child, what: &str) -> (std::process::ExitStatus, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (
                status,
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if start.elapsed() > PROMPT {
            let _ = child.kill();
            panic!("{what}: still running {PROMPT:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (a while) until nothing with `marker` runs; returns what is left.
fn left(marker: &str) -> usize {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if procs::running(marker) == 0 {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    procs::running(marker)
}

const SIGNALS: [&str; 3] = ["INT", "TERM", "HUP"];
const PHASES: [Phase; 2] = [Phase::McpConnect, Phase::SessionStartHook];

#[test]
fn baton_run_answers_every_call_when_a_signal_comes_during_start_up() {
    let mut failures = Vec::new();
    for phase in PHASES {
        for sig in SIGNALS {
            let what = format!("run, {phase:?}, SIG{sig}");
            let dir = tempfile::tempdir().unwrap();
            let dir: PathBuf = dir.path().canonicalize().unwrap();
            let marker = marker();
            let message = dir.join("message.json");
            std::fs::write(
                &message,
                json!({"role": "assistant", "content": calls()}).to_string(),
            )
            .unwrap();
            let mut args = vec!["run".to_string()];
            args.extend(config(&dir, phase, &marker));
            let mut child = baton(&dir, &args).arg(&message).spawn().unwrap();
            wait_running(&marker, &mut child);
            signal(&child, sig);
            let (status, out, err) = finish(child, &what);
            let reply: Value = match serde_json::from_str(&out) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{what}: no reply ({e}; {status}): {err}"));
                    continue;
                }
            };
            let results = reply["content"].as_array().cloned().unwrap_or_default();
            let ids: Vec<&str> = results
                .iter()
                .filter_map(|r| r["tool_use_id"].as_str())
                .collect();
            if ids != ["c0", "c1", "c2"] {
                failures.push(format!("{what}: results {ids:?}: {reply}"));
            }
            for r in &results {
                let text = r["content"].to_string();
                if text.contains("ran-") || r["is_error"] != true {
                    failures.push(format!("{what}: a call ran or is not an error: {r}"));
                }
            }
            let n = left(&marker);
            if n != 0 {
                failures.push(format!("{what}: {n} processes left"));
            }
            eprintln!("{what}: {status}, {} results", ids.len());
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn baton_serve_ends_cleanly_when_a_signal_comes_during_start_up() {
    let mut failures = Vec::new();
    for phase in PHASES {
        for sig in SIGNALS {
            let what = format!("serve, {phase:?}, SIG{sig}");
            let dir = tempfile::tempdir().unwrap();
            let dir: PathBuf = dir.path().canonicalize().unwrap();
            let marker = marker();
            let mut args = vec!["serve".to_string()];
            args.extend(config(&dir, phase, &marker));
            let mut child = baton(&dir, &args).stdin(Stdio::piped()).spawn().unwrap();
            // A message given before start-up ends.
            let line = json!({"type": "message", "message":
                {"role": "assistant", "content": calls()}});
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "{line}").unwrap();
            wait_running(&marker, &mut child);
            signal(&child, sig);
            let (status, out, err) = finish(child, &what);
            drop(stdin);
            if !status.success() {
                failures.push(format!("{what}: exit {status}: {err}"));
            }
            let lines: Vec<Value> = out
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
            let ids: Vec<&str> = results
                .iter()
                .filter_map(|r| r["tool_use_id"].as_str())
                .collect();
            if ids != ["c0", "c1", "c2"] {
                failures.push(format!("{what}: results {ids:?}: {out}"));
            }
            for r in &results {
                if r["outcome"]["kind"] == "success" {
                    failures.push(format!("{what}: a call ran: {r}"));
                }
            }
            let n = left(&marker);
            if n != 0 {
                failures.push(format!("{what}: {n} processes left"));
            }
            eprintln!("{what}: {status}, {} results", ids.len());
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
