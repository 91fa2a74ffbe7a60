//! One test per pipeline stage and per error class (SPEC §4).

use std::sync::Arc;

use baton_engine::hooks::FnHook;
use baton_engine::permission::{AskSource, PermissionRequest};
use baton_engine::{
    async_trait, Approval, ApprovalRequest, Approver, CancelReason, HookEvent, HookOutcome,
    HookRegistry, Outcome, PermissionDecision, PermissionPolicy, Pipeline, ToolPool, ToolUse,
};
use common::{echo, scripted, Harness};
use serde_json::json;

use crate::common;

#[tokio::test]
async fn successful_typed_call() {
    let h = Harness::default_tools();
    let r = h.run_json("Echo", json!({"text": "ab", "times": 3})).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert!(!r.is_error);
    assert_eq!(r.text(), "ababab");
}

#[tokio::test]
async fn unknown_tool_names_the_tool() {
    let h = Harness::default_tools();
    let r = h.run_json("Nope", json!({})).await;
    assert_eq!(r.outcome, Outcome::UnknownTool);
    assert!(r.is_error);
    let text = r.text();
    assert!(text.starts_with("<tool_use_error>") && text.ends_with("</tool_use_error>"));
    assert!(text.contains("`Nope`"), "{text}");
}

#[tokio::test]
async fn cancelled_before_start_does_not_run() {
    let h = Harness::default_tools();
    let call = ToolUse::new("c1", "Scripted", json!({"mode": "panic"}));
    let ctx = h.ctx("c1");
    ctx.cancel.cancel(CancelReason::User);
    let r = h.pipeline.run(h.pipeline.prepare(call), ctx).await;
    assert_eq!(r.outcome, Outcome::Cancelled { started: false });
    assert!(r.text().contains("never ran"), "{}", r.text());
}

#[tokio::test]
async fn schema_errors_list_every_problem_with_paths() {
    let h = Harness::default_tools();
    let r = h
        .run_json("Echo", json!({"times": "3", "colour": "red"}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidInput);
    insta::assert_snapshot!(r.text());
}

#[tokio::test]
async fn invalid_json_text_counts_as_empty_object() {
    let h = Harness::default_tools();
    let r = h
        .run(ToolUse::from_json_text(
            "c1",
            "Echo",
            "{\"text\": \"unterminated",
        ))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidInput);
    let text = r.text();
    assert!(text.contains("not valid JSON"), "{text}");
    assert!(text.contains("missing required parameter `text`"), "{text}");
}

#[tokio::test]
async fn validate_input_failure_is_reported() {
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "invalid"})).await;
    assert_eq!(r.outcome, Outcome::ValidationFailed);
    assert!(
        r.text().contains("mode `invalid` is not allowed"),
        "{}",
        r.text()
    );
    assert!(r.text().starts_with("<tool_use_error>"));
}

#[tokio::test]
async fn tool_err_is_plain_text_error() {
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "err"})).await;
    assert_eq!(r.outcome, Outcome::ToolError);
    assert!(r.is_error);
    assert_eq!(r.text(), "the scripted tool failed");
}

#[tokio::test]
async fn tool_reported_error_keeps_its_content() {
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "is_error"})).await;
    assert_eq!(r.outcome, Outcome::ToolError);
    assert!(r.is_error);
    assert_eq!(r.text(), "reported failure");
}

#[tokio::test]
async fn panicking_tool_gives_an_error_result_and_the_process_survives() {
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "panic"})).await;
    assert_eq!(r.outcome, Outcome::Panicked);
    assert!(r.is_error);
    assert!(r.text().contains("scripted panic"), "{}", r.text());
    // The same pipeline keeps working.
    let again = h.run_json("Echo", json!({"text": "still here"})).await;
    assert_eq!(again.text(), "still here");
}

#[tokio::test]
async fn cancellation_while_running_stops_the_call() {
    let h = Harness::default_tools();
    let call = ToolUse::new("c1", "Scripted", json!({"mode": "hang"}));
    let ctx = h.ctx("c1");
    let cancel = ctx.cancel.clone();
    let task = tokio::spawn({
        let pipeline = h.pipeline.clone();
        async move { pipeline.run(pipeline.prepare(call), ctx).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    cancel.cancel(CancelReason::User);
    let r = task.await.unwrap();
    assert_eq!(r.outcome, Outcome::Cancelled { started: true });
    let text = r.text();
    assert!(text.contains("stopped while running"), "{text}");
    assert!(text.contains("partial output"), "{text}");
}

#[tokio::test]
async fn empty_output_becomes_a_notice() {
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "empty"})).await;
    assert_eq!(r.text(), "(Scripted completed with no output)");
}

#[tokio::test]
async fn large_output_is_spilled_with_a_preview() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::default_tools();
    let r = h.run_json("Scripted", json!({"mode": "big"})).await;
    let text = r.text();
    assert!(text.len() < 3_000, "inline result too long: {}", text.len());
    let path = h.session.state_dir().join("tool-results/call_1.txt");
    assert!(text.contains(&path.display().to_string()), "{text}");
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved.len(), 60_000);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[tokio::test]
async fn context_modifier_is_returned_to_the_caller() {
    let h = Harness::default_tools();
    let mut r = h.run_json("Scripted", json!({"mode": "cd"})).await;
    let modifier = r.modifier.take().expect("modifier");
    let before = baton_engine::Context::new("/work");
    assert_eq!(
        modifier.apply(before).cwd,
        std::path::PathBuf::from("/work/sub")
    );
}

struct DenyEcho;
impl PermissionPolicy for DenyEcho {
    fn decide(&self, req: &PermissionRequest<'_>) -> PermissionDecision {
        match req.tool.name() {
            "Echo" => PermissionDecision::Deny {
                reason: "a deny rule matches Echo".into(),
            },
            _ => PermissionDecision::Ask {
                reason: "no rule allows this call".into(),
                source: AskSource::ModeDefault,
                suggestion: Some("Scripted".into()),
            },
        }
    }
}

struct Answer(Approval);
#[async_trait]
impl Approver for Answer {
    async fn approve(&self, _request: ApprovalRequest) -> Approval {
        self.0.clone()
    }
}

fn pipeline() -> Pipeline {
    Pipeline::allow_all_unsafe(ToolPool::of(vec![echo(), scripted()]))
}

#[tokio::test]
async fn permission_deny_is_plain_text_with_reason() {
    let h = Harness::new(pipeline().with_policy(Arc::new(DenyEcho)));
    let r = h.run_json("Echo", json!({"text": "x"})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(!r.text().starts_with("<tool_use_error>"));
    assert!(
        r.text().contains("a deny rule matches Echo"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn ask_without_approver_denies_and_names_the_rule() {
    let h = Harness::new(pipeline().with_policy(Arc::new(DenyEcho)));
    let r = h.run_json("Scripted", json!({})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("approval"), "{}", r.text());
    assert!(r.text().contains("`Scripted`"), "{}", r.text());
}

#[tokio::test]
async fn ask_goes_to_the_approver() {
    let allow = Harness::new(
        pipeline()
            .with_policy(Arc::new(DenyEcho))
            .with_approver(Arc::new(Answer(Approval::Allow))),
    );
    assert_eq!(
        allow.run_json("Scripted", json!({})).await.outcome,
        Outcome::Success
    );
    let deny = Harness::new(
        pipeline()
            .with_policy(Arc::new(DenyEcho))
            .with_approver(Arc::new(Answer(Approval::Deny {
                reason: Some("not now".into()),
            }))),
    );
    let r = deny.run_json("Scripted", json!({})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("not now"));
}

fn hooks(outcome: HookOutcome) -> HookRegistry {
    HookRegistry::default().with(Arc::new(FnHook::new(
        |event, _tool: &str| event == HookEvent::PreToolUse,
        move |_input| {
            let outcome = outcome.clone();
            async move { outcome }
        },
    )))
}

#[tokio::test]
async fn pre_hook_deny_blocks_the_call() {
    let h = Harness::new(pipeline().with_hooks(hooks(HookOutcome::deny("not on fridays"))));
    let r = h.run_json("Echo", json!({"text": "x"})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("not on fridays"));
}

#[tokio::test]
async fn pre_hook_allow_does_not_override_a_deny_rule() {
    let h = Harness::new(
        pipeline()
            .with_policy(Arc::new(DenyEcho))
            .with_hooks(hooks(HookOutcome::allow())),
    );
    assert_eq!(
        h.run_json("Echo", json!({"text": "x"})).await.outcome,
        Outcome::Denied
    );
    // ...but it does waive the mode's default ask.
    assert_eq!(
        h.run_json("Scripted", json!({})).await.outcome,
        Outcome::Success
    );
}

#[tokio::test]
async fn pre_hook_rewrites_input_and_adds_context() {
    let outcome = HookOutcome {
        updated_input: Some(json!({"text": "rewritten"})),
        additional_context: vec!["note from hook".into()],
        ..Default::default()
    };
    let h = Harness::new(pipeline().with_hooks(hooks(outcome)));
    let r = h.run_json("Echo", json!({"text": "original"})).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.text(), "rewritten\nnote from hook");
}

#[tokio::test]
async fn pre_hook_rewrite_is_validated_again() {
    let outcome = HookOutcome {
        updated_input: Some(json!({"text": 5})),
        ..Default::default()
    };
    let h = Harness::new(pipeline().with_hooks(hooks(outcome)));
    let r = h.run_json("Echo", json!({"text": "original"})).await;
    assert_eq!(r.outcome, Outcome::InvalidInput);
    assert!(r.text().contains("hook"), "{}", r.text());
}

#[tokio::test]
async fn post_hooks_see_failures_and_can_feed_back() {
    let registry = HookRegistry::default().with(Arc::new(FnHook::new(
        |event, _tool: &str| event != HookEvent::PreToolUse,
        |input: baton_engine::HookInput| async move {
            let seen = match input.hook_event_name {
                HookEvent::PostToolUseFailure => {
                    format!("failure: {}", input.error.unwrap_or_default())
                }
                _ => "success".to_string(),
            };
            HookOutcome {
                feedback: Some(seen),
                stop: Some("hook ended the turn".into()),
                ..Default::default()
            }
        },
    )));
    let h = Harness::new(pipeline().with_hooks(registry));
    let ok = h.run_json("Echo", json!({"text": "x"})).await;
    assert!(
        ok.text().contains("PostToolUse hook feedback: success"),
        "{}",
        ok.text()
    );
    assert_eq!(ok.stop_turn.as_deref(), Some("hook ended the turn"));
    let failed = h.run_json("Scripted", json!({"mode": "err"})).await;
    assert!(
        failed.text().contains("failure: the scripted tool failed"),
        "{}",
        failed.text()
    );
}

#[tokio::test]
async fn panicking_hook_is_a_non_blocking_error() {
    let registry = HookRegistry::default().with(Arc::new(FnHook::new(
        |_, _: &str| true,
        |_input| async move {
            if true {
                panic!("hook bug");
            }
            HookOutcome::default()
        },
    )));
    let h = Harness::new(pipeline().with_hooks(registry));
    let r = h.run_json("Echo", json!({"text": "x"})).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert!(!r.diagnostics.is_empty());
}

#[tokio::test]
async fn deferred_tool_schema_error_hints_at_tool_search() {
    let deferred = baton_engine::Tool::typed::<common::EchoInput, _>(
        baton_engine::ToolDef::new("LaterEcho", "Deferred echo.").should_defer(true),
        common::Echo,
    )
    .unwrap();
    let search = || {
        baton_engine::Tool::raw(
            baton_engine::ToolDef::new("ToolSearch", "Stand-in."),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap()
    };
    let later = || {
        baton_engine::Tool::typed::<common::EchoInput, _>(
            baton_engine::ToolDef::new("LaterEcho", "Deferred echo.").should_defer(true),
            common::Echo,
        )
        .unwrap()
    };
    let h = Harness::new(Pipeline::allow_all_unsafe(ToolPool::of(vec![
        deferred,
        search(),
    ])));
    let r = h.run_json("LaterEcho", json!({})).await;
    assert!(r.text().contains("select:LaterEcho"), "{}", r.text());
    // Once loaded, the model has the schema: no hint.
    h.session
        .slots()
        .get_or_default::<baton_engine::deferred::DiscoveredTools>()
        .insert("LaterEcho");
    let r = h.run_json("LaterEcho", json!({})).await;
    assert!(!r.text().contains("select:"), "{}", r.text());
    // Without ToolSearch in the pool nothing is deferred: the hint would
    // send the model to a tool that does not exist.
    let h = Harness::new(Pipeline::allow_all_unsafe(ToolPool::of(vec![later()])));
    let r = h.run_json("LaterEcho", json!({})).await;
    assert!(!r.text().contains("select:"), "{}", r.text());
    // Tool search off: nothing is deferred either.
    let h = Harness::new(Pipeline::allow_all_unsafe(ToolPool::of(vec![
        later(),
        search(),
    ])));
    let off = baton_engine::deferred::ToolSearchSettings::default()
        .mode(baton_engine::deferred::ToolSearchMode::Off);
    baton_engine::deferred::set_deferral(
        &h.session,
        baton_engine::deferred::Deferral::resolve(off, h.pipeline.pool()),
    );
    let r = h.run_json("LaterEcho", json!({})).await;
    assert!(!r.text().contains("select:"), "{}", r.text());
}

#[tokio::test]
async fn a_call_through_an_alias_is_handled_under_the_tool_name() {
    let aliased = baton_engine::Tool::typed::<common::EchoInput, _>(
        baton_engine::ToolDef::new("Echo", "Repeats text.").alias("Say"),
        common::Echo,
    )
    .unwrap();
    let registry = HookRegistry::default().with(Arc::new(FnHook::new(
        |event, tool: &str| event == HookEvent::PreToolUse && tool == "Echo",
        |_input| async move { HookOutcome::deny("hooks see the real name") },
    )));
    let h =
        Harness::new(Pipeline::allow_all_unsafe(ToolPool::of(vec![aliased])).with_hooks(registry));
    let r = h.run_json("Say", json!({"text": "x"})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert_eq!(r.tool_name, "Echo");
}
