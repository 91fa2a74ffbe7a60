//! A foreground command going on in the background: at its time limit,
//! on the host's word, and the background time limit that ends it.

use std::time::{Duration, Instant};

use bash_common::{marker, next_task_note, Harness};
use baton_engine::CancelReason;
use baton_test_support::procs::{running, settle, wait_started};
use baton_tools::bash::{self, BashConfig};
use serde_json::json;

use crate::bash_common;

/// The output file named in a result (`Output is being written to: P.`).
fn output_file(text: &str) -> std::path::PathBuf {
    let after = text
        .split("Output is being written to: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no output file in: {text}"));
    let end = after.find(". ").unwrap_or(after.len());
    std::path::PathBuf::from(&after[..end])
}

async fn wait_for_file_text(path: &std::path::Path, wanted: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(wanted) || Instant::now() >= until {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_at_its_timeout_moves_to_the_background_and_goes_on() {
    let h = Harness::new();
    let m = marker();
    let r = h
        .bash(json!({
            "command": format!("echo before; sleep 1.5; echo after; sleep {m}"),
            "timeout": 500
        }))
        .await;
    let text = r.text();
    assert!(!r.is_error, "{text}");
    assert!(
        text.contains(
            "did not complete within its 1s timeout and was moved to the background (ID: shell-1)"
        ),
        "{text}"
    );
    assert!(text.contains("It was not stopped"), "{text}");
    let response = r.response.as_ref().expect("a tool_response");
    assert_eq!(response["backgroundTaskId"], "shell-1");
    assert_eq!(response["timedOutAfterMs"], 500);
    assert_eq!(response["backgroundedByUser"], false);

    // The file holds what came before the move, and grows after it.
    let file = output_file(&text);
    let before = std::fs::read_to_string(&file).expect("the output file exists");
    assert!(before.contains("before"), "{before:?}");
    assert!(!before.contains("after"), "{before:?}");
    let later = wait_for_file_text(&file, "after").await;
    assert!(later.contains("before\nafter"), "{later:?}");
    wait_started(&m, 1).await;
    assert!(running(&m) >= 1, "the command goes on");

    let peek = h
        .call(
            "TaskOutput",
            json!({"task_id": "shell-1", "block": false}),
            h.ctx("c2"),
        )
        .await;
    assert!(peek.text().contains("still running"), "{}", peek.text());
    assert!(peek.text().contains("after"), "{}", peek.text());
    let stop = h
        .call("TaskStop", json!({"task_id": "shell-1"}), h.ctx("c3"))
        .await;
    assert!(!stop.is_error, "{}", stop.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kill_setting_keeps_stopping_at_the_timeout() {
    let h = Harness::killing_at_timeout();
    let m = marker();
    let r = h
        .bash(json!({"command": format!("echo before; sleep {m}"), "timeout": 500}))
        .await;
    assert!(r.is_error, "{}", r.text());
    assert!(r.text().contains("timed out after"), "{}", r.text());
    assert!(!r.text().contains("background (ID"), "{}", r.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_task_over_its_own_limit_is_stopped_with_a_notice() {
    let h = Harness::with_config(BashConfig {
        background_timeout: Duration::from_secs(1),
        ..BashConfig::default()
    });
    let mut notes = h.session.subscribe();
    // A command moved at its timeout gets the background limit too.
    let moved = marker();
    let r = h
        .bash(json!({"command": format!("sleep {moved} & sleep {moved}; wait"), "timeout": 300}))
        .await;
    assert!(r.text().contains("moved to the background"), "{}", r.text());
    let note = next_task_note(&mut notes).await;
    assert_eq!(note.kind, "background_task_finished");
    assert_eq!(note.data.as_ref().unwrap()["status"], "timed_out");
    assert!(
        note.message.contains("background time limit"),
        "{}",
        note.message
    );
    assert_eq!(settle(&moved, Duration::from_secs(10)).await, 0);

    // `timeout` with run_in_background is that task's limit.
    let started = marker();
    let r = h
        .bash(json!({
            "command": format!("sleep {started}"),
            "run_in_background": true,
            "timeout": 500
        }))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let note = next_task_note(&mut notes).await;
    assert_eq!(note.data.as_ref().unwrap()["task_id"], "shell-2");
    assert_eq!(note.data.as_ref().unwrap()["status"], "timed_out");
    assert_eq!(settle(&started, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_sends_a_running_call_to_the_background() {
    let h = Harness::new();
    let m = marker();
    let ctx = h.ctx("host-1");
    let cancel = ctx.cancel.clone();
    let session = h.session.clone();
    let m2 = m.clone();
    let sender = tokio::spawn(async move {
        wait_started(&m2, 1).await;
        bash::send_to_background(&session, &["host-1".to_string(), "absent".to_string()])
    });
    let r = h
        .call(
            "Bash",
            json!({"command": format!("echo early; sleep {m}")}),
            ctx,
        )
        .await;
    assert_eq!(sender.await.unwrap(), ["host-1"]);
    let text = r.text();
    assert!(!r.is_error, "{text}");
    assert!(
        text.contains("manually backgrounded by user with ID: shell-1"),
        "{text}"
    );
    assert_eq!(r.response.as_ref().unwrap()["backgroundedByUser"], true);
    let file = output_file(&text);
    assert!(wait_for_file_text(&file, "early").await.contains("early"));

    // An interrupt after the move does not reach the task.
    cancel.cancel(CancelReason::User);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(running(&m) >= 1, "the command goes on");
    // Nothing runs under that id any more.
    assert!(bash::send_to_background(&h.session, &["host-1".to_string()]).is_empty());

    bash::stop_all(&h.session).await;
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}
