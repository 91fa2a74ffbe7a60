use super::*;
use crate::test_support::Harness;
use baton_engine::{
    Approval, ApprovalRequest, Approver, Context, Outcome, Pipeline, ToolContext, ToolPool,
};

struct Yes;

#[async_trait]
impl Approver for Yes {
    async fn approve(&self, _request: ApprovalRequest) -> Approval {
        Approval::Allow
    }
}

fn in_mode(h: &Harness, mode: PermissionMode) -> ToolContext {
    ToolContext::standalone(
        "call-1",
        Context::new(h.dir.path()).with_mode(mode),
        h.session.clone(),
    )
}

#[tokio::test]
async fn enter_returns_a_modifier_that_remembers_the_mode_it_left() {
    let h = Harness::new(tools().unwrap());
    let ctx = in_mode(&h, PermissionMode::AcceptEdits);
    let r = h.run_with("EnterPlanMode", json!({}), ctx).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let modifier = r.modifier.expect("a context change");
    let after = modifier.apply(Context::new(h.dir.path()).with_mode(PermissionMode::AcceptEdits));
    assert_eq!(after.permission_mode, PermissionMode::Plan);
    assert_eq!(mode_before_plan(&after), Some(PermissionMode::AcceptEdits));
}

#[tokio::test]
async fn exit_restores_the_mode_before_plan_and_refuses_outside_plan() {
    let mut h = Harness::new(tools().unwrap());
    h.pipeline = Pipeline::allow_all_unsafe(ToolPool::of(tools().unwrap()))
        .with_approver(std::sync::Arc::new(Yes));
    let mut context = Context::new(h.dir.path()).with_mode(PermissionMode::Plan);
    context.extensions = context
        .extensions
        .with(ModeBeforePlan(PermissionMode::DontAsk));
    let ctx = ToolContext::standalone("call-1", context.clone(), h.session.clone());
    let r = h
        .run_with("ExitPlanMode", json!({"plan": "do it"}), ctx)
        .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let after = r.modifier.expect("a context change").apply(context);
    assert_eq!(after.permission_mode, PermissionMode::DontAsk);

    let r = h
        .run_with(
            "ExitPlanMode",
            json!({}),
            in_mode(&h, PermissionMode::Default),
        )
        .await;
    assert_eq!(r.outcome, Outcome::ValidationFailed, "{}", r.text());
}

#[tokio::test]
async fn the_schemas_are_claude_codes() {
    let h = Harness::new(tools().unwrap());
    let plan = || in_mode(&h, PermissionMode::Plan);
    for (name, input, ok) in [
        ("EnterPlanMode", json!({}), true),
        ("EnterPlanMode", json!({"x": 1}), false),
        ("ExitPlanMode", json!({"plan": "p", "anything": [1]}), true),
        (
            "ExitPlanMode",
            json!({"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]}),
            true,
        ),
        (
            "ExitPlanMode",
            json!({"allowedPrompts": [{"tool": "Write", "prompt": "x"}]}),
            false,
        ),
        (
            "ExitPlanMode",
            json!({"allowedPrompts": [{"tool": "Bash"}]}),
            false,
        ),
    ] {
        let r = h.run_with(name, input.clone(), plan()).await;
        assert_eq!(
            r.outcome != Outcome::InvalidInput,
            ok,
            "{name} {input}: {}",
            r.text()
        );
    }
}
