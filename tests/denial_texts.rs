//! Each reason a call was not allowed has its own words for the model
//! (issue 24): a person declined, a rule denied, nobody could be asked
//! (headless), the session is closing. None but the first says "the user
//! declined".

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn touch(id: &str, file: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("touch {file}")}})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

/// The text of a `result` line's block.
fn text(result: &Value) -> String {
    result["block"]["content"].to_string()
}

fn serve(dir: &std::path::Path, extra: &[&str]) -> Serve {
    let mut args = vec![
        "--cwd",
        dir.to_str().unwrap(),
        "--state-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Serve::start(BATON, &args)
}

#[test]
fn a_person_who_declined_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve(dir.path(), &[]);
    s.send(message(vec![touch("t1", "a.txt")]));
    let request = s.next_of("permission_request");
    s.send(json!({"type": "approve", "request_id": request["request_id"], "decision": "deny"}));
    let result = s.next_of("result");
    assert_eq!(result["outcome"]["kind"], "denied");
    assert!(text(&result).contains("The user declined"), "{result}");
    s.next_of("done");
    s.finish();
}

#[test]
fn a_rule_that_denies_does_not_blame_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"deny": ["Bash(touch:*)"]}}).to_string(),
    )
    .unwrap();
    let mut s = serve(dir.path(), &["--settings", settings.to_str().unwrap()]);
    s.send(message(vec![touch("t1", "a.txt")]));
    let result = s.next_of("result");
    assert_eq!(result["outcome"]["kind"], "denied");
    let t = text(&result);
    assert!(t.contains("was denied"), "{t}");
    assert!(!t.contains("declined"), "{t}");
    s.next_of("done");
    s.finish();
}

#[test]
fn a_question_left_open_at_shutdown_says_the_session_is_closing() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve(dir.path(), &[]);
    s.send(message(vec![touch("t1", "a.txt")]));
    s.next_of("permission_request");
    s.send(json!({"type": "shutdown"}));
    let result = s.next_of("result");
    assert_eq!(result["outcome"]["kind"], "denied");
    let t = text(&result);
    assert!(t.contains("session is closing"), "{t}");
    assert!(!t.contains("declined"), "{t}");
    assert!(!dir.path().join("a.txt").exists());
}

#[test]
fn a_batch_run_without_anyone_to_ask_says_it_is_headless() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("message.json");
    std::fs::write(
        &file,
        json!({"role": "assistant", "content": [touch("t1", "a.txt")]}).to_string(),
    )
    .unwrap();
    let out = crate::support::baton()
        .args(["run", "--cwd"])
        .arg(dir.path())
        .arg("--state-dir")
        .arg(dir.path())
        .arg(&file)
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("without anyone to approve it"), "{stdout}");
    assert!(!stdout.contains("declined"), "{stdout}");
    assert!(!dir.path().join("a.txt").exists());
}
