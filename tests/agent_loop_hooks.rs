//! `baton agent` fires the model loop's own hook events (issue 22 item 9)
//! against a mock Anthropic API on 127.0.0.1: UserPromptSubmit before the
//! prompt (plain stdout is context; exit 2 blocks and nothing is sent) and
//! Stop when the model ends its turn (a block continues the loop with the
//! reason, once, thanks to `stop_hook_active`). Hooks are shell scripts of
//! the kind people publish, reading the transcript that Baton writes in
//! Claude Code's JSONL shape with jq.

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use baton_test_support::{model_server, procs, scenario};
use scenario::Scenario;
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct Mock {
    answers: Arc<Mutex<Vec<String>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn handle(State(mock): State<Mock>, body: String) -> Response {
    mock.requests
        .lock()
        .unwrap()
        .push(serde_json::from_str(&body).unwrap_or(Value::Null));
    let text = {
        let mut answers = mock.answers.lock().unwrap();
        if answers.is_empty() {
            "(no more answers)".to_string()
        } else {
            answers.remove(0)
        }
    };
    let s = Scenario {
        text: Some(text),
        thinking: None,
        server_tool: false,
        calls: vec![],
    };
    (
        [("content-type", "text/event-stream")],
        scenario::sse(&scenario::anthropic(&s, &[])),
    )
        .into_response()
}

fn start(answers: &[&str]) -> (Mock, String) {
    let mock = Mock {
        answers: Arc::new(Mutex::new(answers.iter().map(|a| a.to_string()).collect())),
        ..Mock::default()
    };
    let base = model_server::serve_post(handle, mock.clone());
    (mock, base)
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.display().to_string()
}

fn settings(dir: &Path, hooks: Value) -> String {
    let path = dir.join("settings.json");
    std::fs::write(&path, json!({ "hooks": hooks }).to_string()).unwrap();
    path.display().to_string()
}

fn agent(base: &str, work: &Path, settings: &str, state: &Path) -> (Option<i32>, Vec<Value>) {
    let out = crate::support::baton()
        .args([
            "agent",
            "--provider",
            "anthropic",
            "--base-url",
            base,
            "--events",
        ])
        .args(["--settings", settings, "--cwd"])
        .arg(work)
        .arg("--state-dir")
        .arg(state)
        .arg("tidy up the notes")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code(), lines)
}

fn end_of(lines: &[Value]) -> Value {
    lines
        .iter()
        .rev()
        .find(|l| l["type"] == "end")
        .cloned()
        .unwrap_or_else(|| panic!("no end line in {lines:?}"))
}

#[test]
fn stop_hooks_read_the_transcript_and_keep_the_model_going_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let work = d.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let log = d.join("stop.log");
    // A reminder hook: plain stdout becomes context.
    let remind = script(
        &d,
        "remind.sh",
        "#!/bin/sh\necho 'Reminder: the codeword is PLUM.'\n",
    );
    // A "did you say DONE?" Stop hook, as published ones check the last
    // assistant message in the transcript.
    let check = script(
        &d,
        "check-done.sh",
        &format!(
            r#"#!/bin/sh
input=$(cat)
transcript=$(printf '%s' "$input" | jq -r .transcript_path)
active=$(printf '%s' "$input" | jq -r .stop_hook_active)
last=$(jq -rs 'map(select(.type == "assistant")) | last | .message.content | map(select(.type == "text") | .text) | join("")' "$transcript")
lines=$(wc -l < "$transcript" | tr -d ' ')
echo "$active|$lines|$last" >> {log}
if [ "$active" = "true" ]; then exit 0; fi
case "$last" in
  *DONE*) exit 0 ;;
  *) echo '{{"decision": "block", "reason": "Say DONE when you are finished."}}' ;;
esac
"#,
            log = log.display()
        ),
    );
    let settings = settings(
        &d,
        json!({
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": remind}]}],
            "Stop": [{"hooks": [{"type": "command", "command": check}]}]
        }),
    );
    let (mock, base) = start(&["Working on it.", "All tidy. DONE"]);
    let state = d.join("state");
    let (code, lines) = agent(&base, &work, &settings, &state);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(end_of(&lines)["reason"], "done");

    let requests = mock.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let first = requests[0]["messages"][0].to_string();
    assert!(
        first.contains("tidy up the notes") && first.contains("codeword is PLUM"),
        "{first}"
    );
    let second = requests[1]["messages"].as_array().unwrap();
    let last = second.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "Say DONE when you are finished.");
    assert_eq!(second[second.len() - 2]["role"], "assistant");

    // The hook saw the transcript as it was at each stop.
    let seen = std::fs::read_to_string(&log).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(seen, ["false|2|Working on it.", "true|4|All tidy. DONE"]);

    let transcript = std::fs::read_to_string(state.join("transcript.jsonl")).unwrap();
    let entries: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user", "assistant", "user", "assistant"]);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["cwd"], work.display().to_string());
        assert!(e["sessionId"].as_str().is_some_and(|s| !s.is_empty()));
        assert!(e["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
        let parent = if i == 0 {
            Value::Null
        } else {
            entries[i - 1]["uuid"].clone()
        };
        assert_eq!(e["parentUuid"], parent);
    }
    assert_eq!(entries[1]["message"]["role"], "assistant");
}

#[test]
fn a_blocking_prompt_hook_stops_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let guard = script(
        &d,
        "guard.sh",
        "#!/bin/sh\nif jq -e '.prompt | test(\"tidy\")' >/dev/null; then echo 'prompts about tidying are not allowed' >&2; exit 2; fi\n",
    );
    let settings = settings(
        &d,
        json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": guard}]}]}),
    );
    let (mock, base) = start(&["should not be asked"]);
    let (code, lines) = agent(&base, &d, &settings, &d.join("state"));
    assert_ne!(code, Some(0));
    let end = end_of(&lines);
    assert_eq!(end["reason"], "blocked", "{end}");
    assert!(
        end["error"].as_str().unwrap().contains("not allowed"),
        "{end}"
    );
    assert!(mock.requests.lock().unwrap().is_empty());
}

/// A loop hook that hangs (`sleep`) must not hold Ctrl-C: the first SIGINT
/// ends the hook's process and the run (`interrupted`), as it does for the
/// hooks of calls (issue 25: every hook stage is interruptible).
fn a_hanging_loop_hook_yields_to_sigint(event: &str, seconds: u32) {
    // A `sleep` of about `seconds`, found by a marker of this test's own.
    let seconds = procs::marker(&format!("{seconds}."));
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let started = d.join("hook-started");
    let hang = script(
        &d,
        "hang.sh",
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{}'\nsleep {seconds}\n",
            started.display()
        ),
    );
    let settings = settings(
        &d,
        json!({ event: [{"hooks": [{"type": "command", "command": hang}]}]}),
    );
    let (_mock, base) = start(&["all tidy"]);
    let mut child = crate::support::baton()
        .args(["agent", "--provider", "anthropic", "--base-url", &base])
        .args(["--events", "--settings", &settings, "--cwd"])
        .arg(&d)
        .arg("--state-dir")
        .arg(d.join("state"))
        .arg("tidy up the notes")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the {event} hook never started");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sent = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // Generous: the hook's own limit is 600 s; anything near it is a hang.
    let mut status = None;
    while sent.elapsed() < std::time::Duration::from_secs(30) {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("baton agent still ran 30 s after SIGINT while a {event} hook hung");
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut text).unwrap();
    let _ = child.wait();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(end_of(&lines)["reason"], "interrupted", "{text}");
    assert!(
        procs::eventually(std::time::Duration::from_secs(10), || {
            procs::running(&seconds) == 0
        }),
        "the hook's sleep was left running"
    );
}

#[test]
fn a_hanging_stop_hook_yields_to_sigint() {
    a_hanging_loop_hook_yields_to_sigint("Stop", 617);
}

#[test]
fn a_hanging_prompt_hook_yields_to_sigint() {
    a_hanging_loop_hook_yields_to_sigint("UserPromptSubmit", 619);
}
