//! `baton run` writes its answer as the results come, in call order, and
//! never holds a large message's answer whole (issue 25 item 10, issue 26).
//!
//! A message of 100,000 calls whose call 9,999 is held open by the test
//! (`cat` of a FIFO nobody writes to yet): the first results must reach
//! stdout while that call still runs, so the answer cannot have been held
//! back until the end. No timing is asserted: the test waits as long as it
//! must (up to a generous limit) and then releases the call itself.
//!
//! The answer's bytes are the old `Value` renderers' exactly; that is
//! checked per format in `wire/src/answer_tests.rs`. Here each
//! format's answer on stdout is compared with the answer the `--events`
//! `done` line carries, which is written by another path.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

const CALLS: usize = 100_000;
/// The last call that runs (the rest are past the per-message limit).
const HELD: usize = 9_999;

fn baton(dir: &Path) -> Command {
    let mut cmd = crate::support::baton();
    cmd.current_dir(dir)
        .env("HOME", dir)
        .args(["run", "--cwd"])
        .arg(dir)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(["--tool-search", "false", "--permission-mode", "default"]);
    cmd
}

fn make_fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("a path");
    // SAFETY: a valid NUL-terminated path.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo: {}", std::io::Error::last_os_error());
}

#[test]
fn the_answer_to_100000_calls_reaches_stdout_before_the_last_call_ends() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fifo = dir.path().join("gate");
    make_fifo(&fifo);
    let calls: Vec<Value> = (0..CALLS)
        .map(|i| {
            let (name, input) = if i == HELD {
                ("Bash", json!({"command": "cat gate"}))
            } else {
                ("Sleep", json!({"duration_ms": 0}))
            };
            json!({"type": "tool_use", "id": format!("toolu_{i:06}"), "name": name, "input": input})
        })
        .collect();
    let message = dir.path().join("message.json");
    let text = json!({"role": "assistant", "content": calls}).to_string();
    std::fs::write(&message, text).expect("the message is written");

    let mut child = baton(dir.path())
        .arg(&message)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("baton starts");
    let mut stdout = child.stdout.take().expect("a stdout pipe");
    let (first, first_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = [0u8; 1 << 16];
        loop {
            match stdout.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    all.extend_from_slice(&chunk[..n]);
                    let _ = first.send(all.len());
                }
            }
        }
        all
    });

    // Bytes arrive while call 9,999 still waits on the FIFO.
    let early = first_rx.recv_timeout(Duration::from_secs(300));
    let still_running = child.try_wait().expect("the child's state").is_none();
    // Release the held call whatever happened, so nothing is left behind.
    let gate = std::fs::OpenOptions::new().write(true).open(&fifo);
    drop(gate);
    let status = child.wait().expect("baton ends");
    let out = reader.join().expect("the reader thread");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let early = early.expect("part of the answer reached stdout while a call still ran");
    assert!(
        early > 0 && still_running,
        "stdout had output before the end"
    );
    assert!(status.success(), "baton run failed: {err}");

    let answer: Value = serde_json::from_slice(&out).expect("the answer is one JSON message");
    assert_eq!(answer["role"], "user");
    let blocks = answer["content"].as_array().expect("content");
    assert_eq!(blocks.len(), CALLS, "one result per call");
    for (i, block) in blocks.iter().enumerate() {
        assert_eq!(
            block["tool_use_id"],
            format!("toolu_{i:06}"),
            "in call order"
        );
        let refused = block["is_error"] == json!(true);
        assert_eq!(refused, i > HELD, "call {i}: {block}");
    }
}

/// A small message in every wire format, answered by `run` and by
/// `run --events`: the same answer, and one `result` line per call whose
/// block is well formed.
#[test]
fn every_format_answers_the_same_on_stdout_and_in_the_done_line() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let messages = [
        (
            "anthropic",
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "two calls"},
                {"type": "tool_use", "id": "toolu_a", "name": "Sleep", "input": {"duration_ms": 0}},
                {"type": "tool_use", "id": "toolu_b", "name": "NoSuchTool", "input": {}},
            ]}),
        ),
        (
            "openai-chat",
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "Sleep", "arguments": "{\"duration_ms\":0}"}},
                {"id": "call_b", "type": "function", "function": {"name": "NoSuchTool", "arguments": "{}"}},
            ]}),
        ),
        (
            "openai-responses",
            json!({"object": "response", "output": [
                {"type": "function_call", "call_id": "call_a", "name": "Sleep", "arguments": "{\"duration_ms\":0}"},
                {"type": "custom_tool_call", "call_id": "call_c", "name": "NoSuchTool", "input": "x"},
            ]}),
        ),
    ];
    for (format, message) in messages {
        let file = dir.path().join(format!("{format}.json"));
        std::fs::write(&file, message.to_string()).expect("the message is written");
        let plain = baton(dir.path())
            .args(["--format", format])
            .arg(&file)
            .output()
            .expect("baton runs");
        assert!(
            plain.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&plain.stderr)
        );
        let answer: Value = serde_json::from_slice(&plain.stdout).expect("a JSON answer");
        let events = baton(dir.path())
            .args(["--format", format, "--events"])
            .arg(&file)
            .output()
            .expect("baton runs");
        assert!(events.status.success(), "{format} --events");
        let lines: Vec<Value> = String::from_utf8_lossy(&events.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect();
        let done = lines
            .iter()
            .find(|l| l["type"] == "done")
            .expect("a done line");
        assert_eq!(done["message"], answer, "{format}: the done line's answer");
        let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
        assert_eq!(results.len(), 2, "{format}: a result line per call");
        for (i, line) in results.iter().enumerate() {
            assert_eq!(line["index"], i);
            assert_eq!(line["block"]["type"], "tool_result");
            assert_eq!(line["block"]["tool_use_id"], line["tool_use_id"]);
            assert_eq!(
                line["block"]["is_error"] == json!(true),
                i == 1,
                "{format}: {line}"
            );
        }
        // The Responses answer of a custom tool call is its own type.
        if format == "openai-responses" {
            assert_eq!(answer[1]["type"], "custom_tool_call_output", "{answer}");
        }
    }
}
