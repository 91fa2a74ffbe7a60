//! Documented limits (docs/limits.md), each with a clear error that loses
//! nothing else: calls per message, serve's input line length.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use baton_test_support::own_process;
use serde_json::{json, Value};

fn serve(dir: &std::path::Path) -> std::process::Child {
    crate::support::baton()
        .args(["serve", "--cwd", dir.to_str().unwrap()])
        .args(["--permission-mode", "bypassPermissions"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Protocol lines without the lifecycle ones.
fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| !v["type"].as_str().unwrap().starts_with("call_"))
        .collect()
}

#[test]
fn calls_past_ten_thousand_in_one_message_get_an_error_result_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(dir.path());
    // Unknown tools: cheap calls, no processes; the limit is about counts.
    let calls: Vec<Value> = (0..10_003)
        .map(|i| json!({"type": "tool_use", "id": format!("c{i}"), "name": "Nope", "input": {}}))
        .collect();
    let message = json!({"type": "message", "message": {"role": "assistant", "content": calls}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{message}").unwrap();
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let lines = lines(&out);
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 10_003, "one result per call, limit or not");
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["index"], i);
        let text = r["block"]["content"][0]["text"].as_str().unwrap();
        if i < 10_000 {
            assert_eq!(r["outcome"]["kind"], "unknown_tool", "{r}");
        } else {
            assert_eq!(r["outcome"]["kind"], "invalid_input", "{r}");
            assert!(text.contains("more than 10000 tool calls"), "{text}");
        }
    }
    let done = lines.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["summary"]["calls"], 10_003);
}

#[test]
fn a_line_over_64_mib_is_an_error_costs_at_most_the_limit_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let pid = child.id();
    let writer = std::thread::spawn(move || {
        // A JSON string of 192 MiB, written in pieces: three times the limit,
        // so holding it whole would show in the peak memory.
        stdin.write_all(b"{\"type\":\"add\",\"pad\":\"").unwrap();
        let piece = vec![b'x'; 1 << 20];
        for _ in 0..192 {
            stdin.write_all(&piece).unwrap();
        }
        stdin.write_all(b"\"}\n").unwrap();
        let message = json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "after", "name": "Sleep", "input": {"duration_ms": 1}}]}});
        writeln!(stdin, "{message}").unwrap();
        stdin
    });
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut got = Vec::new();
    let hwm_kb: u64 = loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "stdout ended: {got:?}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["type"] == "done" {
            // Peak memory so far, before the process exits.
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            got.push(v);
            break status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap();
        }
        got.push(v);
    };
    drop(writer.join().unwrap());
    assert!(child.wait().unwrap().success());
    let got: Vec<&Value> = got
        .iter()
        .filter(|v| !v["type"].as_str().unwrap().starts_with("call_"))
        .collect();
    assert_eq!(got[0]["type"], "error", "{got:?}");
    assert_eq!(got[0]["line"], 1);
    assert!(got[0]["message"]
        .as_str()
        .unwrap()
        .contains("longer than 67108864 bytes"));
    let result = got.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(result["tool_use_id"], "after");
    assert_eq!(result["outcome"]["kind"], "success");
    // Never held whole: at most the limit's worth is buffered (64 MiB, then
    // dropped) on top of the process's own ~30 MB, far below the 192 MiB.
    assert!(hwm_kb < 150 * 1024, "peak {hwm_kb} kB for a 192 MiB line");
}

/// `baton run` on `message`: its stdout, and its peak resident size in kB
/// (`wait4`'s `ru_maxrss`, the child's own; but the kernel counts the
/// spawning process's peak in it too, since the child shared its memory
/// until `exec`, so the test that calls this runs in a process of its own).
// The child is reaped by `wait4` (for its `rusage`), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run_with_peak(dir: &std::path::Path, message: &std::path::Path) -> (String, i64) {
    let out_path = dir.join("out.json");
    let child = crate::support::baton()
        .args(["run", "--json", "--cwd", dir.to_str().unwrap()])
        .arg(message)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: a zeroed `rusage` is valid; `wait4` reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    (std::fs::read_to_string(out_path).unwrap(), usage.ru_maxrss)
}

#[test]
fn calls_past_the_limit_cost_their_ids_not_their_inputs() {
    own_process!(
        calls_past_the_limit_cost_their_ids_not_their_inputs,
        calls_past_the_limit
    );
}

fn calls_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // 100,000 calls, each input a list of 150 numbers: 0.4 KB of text,
    // about 5 KB as a parsed tree. Read whole (and copied into each call,
    // as before), the message alone would be about 1 GB.
    let pad = format!("[{}]", vec!["0"; 150].join(","));
    let mut text = String::from(r#"{"role":"assistant","content":["#);
    for i in 0..100_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"type":"tool_use","id":"c{i}","name":"Nope","input":{{"pad":{pad}}}}}"#
        ));
    }
    text.push_str("]}");
    let path = dir.path().join("message.json");
    std::fs::write(&path, &text).unwrap();
    let (out, peak_kb) = run_with_peak(dir.path(), &path);
    let answer: Value = serde_json::from_str(&out).unwrap();
    let blocks = answer["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 100_000, "one result per call");
    assert_eq!(blocks[99_999]["tool_use_id"], "c99999");
    let last = blocks[99_999]["content"][0]["text"].as_str().unwrap();
    assert!(last.contains("more than 10000 tool calls"), "{last}");
    let first = blocks[0]["content"][0]["text"].as_str().unwrap();
    assert!(!first.contains("more than"), "{first}");
    // The text (40 MB), 10,000 calls read whole (about 100 MB with their
    // copies) and an id and a name for each of the rest; well below 1 GB.
    assert!(peak_kb < 400 * 1024, "peak {peak_kb} kB");
}
