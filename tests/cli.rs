//! The `baton` binary: run, serve, tools (SPEC §16).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use baton_test_support::serve::Serve;
use baton_test_support::{cli, procs};
use serde_json::{json, Value};

use crate::support::{baton, BATON};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run_with_stdin(args: &[&str], stdin: &str) -> std::process::Output {
    cli::with_stdin(baton().args(args), stdin)
}

#[test]
fn run_prints_one_result_per_call_in_order() {
    let state = tempfile::tempdir().unwrap();
    let out = baton()
        .args(["run", "--cwd"])
        .arg(repo())
        .arg("--state-dir")
        .arg(state.path())
        .arg(repo().join("examples/message.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["role"], "user");
    let ids: Vec<&str> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05"]
    );
    // The call with a bad input is an error result, the batch still ran.
    assert_eq!(message["content"][4]["is_error"], true);
}

#[test]
fn run_with_events_prints_json_lines_ending_with_done() {
    let msg = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "s", "name": "Sleep", "input": {"duration_ms": 300}},
        {"type": "tool_use", "id": "g", "name": "Glob", "input": {"pattern": "*.toml"}},
    ]});
    let out = run_with_stdin(
        &["run", "--events", "--cwd", repo().to_str().unwrap(), "-"],
        &msg.to_string(),
    );
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "result")
        .map(|l| l["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["s", "g"]);
    let done = lines.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["message"]["content"].as_array().unwrap().len(), 2);
}

#[test]
fn unusable_input_exits_2_with_one_line() {
    for input in [
        "this is not json",
        "[1,2]",
        r#"{"role":"user","content":[]}"#,
        r#"{"role":"assistant","content":[{"type":"tool_use","name":"Glob"}]}"#,
    ] {
        let out = run_with_stdin(&["run", "-"], input);
        assert_eq!(out.status.code(), Some(2), "{input}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("baton: "), "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = baton()
        .args(["run", "/no/such/message.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn tools_prints_the_pool_in_both_formats() {
    let out = baton().args(["tools"]).output().unwrap();
    let defs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Read") && names.contains(&"Glob"),
        "{names:?}"
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "built-ins are sorted by name");
    let out = baton()
        .args(["tools", "--format", "openai"])
        .output()
        .unwrap();
    let defs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(defs[0]["type"], "function");
    let out = baton()
        .args(["tools", "--format", "yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn serve_runs_several_messages_with_interrupts_and_approvals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"permissions":{"ask":["Glob"]}}"#).unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
    );

    // Message 1: streamed call by call; the Glob call asks and is approved.
    s.send(json!({"type": "add", "tool_use": {"type": "tool_use", "id": "a1", "name": "Sleep", "input": {"duration_ms": 100}}}));
    s.send(json!({"type": "add", "id": "a2", "name": "Glob", "input": "{\"pattern\": \"*.txt\"}"}));
    s.send(json!({"type": "end"}));
    let mut lines = Vec::new();
    loop {
        let line = s.any_next();
        if line["type"] == "permission_request" {
            assert_eq!(line["tool_use_id"], "a2");
            s.send(
                json!({"type": "approve", "request_id": line["request_id"], "decision": "allow"}),
            );
        }
        let done = line["type"] == "done";
        lines.push(line);
        if done {
            break;
        }
    }
    let done = lines.last().unwrap();
    let blocks = done["message"]["content"].as_array().unwrap();
    assert_eq!(blocks[1]["tool_use_id"], "a2");
    assert!(blocks[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("a.txt"));

    // Message 2: denied approval.
    s.send(
        json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "b1", "name": "Glob", "input": {"pattern": "*"}}]}}),
    );
    let mut denied = false;
    loop {
        let line = s.any_next();
        if line["type"] == "permission_request" {
            s.send(json!({"type": "approve", "request_id": line["request_id"], "decision": "deny", "reason": "no globbing"}));
        }
        if line["type"] == "result" {
            assert_eq!(line["block"]["is_error"], true);
            assert!(line["block"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("no globbing"));
            denied = true;
        }
        if line["type"] == "done" {
            break;
        }
    }
    assert!(denied);

    // Message 3: interrupted while sleeping; a bad line in between is reported.
    s.send(json!({"type": "add", "id": "c1", "name": "Sleep", "input": {"duration_ms": 10000}}));
    s.send(json!({"type": "teleport"}));
    s.send(json!({"type": "interrupt", "kind": "cancel"}));
    s.send(json!({"type": "end"}));
    let lines = s.until("done");
    assert!(lines.iter().any(|l| l["type"] == "error"));
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["outcome"]["kind"], "cancelled");
    assert_eq!(lines.last().unwrap()["summary"]["interrupted"], "cancel");

    s.send(json!({"type": "shutdown"}));
    let status = s.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn concurrency_env_and_permission_mode_reach_the_engine() {
    let msg = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "s1", "name": "Sleep", "input": {"duration_ms": 2000}},
        {"type": "tool_use", "id": "s2", "name": "Sleep", "input": {"duration_ms": 2000}},
    ]})
    .to_string();
    let timed = |env: Option<&str>| {
        let mut cmd = baton();
        cmd.args(["run", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(n) = env {
            cmd.env("BATON_MAX_TOOL_CONCURRENCY", n);
        }
        let start = std::time::Instant::now();
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(msg.as_bytes())
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
        start.elapsed()
    };
    // Two safe 2 s calls: together by default, one after the other with a
    // cap of 1. Compared with each other, not with a fixed bound, so slow
    // start-ups on a loaded machine cancel out: 2 s apart is expected, more
    // than 1 s apart is required.
    let together = timed(None);
    let serial = timed(Some("1"));
    assert!(serial >= Duration::from_millis(4000), "{serial:?}");
    assert!(
        serial > together + Duration::from_millis(1000),
        "together {together:?}, serial {serial:?}"
    );

    // Writing a file asks by default (denied without a terminal);
    // acceptEdits lets edits inside the workspace run.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new.txt");
    let write =
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "w", "name": "Write",
        "input": {"file_path": target, "content": "hi\n"}}]})
        .to_string();
    let cwd = dir.path().to_str().unwrap();
    let out = run_with_stdin(&["run", "--cwd", cwd, "-"], &write);
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["is_error"], true, "{message}");
    assert!(!target.exists());
    let out = run_with_stdin(
        &["run", "--cwd", cwd, "--permission-mode", "acceptEdits", "-"],
        &write,
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(message["content"][0].get("is_error").is_none(), "{message}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
    let out = run_with_stdin(&["run", "--permission-mode", "yolo", "-"], &write);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn serve_carries_context_changes_from_one_message_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inner")).unwrap();
    let mut s = Serve::start(BATON, &["--cwd", dir.path().to_str().unwrap()]);
    s.send(
        json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "cd", "name": "Bash", "input": {"command": "cd inner"}}]}}),
    );
    let first = s.until("done");
    assert_eq!(first.last().unwrap()["summary"]["calls"], 1);
    s.send(
        json!({"type": "message", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "pwd", "name": "Bash", "input": {"command": "pwd"}}]}}),
    );
    let second = s.until("done");
    let result = second.iter().find(|l| l["type"] == "result").unwrap();
    let text = result["block"]["content"][0]["text"].as_str().unwrap();
    assert!(text.trim_end().ends_with("inner"), "{text}");
    drop(s.child.stdin.take());
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn serve_denies_open_questions_when_the_host_closes_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"permissions":{"ask":["Glob"]}}"#).unwrap();
    let input = [
        json!({"type": "add", "id": "g", "name": "Glob", "input": {"pattern": "*"}}),
        json!({"type": "end"}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let out = run_with_stdin(
        &[
            "serve",
            "--cwd",
            dir.path().to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
        &input,
    );
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["block"]["is_error"], true);
    assert_eq!(lines.last().unwrap()["type"], "done");
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn signals_stop_the_calls_and_still_report_their_results() {
    let dir = tempfile::tempdir().unwrap();
    for (how, sig) in [("serve", "-TERM"), ("run", "-INT")] {
        let followed = dir.path().join(format!("followed-by-{how}"));
        std::fs::write(&followed, "").unwrap();
        let needle = followed.display().to_string();
        let tail = json!({"type": "tool_use", "id": "t", "name": "Bash",
            "input": {"command": format!("tail -f {needle}")}});
        let mut child = baton()
            .args([how, "--cwd", dir.path().to_str().unwrap()])
            .args(if how == "run" {
                vec!["--events", "-"]
            } else {
                vec![]
            })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if how == "serve" {
            writeln!(stdin, "{}", json!({"type": "add", "tool_use": tail})).unwrap();
            stdin.flush().unwrap();
        } else {
            let msg = json!({"role": "assistant", "content": [tail]});
            writeln!(stdin, "{msg}").unwrap();
            drop(stdin);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while procs::running(&needle) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "{how}: tail never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(child.id(), sig);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{how}: {:?}", out.status);
        let text = String::from_utf8(out.stdout).unwrap();
        let result: Value = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["type"] == "result")
            .unwrap_or_else(|| panic!("{how}: no result in {text}"));
        assert_eq!(result["outcome"]["kind"], "cancelled", "{how}");
        assert_eq!(procs::running(&needle), 0, "{how}: tail left running");
    }
}
