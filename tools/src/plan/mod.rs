//! `EnterPlanMode` and `ExitPlanMode`: plan mode as engine behaviour.
//!
//! In plan mode the permission policy lets only read-only calls run (see
//! `RulePolicy`), so the model can explore and write a plan but change
//! nothing. Entering is a restriction and runs unasked. Leaving lifts it,
//! so it always asks the host, which sees the plan in the request's input
//! and may answer with the mode to continue in (an approval that sets a
//! mode); a plain approval goes back to the mode the session had before.
//!
//! Both tools run alone and change the mode through a context modifier,
//! so the change applies to the calls after them in the same message, in
//! call order, and to every later message of the session. Schemas are
//! Claude Code's (`sdk-tools.d.ts`), so models trained on them work.

use baton_engine::plan_mode::{self, ModeBeforePlan};
use baton_engine::{
    async_trait, PermissionMode, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
    ToolPermission, WorkKind,
};
use serde_json::{json, Value};

#[cfg(test)]
mod tests;

const ENTER_DESCRIPTION: &str = "Switches the session to plan mode. Use it before a \
non-trivial change when you want to explore the code and agree on an approach first. In \
plan mode only read-only tools run (reading, searching, read-only commands); anything that \
would change files or state is refused. When the plan is ready, call ExitPlanMode with it \
to ask the user for approval.";

const EXIT_DESCRIPTION: &str = "Presents your plan to the user for approval and, once \
approved, leaves plan mode so you can carry it out. Call it only in plan mode, when the plan \
is complete; put the plan (markdown) in `plan`. If the user rejects it, you stay in plan \
mode: revise the plan and ask again. Do not use it to ask questions (use AskUserQuestion).";

/// `EnterPlanMode` and `ExitPlanMode`: entering plan mode, and presenting
/// the plan for the user's approval to leave it.
pub fn tools() -> Result<Vec<Tool>, baton_engine::schema::InvalidSchema> {
    let enter = ToolDef::new("EnterPlanMode", ENTER_DESCRIPTION)
        .search_hint("plan mode explore before changing")
        .work_kind(WorkKind::Wait);
    let exit = ToolDef::new("ExitPlanMode", EXIT_DESCRIPTION)
        .search_hint("present plan approval leave plan mode")
        .work_kind(WorkKind::Wait);
    Ok(vec![
        Tool::raw(enter, enter_schema(), EnterPlanMode)?,
        Tool::raw(exit, exit_schema(), ExitPlanMode)?,
    ])
}

/// `EnterPlanModeInput {}`.
fn enter_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// `ExitPlanModeInput`: the deprecated `allowedPrompts`, and any other
/// member (Claude Code hosts read `plan` from there).
fn exit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "allowedPrompts": {
                "type": "array",
                "description": "Deprecated: no longer used.",
                "items": {
                    "type": "object",
                    "properties": {
                        "tool": {"type": "string", "enum": ["Bash"], "description": "The tool this prompt applies to"},
                        "prompt": {"type": "string", "description": "Semantic description of the action, e.g. \"run tests\", \"install dependencies\""}
                    },
                    "required": ["tool", "prompt"],
                    "additionalProperties": false
                }
            }
        },
        "additionalProperties": {}
    })
}

struct EnterPlanMode;

#[async_trait]
impl ToolLogic<Value> for EnterPlanMode {
    // Not concurrency-safe: only calls that run alone may change the
    // context, and the change must land before the next call starts.
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    async fn call(&self, _input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if plan_mode::effective_mode(&ctx) == PermissionMode::Plan {
            return Ok(ToolOutput::text("The session is already in plan mode.")
                .with_response(json!({"message": "already in plan mode"})));
        }
        let (before, modifier) = plan_mode::enter_plan(&ctx);
        let message = format!(
            "Entered plan mode (from {before}). Explore with read-only tools and write a plan; \
             calls that would change anything are refused until the user approves the plan \
             through ExitPlanMode."
        );
        Ok(ToolOutput::text(message.clone())
            .with_response(json!({ "message": message }))
            .with_modifier(modifier))
    }
}

struct ExitPlanMode;

#[async_trait]
impl ToolLogic<Value> for ExitPlanMode {
    // Read-only so that plan mode itself does not refuse it; it always
    // asks (below), so nothing lets it through unapproved.
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn label(&self, _input: &Value) -> Option<String> {
        Some("ExitPlanMode(plan)".into())
    }

    async fn validate_input(&self, _input: &Value, ctx: &ToolContext) -> Result<(), String> {
        if plan_mode::effective_mode(ctx) != PermissionMode::Plan {
            return Err(
                "The session is not in plan mode, so there is no plan to approve. Go on with the task (or call EnterPlanMode first if you want to plan)."
                    .into(),
            );
        }
        Ok(())
    }

    async fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolPermission {
        ToolPermission::Ask("the model asks to leave plan mode and carry out its plan".into())
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let plan = input
            .get("plan")
            .and_then(Value::as_str)
            .map(str::to_string);
        let (mode, modifier) = plan_mode::leave_plan(&ctx);
        let mut text = format!(
            "The user approved the plan. The session left plan mode and is now in {mode} mode: \
             carry out the plan (start by updating the todo list if you keep one)."
        );
        if let Some(plan) = &plan {
            text.push_str("\n\n## Approved plan\n");
            text.push_str(plan);
        }
        let is_agent = baton_engine::subagent::AgentChain::of(&ctx.context).depth() > 0;
        Ok(ToolOutput::text(text)
            .with_response(json!({"plan": plan, "isAgent": is_agent}))
            .with_modifier(modifier))
    }
}

/// The mode the session goes back to when it leaves plan mode, if it is
/// in plan mode through `EnterPlanMode` (for hosts that show it).
pub fn mode_before_plan(context: &baton_engine::Context) -> Option<PermissionMode> {
    context.extensions.get::<ModeBeforePlan>().map(|m| m.0)
}
