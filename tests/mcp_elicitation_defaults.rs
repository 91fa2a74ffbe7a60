//! SEP-1034 form defaults through the CLI's two elicitors: a `baton serve`
//! host whose `elicitation` line leaves fields out, and the terminal prompt
//! of `baton run` (driven on a pseudo-terminal) where an empty line keeps a
//! field's default. The server (tools/mcp/tests/servers/handmade.py) asks
//! for a form with defaults and returns the raw result it received.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use baton_test_support::mcp_servers;
use serde_json::{json, Value};

use crate::support::BATON;

/// An MCP config with the hand-written server, and settings allowing it.
fn setup(dir: &Path) {
    let script = mcp_servers::script("handmade.py");
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"hm": {"command": "python3", "args": ["-u", script]}}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("s.json"),
        r#"{"permissions":{"allow":["mcp__hm"]}}"#,
    )
    .unwrap();
}

const MESSAGE: &str = r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__hm__ask_defaults","input":{}}]}"#;

#[test]
fn a_serve_host_may_leave_fields_out() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut child = crate::support::baton()
        .args(["serve", "--strict-mcp-config", "--mcp-config", "mcp.json"])
        .args(["--settings", "s.json", "--state-dir", ".state"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("MCP_TIMEOUT", "120000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, r#"{{"type":"message","message":{MESSAGE}}}"#).unwrap();
    let mut asked = None;
    let mut result = None;
    for line in stdout.lines() {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match line["type"].as_str() {
            Some("elicitation_request") => {
                asked = Some(line["requested_schema"].clone());
                // Only `name` and `verified`: the rest is left to defaults.
                let answer = json!({"type": "elicitation", "request_id": line["request_id"],
                    "action": "accept", "content": {"name": "Ada", "verified": false}});
                writeln!(stdin, "{answer}").unwrap();
            }
            Some("result") => result = Some(line["block"].clone()),
            Some("done") => break,
            _ => {}
        }
    }
    drop(stdin);
    let _ = child.wait();
    let asked = asked.expect("no elicitation_request line");
    assert_eq!(asked["properties"]["age"]["default"], 30, "{asked}");
    let block = result.expect("no result line");
    let text = block["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{block}"));
    let seen: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        seen,
        json!({"action": "accept", "content": {"name": "Ada", "age": 30, "score": 95.5,
            "status": "active", "verified": false}})
    );
}

/// Answers the prompts of `baton run` on a pseudo-terminal: `y` to the
/// question, then the answer for each field by name (empty: keep the
/// default), and prints the whole screen.
const DRIVER: &str = r#"
import os, pty, re, select, sys, time
answers = {"name": "", "age": "41", "score": "", "status": "", "verified": "", "nickname": "Nick"}
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], ["baton", "run", "--json", "--strict-mcp-config", "--mcp-config", "mcp.json",
                           "--settings", "s.json", "--state-dir", ".state", "m.json"])
buf, done, said_yes, end = b"", 0, False, time.time() + 240
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
    text = buf.decode(errors="replace")
    if not said_yes and "Answer? [y/N]" in text:
        os.write(fd, b"y\n"); said_yes = True
    prompts = re.findall(r"\n  (\w+) \([^\n]*\): ", text)
    if said_yes and len(prompts) > done:
        os.write(fd, (answers.get(prompts[done], "") + "\n").encode()); done += 1
sys.stdout.write(buf.decode(errors="replace"))
"#;

#[test]
fn an_empty_answer_at_the_terminal_keeps_the_default() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    std::fs::write(dir.path().join("m.json"), MESSAGE).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(DRIVER)
        .arg(BATON)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("MCP_TIMEOUT", "120000")
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    // The prompt shows each default.
    assert!(
        screen.contains(r#"name (string, default "John Doe"): "#),
        "{screen}"
    );
    assert!(screen.contains("age (integer, default 30): "), "{screen}");
    assert!(screen.contains("nickname (string): "), "{screen}");
    // What the server received, as quoted in the tool result.
    let wanted = json!({"name": "John Doe", "age": 41, "score": 95.5, "status": "active",
        "verified": true, "nickname": "Nick"});
    let start = screen
        .find('{')
        .unwrap_or_else(|| panic!("no result: {screen}"));
    let message: Value =
        serde_json::from_str(screen[start..].trim()).unwrap_or_else(|e| panic!("{e}: {screen}"));
    let text = message["content"][0]["content"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            message["content"][0]["content"][0]["text"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("{message}"));
    let seen: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(seen["action"], "accept", "{seen}");
    let mut content = seen["content"].clone();
    // Key order aside, the content is exactly the wanted one.
    content.as_object_mut().unwrap().sort_keys();
    let mut wanted = wanted;
    wanted.as_object_mut().unwrap().sort_keys();
    assert_eq!(content, wanted);
}
