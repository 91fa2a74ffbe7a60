//! What the host's answer to a permission request does to the call.
//!
//! `Allow` and `Deny` are plain. The richer answers need care, because the
//! host may pass model text through (a UI that lets the model "suggest a
//! corrected command", a relay that forwards whatever it got):
//! - an updated input goes through every check the model's input went
//!   through after parsing (schema, the tool's own validation, PreToolUse
//!   hooks, deny rules) before it runs. Only "ask" is waived: the host has
//!   answered. A call scheduled beside others whose new input would need to
//!   run alone is refused (the scheduler decided on the old input).
//! - remembering adds the request's suggested rule as a session allow rule,
//!   only once the call is really allowed; settings deny rules still win
//!   over it.
//! - deny-and-interrupt denies the call here; the runtime that asked
//!   interrupts the batch (the pipeline does not know batches).

use serde_json::{json, Value};

use super::{messages, permission, pre_hooks, validate, CallState, Early, Flow, Pipeline};
use crate::permission::{Approval, PermissionDecision, ToolPermission};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::tool::Tool;

pub(super) async fn apply(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &Tool,
    answer: Approval,
    suggestion: Option<&str>,
) -> Flow {
    match answer {
        Approval::Allow => Ok(()),
        Approval::Deny { reason } => Err(denied(
            state,
            messages::user_rejected(tool.name(), reason.as_deref()),
        )),
        Approval::DenyAndInterrupt { reason } => Err(denied(
            state,
            format!(
                "{} The user also interrupted the turn.",
                messages::user_rejected(tool.name(), reason.as_deref())
            ),
        )),
        Approval::AllowAndSetMode { mode } => {
            let update =
                json!({"type": "setMode", "mode": mode.as_str(), "destination": "session"});
            let problems = permission::update_session(state, &[update]);
            state.diagnostics.extend(problems);
            Ok(())
        }
        Approval::Unanswered { cause, detail } => Err(denied(
            state,
            messages::unasked(tool.name(), cause, detail.as_deref()),
        )),
        Approval::AllowWith {
            updated_input,
            remember,
        } => {
            if let Some(input) = updated_input {
                rewrite(pipeline, state, tool, input).await?;
            }
            if remember {
                remember_rule(state, suggestion);
            }
            Ok(())
        }
    }
}

/// Replaces the call's input with the host's and checks it again.
async fn rewrite(pipeline: &Pipeline, state: &mut CallState, tool: &Tool, input: Value) -> Flow {
    let was_safe = state
        .parsed
        .as_ref()
        .is_some_and(|p| tool.is_concurrency_safe(p));
    let parsed = tool.parse(&input).map_err(|problems| {
        let list: Vec<String> = problems.iter().map(|p| format!("- {p}")).collect();
        Early::new(CallResult::error(
            &state.call,
            messages::wrap(&format!(
                "The input given with the approval of this `{}` call does not match the tool's schema, so the call did not run:\n{}",
                tool.name(),
                list.join("\n")
            )),
            Outcome::InvalidInput,
        ))
    })?;
    if was_safe && !tool.is_concurrency_safe(&parsed) {
        return Err(denied(
            state,
            format!(
                "The input given with the approval of this `{}` call would have to run alone, but the call was already scheduled beside others, so it did not run. Make the call again with that input.",
                tool.name()
            ),
        ));
    }
    state.read_only = tool.is_read_only(&parsed);
    state.parsed = Some(parsed);
    state.call.input = input;
    let cancel = state.ctx.cancel.clone();
    validate::interruptible(&cancel, validate::validate_input(state, tool))
        .await
        .map_err(|reason| validate::interrupted(state, reason))??;
    validate::interruptible(&cancel, pre_hooks::run(pipeline, state, tool))
        .await
        .map_err(|reason| validate::interrupted(state, reason))??;
    if let Some(reason) = deny_reason(pipeline, state, tool).await {
        return Err(denied(state, messages::denied(tool.name(), &reason)));
    }
    Ok(())
}

/// Why the rules, the session's rules or the tool itself deny the call as
/// it now is; asks are ignored (the host already answered).
async fn deny_reason(pipeline: &Pipeline, state: &CallState, tool: &Tool) -> Option<String> {
    let parsed = state.parsed.as_ref()?;
    let target = tool.permission_target(parsed, &state.ctx);
    if let (PermissionDecision::Deny { reason }, _) =
        permission::rules_decision(pipeline, state, tool, parsed, &target)
    {
        return Some(reason);
    }
    match tool.check_permissions(parsed, &state.ctx).await {
        ToolPermission::Deny(reason) => Some(reason),
        _ => None,
    }
}

/// Adds the request's suggested rule for the rest of the session.
fn remember_rule(state: &mut CallState, suggestion: Option<&str>) {
    let Some(rule) = suggestion else {
        state.diagnostics.push(
            "the approval asked to remember it, but the request had no suggested rule; nothing was remembered"
                .into(),
        );
        return;
    };
    let update = json!({
        "type": "addRules",
        "rules": [rule_value(rule)],
        "behavior": "allow",
        "destination": "session",
    });
    let problems = permission::update_session(state, &[update]);
    state.diagnostics.extend(
        problems
            .into_iter()
            .map(|p| format!("remembering `{rule}` for the session failed: {p}")),
    );
}

/// `Tool(content)` as a Claude Code rule value; only the one closing
/// parenthesis that ends the rule is removed.
fn rule_value(rule: &str) -> Value {
    match rule.split_once('(') {
        Some((tool, rest)) => {
            let content = rest.strip_suffix(')').unwrap_or(rest);
            json!({"toolName": tool, "ruleContent": content})
        }
        None => json!({"toolName": rule}),
    }
}

fn denied(state: &CallState, text: String) -> Early {
    Early::new(CallResult::error(&state.call, text, Outcome::Denied))
}
