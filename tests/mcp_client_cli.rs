//! The CLI with MCP servers: `baton run` on the offline demo server,
//! `baton mcp list`, `baton tools`, and no server left after exit.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use baton_test_support::{mcp_servers, procs};
use serde_json::Value;

fn baton() -> Command {
    let mut cmd = crate::support::baton();
    // Only the servers of --mcp-config (no ~/.claude.json of the machine).
    cmd.env("HOME", std::env::temp_dir());
    // A cold Python on a loaded machine can take long to start.
    cmd.env("MCP_TIMEOUT", "120000");
    cmd
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn output_json(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "baton failed: {}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("could not connect"), "{stderr}");
    value
}

#[test]
fn demo_message_runs_against_the_offline_mcp_server() {
    let state = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = baton()
        .current_dir(repo())
        .args([
            "run",
            "--strict-mcp-config",
            "--mcp-config",
            "examples/demo/mcp/mcp.json",
        ])
        .args([
            "--settings",
            "examples/demo/mcp/settings.json",
            "--state-dir",
        ])
        .arg(state.path())
        .arg("examples/demo/mcp/message.json")
        .output()
        .unwrap();
    let message = output_json(&out);
    let results = message["content"].as_array().unwrap();
    let text = |i: usize| results[i]["content"].to_string();
    assert_eq!(results.len(), 4);
    assert!(text(0).contains("parallel"), "{}", text(0));
    assert!(text(1).contains("exactly one result"), "{}", text(1));
    assert!(text(2).contains("added note 4"), "{}", text(2));
    // The writer ran before the digest that follows it.
    assert!(text(3).contains("4 notes"), "{}", text(3));
    assert!(
        results.iter().all(|r| r["is_error"] != Value::Bool(true)),
        "{message}"
    );
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn mcp_list_and_tools_show_servers_and_deferred_tools() {
    let dir = tempfile::tempdir().unwrap();
    let script = mcp_servers::script("misbehaving.py");
    let config = dir.path().join("mcp.json");
    let broken = serde_json::json!({"mcpServers": {
        "py": {"command": "python3", "args": [script], "alwaysLoad": false},
        "bad": {"command": "server", "args": ["${BATON_TEST_UNSET_VARIABLE}"]}
    }});
    std::fs::write(&config, broken.to_string()).unwrap();
    let out = baton()
        .args([
            "mcp",
            "list",
            "--json",
            "--strict-mcp-config",
            "--mcp-config",
        ])
        .arg(&config)
        .arg("--cwd")
        .arg(dir.path())
        .output()
        .unwrap();
    let listed = output_json(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"bad\"") && stderr.contains("BATON_TEST_UNSET_VARIABLE"),
        "{stderr}"
    );
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{listed}");
    let py = &servers[0];
    assert_eq!(py["state"], "ready");
    assert_eq!(py["transport"], "stdio");
    assert!(
        py["protocolVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("20")),
        "{py}"
    );
    assert!(py["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "mcp__py__echo"));

    let out = baton()
        .args(["tools", "--strict-mcp-config", "--mcp-config"])
        .arg(&config)
        .arg("--cwd")
        .arg(dir.path())
        .output()
        .unwrap();
    let tools = output_json(&out);
    let tools = tools.as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "mcp__py__echo").unwrap();
    assert_eq!(echo["defer_loading"], Value::Bool(true));
    let bash = tools.iter().find(|t| t["name"] == "Bash").unwrap();
    assert!(bash.get("defer_loading").is_none());
    let first_mcp = tools
        .iter()
        .position(|t| t["name"].as_str().unwrap().starts_with("mcp__"))
        .unwrap();
    assert!(
        tools[..first_mcp].iter().any(|t| t["name"] == "Bash"),
        "built-ins come first"
    );
}

#[test]
fn no_server_process_is_left_after_run() {
    let dir = tempfile::tempdir().unwrap();
    let script = mcp_servers::script("misbehaving.py");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"py": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    let message = dir.path().join("m.json");
    std::fs::write(
        &message,
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__py__whoami","input":{}}]}"#,
    )
    .unwrap();
    let settings = dir.path().join("s.json");
    std::fs::write(&settings, r#"{"permissions":{"allow":["mcp__py"]}}"#).unwrap();
    let out = baton()
        .args(["run", "--strict-mcp-config", "--mcp-config"])
        .arg(&config)
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(dir.path())
        .arg(&message)
        .output()
        .unwrap();
    let message = output_json(&out);
    let text = message["content"][0]["content"].to_string();
    let pid: i32 = text
        .split("pid=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text}"));
    assert!(
        !procs::alive(pid),
        "MCP server {pid} still running after baton exited"
    );
}

#[test]
fn plan_mode_runs_read_only_mcp_tools_and_denies_writers() {
    let dir = tempfile::tempdir().unwrap();
    let script = mcp_servers::script("misbehaving.py");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"py": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    let message = dir.path().join("m.json");
    std::fs::write(
        &message,
        r#"{"role":"assistant","content":[
            {"type":"tool_use","id":"t1","name":"mcp__py__echo","input":{"text":"read in plan mode"}},
            {"type":"tool_use","id":"t2","name":"mcp__py__slow_write","input":{"ms":1}}]}"#,
    )
    .unwrap();
    let out = baton()
        .args([
            "run",
            "--permission-mode",
            "plan",
            "--strict-mcp-config",
            "--mcp-config",
        ])
        .arg(&config)
        .arg("--cwd")
        .arg(dir.path())
        .arg(&message)
        .output()
        .unwrap();
    let message = output_json(&out);
    let results = message["content"].as_array().unwrap();
    assert!(
        results[0]["content"]
            .to_string()
            .contains("read in plan mode"),
        "{message}"
    );
    assert_ne!(results[0]["is_error"], Value::Bool(true), "{message}");
    assert_eq!(
        results[1]["is_error"],
        Value::Bool(true),
        "a writer is not run in plan mode: {message}"
    );
}

/// Drives `baton run` on a pseudo-terminal (Python's `pty`): the server's
/// elicitation is asked on the terminal and the answers reach the server.
#[test]
fn run_asks_elicitations_on_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let script = mcp_servers::script("misbehaving.py");
    std::fs::write(
        dir.path().join("mcp.json"),
        serde_json::json!({"mcpServers": {"py": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m.json"),
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__py__ask","input":{}}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"permissions":{"allow":["mcp__py"]}}"#,
    )
    .unwrap();
    let driver = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"] = os.environ["TMPDIR_FOR_HOME"]
    os.execv(sys.argv[1], ["baton", "run", "--strict-mcp-config", "--mcp-config", "mcp.json", "--settings", "s.json", "m.json"])
buf, sent, end = b"", 0, time.time() + 240
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.5)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    if sent == 0 and b"Answer?" in buf:
        os.write(fd, b"y\n"); sent = 1
    if sent == 1 and b"name (string)" in buf:
        os.write(fd, b"Ada\n"); sent = 2
sys.stdout.write(buf.decode(errors="replace"))
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(driver)
        .arg(crate::support::BATON)
        .current_dir(dir.path())
        .env("TMPDIR_FOR_HOME", std::env::temp_dir())
        .env("MCP_TIMEOUT", "120000")
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("MCP server \"py\" asks: What is your name?"),
        "{screen}"
    );
    assert!(screen.contains("hello Ada"), "{screen}");
}
