//! `mcp_tool` hooks (issue 15) through the `baton` binary: a real MCP server
//! (official Python SDK, `./.ci/deps` installs it) judges calls, with
//! `${tool_input.x}` substitution, an unknown server failing closed under
//! `onFailure: "block"`, and a failing tool as a non-blocking diagnostic.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn python_mcp() {
    let ok = Command::new("python3")
        .args(["-c", "import mcp.server.mcpserver"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "python3 with mcp 2.3.0 is missing: run ./.ci/deps");
}

fn results(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "result")
        .collect()
}

fn text(results: &[Value], id: &str) -> (String, String, Vec<String>) {
    let r = results
        .iter()
        .find(|r| r["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {results:?}"));
    let text = r["block"]["content"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let diagnostics = r["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|d| d.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (
        r["outcome"]["kind"].as_str().unwrap_or("").to_string(),
        text,
        diagnostics,
    )
}

#[test]
fn mcp_tool_hooks_call_a_real_server() {
    python_mcp();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(project.join("a.txt"), "a").unwrap();
    let log = dir.path().join("guard.jsonl");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks/mcp_guard.py");
    let mcp = dir.path().join("mcp.json");
    std::fs::write(
        &mcp,
        json!({"mcpServers": {"guard": {"command": "python3", "args": [server],
            "env": {"GUARD_LOG": log}}}})
        .to_string(),
    )
    .unwrap();
    let hook = |server: &str, tool: &str, input: Value| json!({"type": "mcp_tool", "server": server, "tool": tool, "input": input, "timeout": 60});
    let mut ghost = hook("ghost", "check", json!({}));
    ghost["onFailure"] = json!("block");
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({
            "permissions": {"allow": ["Bash", "Read", "Glob"]},
            "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [hook("guard", "check", json!({
                    "command": "${tool_input.command}", "tool": "${tool_name}",
                    "cwd": "in ${cwd}"}))]},
                {"matcher": "Read", "hooks": [ghost]},
                {"matcher": "Glob", "hooks": [
                    hook("guard", "broken", json!({"path": "${tool_input.pattern}"})),
                    hook("guard", "chatty", json!({"path": "${tool_input.pattern}"}))]}
            ]}
        })
        .to_string(),
    )
    .unwrap();
    let calls = json!([
        {"type": "tool_use", "id": "rm", "name": "Bash", "input": {"command": "rm -rf ./a.txt"}},
        {"type": "tool_use", "id": "echo", "name": "Bash", "input": {"command": "echo fine"}},
        {"type": "tool_use", "id": "read", "name": "Read", "input": {"file_path": project.join("a.txt")}},
        {"type": "tool_use", "id": "glob", "name": "Glob", "input": {"pattern": "*.txt"}},
    ]);
    let mut child = crate::support::baton()
        .args(["run", "--events", "--strict-mcp-config", "--mcp-config"])
        .arg(&mcp)
        .arg("--cwd")
        .arg(&project)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(["--sibling-policy", "off", "-"])
        .env("HOME", &home)
        .env("MCP_TIMEOUT", "120000")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let message = json!({"role": "assistant", "content": calls});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(message.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "baton failed: {stderr}\n{stdout}");
    let results = results(&stdout);

    let (kind, rm, _) = text(&results, "rm");
    assert_eq!(kind, "denied", "{rm}");
    assert!(
        rm.contains("guard server: Bash may not run 'rm -rf ./a.txt'"),
        "{rm}"
    );
    assert!(
        project.join("a.txt").exists(),
        "the guard stopped the delete"
    );
    let (kind, echo, _) = text(&results, "echo");
    assert_eq!(kind, "success", "{echo}");
    assert!(echo.contains("fine"), "{echo}");
    // The server saw the substituted arguments, one line per call.
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cwd = format!("in {}", project.canonicalize().unwrap().display());
    assert!(logged.contains(&json!({"command": "rm -rf ./a.txt", "tool": "Bash", "cwd": cwd})));
    assert!(logged.contains(&json!({"command": "echo fine", "tool": "Bash", "cwd": cwd})));
    assert_eq!(logged.len(), 2, "{logged:?}");

    // An unknown server with onFailure: block fails closed.
    let (kind, read, _) = text(&results, "read");
    assert_eq!(kind, "denied", "{read}");
    assert!(read.contains("ghost"), "{read}");
    // A failing tool is a diagnostic; plain text is ignored; the call runs.
    let (kind, glob, diagnostics) = text(&results, "glob");
    assert_eq!(kind, "success", "{glob}");
    assert!(glob.contains("a.txt"), "{glob}");
    let d = diagnostics.join("\n");
    assert!(
        d.contains("mcp_tool: guard/broken") && d.contains("answered with an error"),
        "{d}"
    );
    assert!(!d.contains("chatty"), "{d}");
}
