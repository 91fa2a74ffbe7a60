use baton_engine::call::Outcome;
use baton_engine::ToolUse;
use serde_json::json;

use super::{current_todos, TodoStatus};
use crate::test_support::Harness;

fn harness() -> Harness {
    Harness::new(vec![super::tool().unwrap()])
}

fn item(content: &str, status: &str) -> serde_json::Value {
    json!({"content": content, "status": status, "activeForm": format!("Doing {content}")})
}

#[tokio::test]
async fn replaces_the_list_and_keeps_it_in_the_session() {
    let h = harness();
    let prepared = h.pipeline.prepare(ToolUse::new(
        "c",
        "TodoWrite",
        json!({"todos": [item("a", "pending")]}),
    ));
    assert!(!prepared.safe, "TodoWrite changes session state");
    assert!(!prepared.read_only);

    let first = h
        .run(
            "TodoWrite",
            json!({"todos": [item("write code", "in_progress"), item("test it", "pending")]}),
            h.dir.path(),
        )
        .await;
    assert!(!first.is_error, "{}", first.text());
    assert!(first.text().contains("[>] write code"), "{}", first.text());
    assert!(first
        .text()
        .contains("1 pending, 1 in progress, 0 completed"));
    let list = current_todos(&h.session);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].status, TodoStatus::InProgress);
    assert_eq!(list[0].active_form, "Doing write code");

    let second = h
        .run(
            "TodoWrite",
            json!({"todos": [item("write code", "completed")]}),
            h.dir.path(),
        )
        .await;
    assert!(!second.is_error);
    assert!(second.text().contains("[x] write code"));
    assert_eq!(current_todos(&h.session).len(), 1);

    let cleared = h.run("TodoWrite", json!({"todos": []}), h.dir.path()).await;
    assert!(cleared.text().contains("empty"));
    assert!(current_todos(&h.session).is_empty());
}

#[tokio::test]
async fn bad_lists_are_rejected_and_change_nothing() {
    let h = harness();
    h.run(
        "TodoWrite",
        json!({"todos": [item("keep me", "pending")]}),
        h.dir.path(),
    )
    .await;

    let two_active = h
        .run(
            "TodoWrite",
            json!({"todos": [item("a", "in_progress"), item("b", "in_progress")]}),
            h.dir.path(),
        )
        .await;
    assert!(two_active.is_error);
    assert_eq!(two_active.outcome, Outcome::ValidationFailed);
    assert!(
        two_active.text().contains("at most one in_progress"),
        "{}",
        two_active.text()
    );

    let empty = h
        .run(
            "TodoWrite",
            json!({"todos": [{"content": "  ", "status": "pending", "activeForm": "x"}]}),
            h.dir.path(),
        )
        .await;
    assert!(empty.is_error);
    assert!(
        empty.text().contains("todos[0].content is empty"),
        "{}",
        empty.text()
    );

    let bad_status = h
        .run(
            "TodoWrite",
            json!({"todos": [{"content": "a", "status": "done", "activeForm": "x"}]}),
            h.dir.path(),
        )
        .await;
    assert!(bad_status.is_error);
    assert_eq!(bad_status.outcome, Outcome::InvalidInput);

    let missing_field = h
        .run(
            "TodoWrite",
            json!({"todos": [{"content": "a", "status": "pending"}]}),
            h.dir.path(),
        )
        .await;
    assert!(missing_field.is_error);
    assert!(
        missing_field.text().contains("activeForm"),
        "{}",
        missing_field.text()
    );

    let list = current_todos(&h.session);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].content, "keep me");
}

#[tokio::test]
async fn sessions_do_not_share_lists() {
    let a = harness();
    let b = harness();
    a.run(
        "TodoWrite",
        json!({"todos": [item("only in a", "pending")]}),
        a.dir.path(),
    )
    .await;
    assert_eq!(current_todos(&a.session).len(), 1);
    assert!(current_todos(&b.session).is_empty());
}

#[tokio::test]
async fn runs_without_approval_under_the_rules_but_a_deny_rule_still_applies() {
    use baton_engine::RulePolicy;
    use std::sync::Arc;
    let input = json!({"todos": [item("plan", "pending")]});

    let mut h = harness();
    let rules = RulePolicy::parse(&[], &[], &[], None, h.dir.path()).unwrap();
    h.pipeline = h.pipeline.clone().with_policy(Arc::new(rules));
    let allowed = h.run("TodoWrite", input.clone(), h.dir.path()).await;
    assert_eq!(allowed.outcome, Outcome::Success, "{}", allowed.text());

    let denying = RulePolicy::parse(&[], &[], &["TodoWrite"], None, h.dir.path()).unwrap();
    h.pipeline = h.pipeline.clone().with_policy(Arc::new(denying));
    let denied = h.run("TodoWrite", input, h.dir.path()).await;
    assert_eq!(denied.outcome, Outcome::Denied, "{}", denied.text());
}
