//! `baton agent` puts a `<task-notification>` for a background task that
//! ended in front of the model's next turn (mock provider on 127.0.0.1).

use baton_test_support::{model_server, scenario};
use model_server::Mock;
use scenario::{Call, Scenario};

fn turn(calls: Vec<Call>) -> String {
    let s = Scenario {
        text: Some("Working.".into()),
        thinking: None,
        server_tool: false,
        calls,
    };
    scenario::sse(&scenario::anthropic(&s, &[20000, 45000]))
}

#[test]
fn a_finished_background_task_reaches_the_next_turn() {
    let mock = Mock::default();
    // Turn 1: a background command, and a wait long enough for it to end.
    // Turn 2: any call, so that a third request follows. Turn 3: done.
    *mock.replies.lock().unwrap() = vec![
        turn(vec![
            Call {
                id: "c1".into(),
                name: "Bash".into(),
                args: r#"{"command": "echo bg-result", "run_in_background": true}"#.into(),
            },
            Call {
                id: "c2".into(),
                name: "Sleep".into(),
                args: r#"{"duration_ms": 1500}"#.into(),
            },
        ]),
        turn(vec![]),
    ];
    let base = model_server::serve_mock(mock.clone());
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::baton()
        .args([
            "agent",
            "--provider",
            "anthropic",
            "--base-url",
            &base,
            "--events",
        ])
        .args(["--permission-mode", "bypassPermissions", "--cwd"])
        .arg(dir.path())
        .arg("do the task")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let requests = mock.requests.lock().unwrap().clone();
    assert_eq!(
        requests.len(),
        2,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let last_user = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last_user.contains("tool_result"), "{last_user}");
    assert!(last_user.contains("<task-notification>"), "{last_user}");
    assert!(
        last_user.contains("<task-id>shell-1</task-id>"),
        "{last_user}"
    );
    assert!(
        last_user.contains("<status>completed</status>"),
        "{last_user}"
    );
    assert!(last_user.contains("<output-file>"), "{last_user}");
}
