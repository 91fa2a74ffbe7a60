//! The permission events: `PermissionRequest` hooks answer a question
//! before the host's approver is asked; `PermissionDenied` hooks hear of a
//! denial by the rules and may let the model try again.

use serde_json::{json, Value};

use super::{messages, pre_hooks, CallState, Early, Flow, Pipeline};
use crate::hooks::{HookEvent, PermissionAnswer};
use crate::permission::PermissionDecision;
use baton_tool::call::{CallResult, Outcome};
use baton_tool::tool::Tool;

/// What the PermissionRequest hooks decided.
pub(super) enum Answered {
    /// No hook decided: ask the approver.
    No,
    /// A hook allowed the call (its input may have been rewritten).
    Allowed,
}

pub(super) async fn permission_request(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &Tool,
    reason: &str,
    suggestion: Option<&str>,
) -> Flow<Answered> {
    if !pipeline
        .hooks
        .has_any(HookEvent::PermissionRequest, tool.name())
    {
        return Ok(Answered::No);
    }
    let prepare = |input: &mut crate::hooks::HookInput| {
        input.tool_use_id = String::new();
        input.extra.insert("reason".into(), json!(reason));
        if let Some(rule) = suggestion {
            input.extra.insert(
                "permission_suggestions".into(),
                json!([{"type": "addRules", "rules": [rule_value(rule)], "behavior": "allow", "destination": "session"}]),
            );
        }
    };
    // Each view of the call (a patch: each path), as PreToolUse hooks see it.
    let call_input = current_input(state);
    let outcome = super::hook_views::run(
        pipeline,
        state,
        tool,
        HookEvent::PermissionRequest,
        &call_input,
        prepare,
    )
    .await
    .map_err(|why| deny(state, messages::wrap(&why)))?;
    if let Some(reason) = outcome.interrupted {
        // Interrupted while a hook weighed the question: the call never
        // starts, as when the approver is interrupted.
        return Err(super::validate::interrupted(state, reason));
    }
    state.diagnostics.extend(outcome.errors);
    state.system_messages.extend(outcome.system_messages);
    if let Some(conflict) = outcome.conflict {
        return Err(deny(
            state,
            messages::wrap(&format!("PermissionRequest hooks disagree: {conflict}")),
        ));
    }
    match outcome.permission {
        None => Ok(Answered::No),
        Some(PermissionAnswer::Deny { message, interrupt }) => {
            if interrupt {
                state.stop_turn = Some(format!(
                    "a PermissionRequest hook denied {} and interrupted the turn",
                    tool.name()
                ));
            }
            Err(deny(
                state,
                messages::permission_hook_denied(tool.name(), message.as_deref()),
            ))
        }
        Some(PermissionAnswer::Allow {
            updated_input,
            updated_permissions,
        }) => {
            if let Some(new_input) = updated_input {
                pre_hooks::apply_rewrite(state, tool, new_input)?;
                // The rewritten call must still pass every deny rule.
                if let Some(reason) = denied_by_rules(pipeline, state, tool) {
                    return Err(deny(state, messages::denied(tool.name(), &reason)));
                }
            }
            if !updated_permissions.is_empty() {
                let problems = super::permission::update_session(state, &updated_permissions);
                state.diagnostics.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("PermissionRequest hook updatedPermissions: {p}")),
                );
            }
            Ok(Answered::Allowed)
        }
    }
}

/// A deny rule's reason, if one covers the (rewritten) call.
fn denied_by_rules(pipeline: &Pipeline, state: &CallState, tool: &Tool) -> Option<String> {
    let parsed = state.parsed.as_ref()?;
    let target = tool.permission_target(parsed, &state.ctx);
    let request = state.permission_request(tool, parsed, &target);
    match pipeline.policy.decide(&request) {
        PermissionDecision::Deny { reason } => Some(reason),
        _ => None,
    }
}

/// After a denial by the rules: PermissionDenied hooks; `retry: true` adds
/// a line telling the model it may try again.
pub(super) async fn permission_denied(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &Tool,
    reason: &str,
) -> Option<String> {
    if !pipeline
        .hooks
        .has_any(HookEvent::PermissionDenied, tool.name())
    {
        return None;
    }
    let call_input = current_input(state);
    let outcome = super::hook_views::run(
        pipeline,
        state,
        tool,
        HookEvent::PermissionDenied,
        &call_input,
        |input| {
            input.extra.insert("reason".into(), json!(reason));
        },
    )
    .await
    .unwrap_or_else(crate::hooks::HookOutcome::error);
    state.diagnostics.extend(outcome.errors);
    state.system_messages.extend(outcome.system_messages);
    outcome.retry.then(|| {
        "A PermissionDenied hook says you may retry: try again, adjusting the call if the reason above suggests how."
            .to_string()
    })
}

fn rule_value(rule: &str) -> Value {
    match rule.split_once('(') {
        Some((tool, rest)) => json!({"toolName": tool, "ruleContent": rest.trim_end_matches(')')}),
        None => json!({"toolName": rule}),
    }
}

fn deny(state: &CallState, text: String) -> Early {
    Early::new(CallResult::error(&state.call, text, Outcome::Denied))
}

/// The call's input as it stands (after any rewrite by an earlier hook).
fn current_input(state: &CallState) -> serde_json::Value {
    state
        .parsed
        .as_ref()
        .map_or_else(|| state.call.input.clone(), |p| p.raw().clone())
}
