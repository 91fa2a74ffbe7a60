//! `baton agent` against a mock Anthropic server on 127.0.0.1, end to end:
//! the model enters plan mode, and in the same message a `Write` after
//! it is refused (the mode changes in call order, even under
//! `acceptEdits`) while a `Skill` still runs, its `` !`command` `` block
//! filled in by a read-only command. The results reach the next request.

use baton_test_support::{model_server, scenario};
use model_server::Mock;
use scenario::{Call, Scenario};
use serde_json::Value;

fn turn(calls: Vec<Call>) -> String {
    let s = Scenario {
        text: Some("Planning.".into()),
        thinking: None,
        server_tool: false,
        calls,
    };
    scenario::sse(&scenario::anthropic(&s, &[20000, 45000]))
}

fn call(id: &str, name: &str, args: &str) -> Call {
    Call {
        id: id.into(),
        name: name.into(),
        args: args.into(),
    }
}

/// The text of the `tool_result` for `id` in a user message.
fn result_text(message: &Value, id: &str) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["tool_use_id"] == id)
        .map(|b| b["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn plan_mode_and_a_skill_run_through_the_model_loop() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join(".claude/skills/survey");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: Surveys the project\n---\nMarker: !`echo survey-$ARGUMENTS`\n",
    )
    .unwrap();
    let mock = Mock::default();
    *mock.replies.lock().unwrap() = vec![
        turn(vec![
            call("p", "EnterPlanMode", "{}"),
            call(
                "w",
                "Write",
                r#"{"file_path": "planned.txt", "content": "too early\n"}"#,
            ),
            call("s", "Skill", r#"{"skill": "survey", "args": "ok"}"#),
        ]),
        turn(vec![]),
    ];
    let base = model_server::serve_mock(mock.clone());
    let out = crate::support::baton()
        .args(["agent", "--provider", "anthropic", "--base-url"])
        .arg(&base)
        .args(["--permission-mode", "acceptEdits", "--cwd"])
        .arg(dir.path())
        .arg("plan the change")
        .env("HOME", dir.path())
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let requests = mock.requests.lock().unwrap().clone();
    let said = format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(requests.len(), 2, "{said}");
    let results = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert!(
        !dir.path().join("planned.txt").exists(),
        "a write ran in plan mode"
    );
    let write = result_text(&results, "w");
    assert!(write.to_lowercase().contains("plan"), "{write}");
    let skill = result_text(&results, "s");
    assert!(skill.contains("Marker: survey-ok"), "{skill}");
}
