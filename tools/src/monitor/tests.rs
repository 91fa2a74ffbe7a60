//! Monitors over real commands: a line producer, a flood, a deadline, a
//! deny rule; events as notifications, stderr only in the file.

use std::sync::Arc;
use std::time::Duration;

use baton_engine::permission::RulePolicy;
use baton_engine::{Notification, Pipeline, ToolPool};
use serde_json::json;

use crate::test_support::{gone_within, pids_with, Harness};

fn harness() -> Harness {
    Harness::new(vec![super::tool().unwrap()])
}

/// Notifications of the monitor until it finished (or `limit`).
async fn until_finished(
    rx: &mut tokio::sync::broadcast::Receiver<Notification>,
    limit: Duration,
) -> (Vec<Notification>, Option<Notification>) {
    let mut events = Vec::new();
    let until = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(until, rx.recv()).await {
            Ok(Ok(n)) if n.kind == "monitor_finished" => return (events, Some(n)),
            Ok(Ok(n)) if n.kind == "monitor_event" => events.push(n),
            Ok(Ok(_)) => {}
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            _ => return (events, None),
        }
    }
}

fn event_text(events: &[Notification]) -> String {
    events
        .iter()
        .filter_map(|n| n.data.as_ref()?.get("events")?.as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_line_is_an_event_and_stderr_goes_to_the_file() {
    let h = harness();
    let mut rx = h.session.subscribe();
    let r = h
        .run(
            "Monitor",
            json!({"description": "count", "command": "for i in 1 2 3; do echo line$i; sleep 0.3; done; echo oops >&2"}),
            h.dir.path(),
        )
        .await;
    assert!(!r.is_error);
    let (events, end) = until_finished(&mut rx, Duration::from_secs(30)).await;
    let end = end.expect("the monitor never finished");
    let text = event_text(&events);
    for line in ["line1", "line2", "line3"] {
        assert!(text.contains(line), "{text}");
    }
    assert!(!text.contains("oops"), "stderr is not an event: {text}");
    let data = end.data.unwrap();
    assert_eq!(data["status"], "completed");
    let file = std::fs::read_to_string(data["output_file"].as_str().unwrap()).unwrap();
    assert!(file.contains("line3") && file.contains("oops"), "{file}");
    let tasks = crate::tasks::list(&h.session);
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        (tasks[0].kind.as_str(), tasks[0].status.as_str()),
        ("monitor", "completed")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sustained_flood_is_folded_then_stopped() {
    let h = harness();
    let mut rx = h.session.subscribe();
    let marker = "floodmark4711";
    h.run(
        "Monitor",
        json!({"description": "flood", "command": format!("yes {marker}")}),
        h.dir.path(),
    )
    .await;
    let limit = super::batch::FLOOD_LIMIT + Duration::from_secs(30);
    let (events, end) = until_finished(&mut rx, limit).await;
    let end = end.expect("the flood was not stopped");
    assert!(
        end.message.contains("kept printing more than"),
        "{}",
        end.message
    );
    assert!(event_text(&events).contains("events suppressed"));
    // At most one event per window: bounded whatever the rate.
    let windows = (limit.as_millis() / super::batch::WINDOW.as_millis()) as usize + 2;
    assert!(events.len() <= windows, "{} events", events.len());
    assert!(
        gone_within(marker, Duration::from_secs(10)).await,
        "{:?}",
        pids_with(marker)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_ends_it_and_bash_deny_rules_apply() {
    let h = harness();
    let mut rx = h.session.subscribe();
    h.run(
        "Monitor",
        json!({"description": "wait", "command": "sleep 3141.5", "timeout_ms": 300}),
        h.dir.path(),
    )
    .await;
    let (_, end) = until_finished(&mut rx, Duration::from_secs(30)).await;
    let end = end.expect("the deadline did not end it");
    assert!(
        end.message.contains("time limit of 300 ms"),
        "{}",
        end.message
    );
    assert_eq!(end.data.unwrap()["status"], "timed_out");
    assert!(gone_within("3141.5", Duration::from_secs(10)).await);

    let dir = tempfile::tempdir().unwrap();
    let policy = RulePolicy::parse(&[], &[], &["Bash(tail:*)"], None, dir.path()).unwrap();
    let mut h = harness();
    h.pipeline =
        Pipeline::new(ToolPool::of(vec![super::tool().unwrap()])).with_policy(Arc::new(policy));
    let r = h
        .run(
            "Monitor",
            json!({"description": "d", "command": "tail -f /etc/hostname"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error);
    assert!(crate::tasks::list(&h.session).is_empty());
}
