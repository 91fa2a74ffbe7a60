//! Hooks as users configure them, through the `baton` binary: plugins,
//! the `env` block, Claude Code's `tool_response` shapes, `systemMessage`,
//! tolerant loading, and every handler option (SPEC §12; issue 15).
//!
//! Scripts are real (bash, jq, node, python3; `./.ci/deps` installs them);
//! HTTP hooks talk to a server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks")
}

fn need(program: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "`{program}` is missing: run ./.ci/deps");
}

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

struct Run {
    results: Vec<Value>,
    done: Value,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    fn text(&self, id: &str) -> String {
        let r = self.result(id);
        r["block"]["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    fn result(&self, id: &str) -> &Value {
        self.results
            .iter()
            .find(|r| r["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}: {:?}", self.results))
    }

    fn denied(&self, id: &str) -> bool {
        self.result(id)["outcome"]["kind"] == "denied"
    }
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Env {
            home: home.canonicalize().unwrap(),
            project: project.canonicalize().unwrap(),
            _dir: dir,
        }
    }

    fn settings(&self, value: Value) {
        std::fs::create_dir_all(self.project.join(".claude")).unwrap();
        std::fs::write(
            self.project.join(".claude/settings.json"),
            serde_json::to_string_pretty(&value).unwrap(),
        )
        .unwrap();
    }

    fn run(&self, calls: Value) -> Run {
        let message = json!({"role": "assistant", "content": calls});
        let start = Instant::now();
        let mut child = crate::support::baton()
            .args(["run", "--events", "--cwd"])
            .arg(&self.project)
            .arg("--state-dir")
            .arg(self.project.join(".state"))
            // Denials are what these tests provoke; siblings must still run
            // (today a denied Bash call cancels them; issue 8 changes that).
            .args(["--sibling-policy", "off"])
            .arg("-")
            .env("HOME", &self.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(message.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let elapsed = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "baton failed: {stderr}\n{stdout}");
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        Run {
            results: lines
                .iter()
                .filter(|l| l["type"] == "result")
                .cloned()
                .collect(),
            done: lines
                .iter()
                .find(|l| l["type"] == "done")
                .cloned()
                .unwrap_or(Value::Null),
            stderr,
            elapsed,
        }
    }
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

#[test]
fn plugin_hooks_run_with_their_root_in_exec_and_shell_form() {
    need("node");
    need("jq");
    let env = Env::new();
    let root = fixtures().join("plugins/guard");
    std::fs::create_dir_all(env.home.join(".claude/plugins")).unwrap();
    std::fs::write(
        env.home.join(".claude/plugins/installed_plugins.json"),
        json!({"version": 2, "plugins": {"guard@baton-fixtures": [
            {"scope": "user", "installPath": root, "version": "1.0.0"}]}})
        .to_string(),
    )
    .unwrap();
    env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "enabledPlugins": {"guard@baton-fixtures": true, "absent@nowhere": true}
    }));
    let victim = env.home.join("x");
    std::fs::create_dir_all(&victim).unwrap();
    let run = env.run(json!([
        bash("rm", "rm -rf ~/x"),
        bash("commit", "echo '[main 1a2b3c4d] add feature' # git commit"),
    ]));
    assert!(run.denied("rm"), "{}", run.text("rm"));
    assert!(
        run.text("rm").contains("plugin root known"),
        "{}",
        run.text("rm")
    );
    assert!(victim.exists(), "the guard must have stopped the delete");
    assert!(
        run.text("commit")
            .contains("commit 1a2b3c4d recorded by the guard plugin"),
        "{}",
        run.text("commit")
    );
    assert!(run.stderr.contains("absent@nowhere"), "{}", run.stderr);
}

#[test]
fn env_block_reaches_bash_and_hooks_and_system_message_reaches_the_user() {
    need("jq");
    let env = Env::new();
    let script = fixtures().join("scripts/commit_size.sh");
    env.settings(json!({
        "env": {"BATON_FIXTURE_FLAG": "from-settings"},
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": format!("bash {}", script.display())}]},
            {"matcher": "Bash", "hooks": [{"type": "command",
                "command": "test \"$BATON_FIXTURE_FLAG\" = from-settings || echo '{\"decision\":\"block\",\"reason\":\"hook lacks env\"}'"}]}
        ]}
    }));
    let run = env.run(json!([bash(
        "c",
        "echo \"$BATON_FIXTURE_FLAG\"; echo ' 3 files changed, 250 insertions(+)'"
    )]));
    assert!(
        run.text("c").starts_with("from-settings"),
        "{}",
        run.text("c")
    );
    assert!(
        !run.text("c").contains("hook lacks env"),
        "{}",
        run.text("c")
    );
    assert!(
        run.stderr
            .contains("baton: hook: large commit: 250 insertions"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.result("c")["system_messages"],
        json!(["large commit: 250 insertions"])
    );
}

#[test]
fn tool_response_has_claude_codes_shape_per_tool() {
    let env = Env::new();
    let log = env.project.join("responses.jsonl");
    let script = fixtures().join("scripts/record_response.py");
    env.settings(json!({
        "env": {"HOOK_LOG": log},
        "permissions": {"allow": ["Bash", "Edit", "Read"]},
        "hooks": {"PostToolUse": [{"matcher": "Bash|Write|Edit|Read",
            "hooks": [{"type": "command", "command": format!("python3 {}", script.display())}]}]}
    }));
    let file = env.project.join("notes.txt");
    let f = file.display().to_string();
    let run = env.run(json!([
        bash("b", "printf 'one\\ntwo\\n'"),
        {"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": f, "content": "alpha\nbeta\n"}},
        {"type": "tool_use", "id": "r", "name": "Read", "input": {"file_path": f}},
        {"type": "tool_use", "id": "e", "name": "Edit", "input": {"file_path": f, "old_string": "beta", "new_string": "gamma"}},
    ]));
    for id in ["b", "w", "r", "e"] {
        assert_eq!(
            run.result(id)["outcome"]["kind"],
            "success",
            "{}",
            run.text(id)
        );
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let by_tool = |tool: &str| -> Value {
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["tool"] == tool)
            .unwrap_or_else(|| panic!("no {tool} in {text}"))["response"]
            .clone()
    };
    let b = by_tool("Bash");
    assert_eq!(b["stdout"], "one\ntwo");
    assert_eq!(b["stderr"], "");
    assert_eq!(b["interrupted"], false);
    let w = by_tool("Write");
    assert_eq!(w["type"], "create");
    assert_eq!(w["filePath"], f.as_str());
    assert_eq!(w["content"], "alpha\nbeta\n");
    let r = by_tool("Read");
    assert_eq!(r["type"], "text");
    assert_eq!(r["file"]["filePath"], f.as_str());
    assert_eq!(r["file"]["content"], "alpha\nbeta\n");
    assert_eq!(r["file"]["startLine"], 1);
    let e = by_tool("Edit");
    assert_eq!(e["filePath"], f.as_str());
    assert_eq!(e["oldString"], "beta");
    assert_eq!(e["newString"], "gamma");
}

#[test]
fn bad_entries_cost_only_themselves_and_rule_matchers_filter_calls() {
    let env = Env::new();
    env.settings(json!({
        "permissions": {"allow": ["Bash", "Edit"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash(", "hooks": [{"type": "command", "command": "exit 2"}]},
                {"matcher": "Bash", "hooks": [{"type": "wat"}]},
                {"matcher": "Write(*.py)", "hooks": [{"type": "command", "command": "echo 'no python files' >&2; exit 2"}]},
                {"matcher": "Bash(*)", "hooks": [{"type": "command",
                    "command": "jq -e '.tool_input.command | test(\"forbidden\")' >/dev/null && { echo 'forbidden word' >&2; exit 2; }; exit 0"}]}
            ],
            "WorktreeCreate": [{"hooks": [{"type": "command", "command": "true"}]}]
        }
    }));
    let py = env.project.join("a.py").display().to_string();
    let txt = env.project.join("a.txt").display().to_string();
    let run = env.run(json!([
        bash("ok", "echo fine"),
        bash("no", "echo forbidden"),
        {"type": "tool_use", "id": "py", "name": "Write", "input": {"file_path": py, "content": "x"}},
        {"type": "tool_use", "id": "txt", "name": "Write", "input": {"file_path": txt, "content": "x"}},
    ]));
    assert_eq!(run.text("ok"), "fine");
    assert!(run.denied("no") && run.text("no").contains("forbidden word"));
    assert!(run.denied("py") && run.text("py").contains("no python files"));
    assert_eq!(
        run.result("txt")["outcome"]["kind"],
        "success",
        "{}",
        run.text("txt")
    );
    for needle in [
        "hooks.PreToolUse[0].matcher",
        "hooks.PreToolUse[1].hooks[0]",
        "WorktreeCreate",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
}

#[test]
fn on_failure_block_if_filters_once_and_async() {
    let env = Env::new();
    let marks = env.project.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let m = marks.display().to_string();
    env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            // A crashing guard: blocks only where it says onFailure: block.
            {"type": "command", "command": "jq -e '.tool_input.command | test(\"strict\")' >/dev/null || exit 0; exit 7", "onFailure": "block"},
            {"type": "command", "command": "jq -e '.tool_input.command | test(\"lenient\")' >/dev/null || exit 0; exit 7"},
            {"type": "command", "command": format!("touch {m}/push-$$"), "if": "Bash(git push:*)"},
            {"type": "command", "command": format!("touch {m}/once-$$"), "once": true},
            {"type": "command", "command": format!("sleep 3; touch {m}/async-done"), "async": true}
        ]}]}
    }));
    let run = env.run(json!([
        bash("strict", "echo strict"),
        bash("lenient", "echo lenient"),
        bash(
            "push",
            "git push origin main --dry-run 2>/dev/null; echo pushed"
        ),
        bash("status", "echo status"),
    ]));
    assert!(run.denied("strict"), "{}", run.text("strict"));
    assert!(
        run.text("strict").contains("onFailure: block"),
        "{}",
        run.text("strict")
    );
    assert_eq!(run.text("lenient"), "lenient");
    assert!(run.result("lenient")["diagnostics"]
        .to_string()
        .contains("status 7"));
    let names: Vec<String> = std::fs::read_dir(&marks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("push-")).count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| n.starts_with("once-")).count(),
        1,
        "{names:?}"
    );
    // Four calls each fired the 3 s async hook; none waited for it.
    assert!(
        run.elapsed < Duration::from_secs(3 * 4),
        "{:?}",
        run.elapsed
    );
    assert!(
        !names.contains(&"async-done".to_string()),
        "async hooks do not delay calls"
    );
}

#[test]
fn rewrites_that_disagree_fail_the_call_and_updated_output_replaces_it() {
    let env = Env::new();
    env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "jq -e '.tool_input.command == \"echo two\"' >/dev/null || exit 0; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"updatedInput\":{\"command\":\"echo A\"}}}'"},
                {"type": "command", "command": "jq -e '.tool_input.command == \"echo two\"' >/dev/null || exit 0; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"updatedInput\":{\"command\":\"echo B\"}}}'"}
            ]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "jq -e '.tool_response.stdout == \"secret\"' >/dev/null || exit 0; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"updatedToolOutput\":\"[redacted]\"}}'"}
            ]}]
        }
    }));
    let run = env.run(json!([
        bash("two", "echo two"),
        bash("secret", "echo secret")
    ]));
    assert!(run.denied("two"), "{}", run.text("two"));
    assert!(
        run.text("two").contains("different updatedInput"),
        "{}",
        run.text("two")
    );
    assert_eq!(run.text("secret"), "[redacted]");
}

/// A one-connection-at-a-time HTTP server on 127.0.0.1 answering with
/// `respond(body)`; `None` means never answer.
fn http_server(respond: fn(&str) -> Option<(u16, String)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let body = loop {
                    let n = stream.read(&mut chunk).unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break format!("{}\n{}", &text[..end], &text[end + 4..]);
                        }
                    }
                };
                match respond(&body) {
                    Some((status, reply)) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                            reply.len()
                        );
                    }
                    None => std::thread::sleep(Duration::from_secs(30)),
                }
            });
        }
    });
    format!("http://{addr}")
}

#[test]
fn http_hooks_success_timeout_and_server_error() {
    let url = http_server(|request| {
        if request.contains("deny-me") {
            // Headers expand only allowed variables.
            let ok = request.contains("x-token: Bearer tok123") && request.contains("x-other: [] ");
            Some((200, json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": format!("http says no (headers ok: {ok})")}}).to_string()))
        } else if request.contains("hang-me") {
            None
        } else if request.contains("break-me") {
            Some((500, "boom".into()))
        } else {
            Some((200, String::new()))
        }
    });
    let env = Env::new();
    env.settings(json!({
        "env": {"HOOK_TOKEN": "tok123", "HOOK_OTHER": "leak"},
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "http", "url": url, "timeout": 2,
            "headers": {"X-Token": "Bearer $HOOK_TOKEN", "X-Other": "[$HOOK_OTHER] "},
            "allowedEnvVars": ["HOOK_TOKEN"]
        }]}]}
    }));
    let run = env.run(json!([
        bash("deny", "echo deny-me"),
        bash("hang", "echo hang-me"),
        bash("err", "echo break-me"),
        bash("fine", "echo fine"),
    ]));
    assert!(run.denied("deny"), "{}", run.text("deny"));
    assert!(
        run.text("deny").contains("http says no (headers ok: true)"),
        "{}",
        run.text("deny")
    );
    assert_eq!(run.text("hang"), "hang-me");
    assert!(run.result("hang")["diagnostics"]
        .to_string()
        .contains("did not answer within 2s"));
    assert_eq!(run.text("err"), "break-me");
    assert!(run.result("err")["diagnostics"].to_string().contains("500"));
    assert_eq!(run.text("fine"), "fine");
    let _ = &run.done;
}

#[test]
fn permission_request_and_denied_hooks_answer_before_the_approver() {
    let env = Env::new();
    let script = env.project.join("answer.sh");
    std::fs::write(
        &script,
        r#"#!/bin/bash
payload=$(cat)
event=$(jq -r .hook_event_name <<<"$payload")
cmd=$(jq -r '.tool_input.command // .tool_input.file_path' <<<"$payload")
if [ "$event" = PermissionDenied ]; then
  echo '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}'
  exit 0
fi
case "$cmd" in
  */a.txt) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
      "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Write"}],"behavior":"allow","destination":"session"}]}}}' ;;
  "touch nope") echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not today"}}}' ;;
  "touch rewrite") echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"rm -f rewritten"}}}}' ;;
esac
exit 0
"#,
    )
    .unwrap();
    let hook = json!([{"type": "command", "command": format!("bash {}", script.display())}]);
    env.settings(json!({
        "permissions": {"deny": ["Bash(rm:*)"]},
        "hooks": {
            "PermissionRequest": [{"matcher": "Write|Bash", "hooks": hook}],
            "PermissionDenied": [{"matcher": "Bash", "hooks": hook}]
        }
    }));
    let a = env.project.join("a.txt").display().to_string();
    let b = env.project.join("b.txt").display().to_string();
    let run = env.run(json!([
        {"type": "tool_use", "id": "a", "name": "Write", "input": {"file_path": a, "content": "x"}},
        {"type": "tool_use", "id": "b", "name": "Write", "input": {"file_path": b, "content": "x"}},
        bash("nope", "touch nope"),
        bash("rewrite", "touch rewrite"),
        bash("rm", "rm -f x"),
    ]));
    // The hook allowed a.txt and added a session rule that allows b.txt.
    assert_eq!(
        run.result("a")["outcome"]["kind"],
        "success",
        "{}",
        run.text("a")
    );
    assert_eq!(
        run.result("b")["outcome"]["kind"],
        "success",
        "{}",
        run.text("b")
    );
    assert!(
        run.denied("nope") && run.text("nope").contains("not today"),
        "{}",
        run.text("nope")
    );
    assert!(!env.project.join("nope").exists());
    // A rewrite is checked against the deny rules again.
    assert!(run.denied("rewrite"), "{}", run.text("rewrite"));
    assert!(
        run.text("rewrite").contains("Bash(rm:*)"),
        "{}",
        run.text("rewrite")
    );
    assert!(
        run.denied("rm") && run.text("rm").contains("may retry"),
        "{}",
        run.text("rm")
    );
}

#[test]
fn post_tool_batch_sees_every_call_and_its_context_reaches_done_and_the_message() {
    let env = Env::new();
    env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command":
            "jq -c '{systemMessage: \"batch checked\", hookSpecificOutput: {hookEventName: \"PostToolBatch\", additionalContext: ([.tool_calls[] | .tool_use_id + \"=\" + .tool_response.stdout] | join(\",\"))}}'"}]}]}
    }));
    let run = env.run(json!([bash("one", "echo 1"), bash("two", "echo 2")]));
    assert_eq!(
        run.done["summary"]["additional_context"],
        json!(["one=1,two=2"])
    );
    let content = run.done["message"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{content:?}");
    assert_eq!(content[2], json!({"type": "text", "text": "one=1,two=2"}));
    assert!(
        run.stderr.contains("baton: hook: batch checked"),
        "{}",
        run.stderr
    );
}

#[test]
fn session_start_runs_before_the_calls_and_session_end_after() {
    let env = Env::new();
    let log = env.project.join("session.log");
    let l = log.display().to_string();
    env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command",
                "command": format!("jq -r '\"start \" + .source + \" \" + .session_id' > {l}")}]}],
            // Fails when SessionStart did not prepare the log first.
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": format!("test -f {l} || exit 2; echo tool >> {l}")}]}],
            "SessionEnd": [{"hooks": [{"type": "command",
                "command": format!("jq -r '\"end \" + .reason' >> {l}")}]}]
        }
    }));
    let run = env.run(json!([bash("a", "echo a")]));
    assert_eq!(run.text("a"), "a");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("start startup baton-"), "{text}");
    assert_eq!(&lines[1..], ["tool", "end other"]);
}
