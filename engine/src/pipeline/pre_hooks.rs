//! PreToolUse hooks: may deny, ask, allow, rewrite the input, add context,
//! or stop the turn. Their permission verdict is kept for the permission
//! stage, which weighs it against the rules.

use super::{messages, CallState, Early, Flow, Pipeline};
use crate::hooks::{HookDecision, HookEvent, HookOutcome};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::tool::Tool;

/// The verdict a PreToolUse hook left for the permission stage.
#[derive(Clone, Debug, Default)]
pub(crate) struct HookVerdict {
    pub decision: Option<HookDecision>,
    pub reason: Option<String>,
}

/// Runs `event`'s hooks for this call, judging `if:` filters against the
/// call as the permission stage would see it.
pub(super) async fn run_for_call(
    pipeline: &Pipeline,
    state: &CallState,
    tool: &Tool,
    input: &crate::hooks::HookInput,
) -> HookOutcome {
    // After the call the parsed input has been consumed; parse it again
    // (cheap) so that `if:` filters see the same call.
    let reparsed;
    let parsed = match state.parsed.as_ref() {
        Some(parsed) => parsed,
        None => match tool.parse(&state.call.input) {
            Ok(p) => {
                reparsed = p;
                &reparsed
            }
            Err(_) => {
                return pipeline
                    .hooks
                    .run_until(input, None, Some(&state.ctx.cancel))
                    .await
            }
        },
    };
    let target = tool.permission_target(parsed, &state.ctx);
    let request = state.permission_request(tool, parsed, &target);
    // Raced against the call's scope: an interrupt ends a hanging hook.
    pipeline
        .hooks
        .run_until(input, Some(&request), Some(&state.ctx.cancel))
        .await
}

pub(super) async fn run(pipeline: &Pipeline, state: &mut CallState, tool: &Tool) -> Flow {
    if !pipeline.hooks.has_any(HookEvent::PreToolUse, tool.name()) {
        return Ok(());
    }
    // Each view of the call (a patch: each path) has the hooks' say.
    let input = state
        .parsed
        .as_ref()
        .map_or_else(|| state.call.input.clone(), |p| p.raw().clone());
    let outcome =
        super::hook_views::run(pipeline, state, tool, HookEvent::PreToolUse, &input, |_| {})
            .await
            .map_err(|why| {
                Early::new(CallResult::error(
                    &state.call,
                    messages::wrap(&why),
                    Outcome::Denied,
                ))
            })?;
    if let Some(reason) = outcome.interrupted {
        // No answer is not "no objection": the call never starts.
        return Err(super::validate::interrupted(state, reason));
    }
    state.diagnostics.extend(outcome.errors);
    state.extra_context.extend(outcome.additional_context);
    state.system_messages.extend(outcome.system_messages);
    if outcome.stop.is_some() {
        state.stop_turn = outcome.stop;
    }
    if outcome.decision == Some(HookDecision::Deny) {
        return Err(Early::new(CallResult::error(
            &state.call,
            messages::hook_denied(tool.name(), outcome.reason.as_deref()),
            Outcome::Denied,
        )));
    }
    if let Some(conflict) = outcome.conflict {
        return Err(Early::new(CallResult::error(
            &state.call,
            messages::wrap(&format!("PreToolUse hooks disagree: {conflict}")),
            Outcome::Denied,
        )));
    }
    if let Some(new_input) = outcome.updated_input {
        apply_rewrite(state, tool, new_input)?;
    }
    state.hook_verdict = HookVerdict {
        decision: outcome.decision,
        reason: outcome.reason,
    };
    Ok(())
}

/// A rewritten input must satisfy the schema like the model's did.
pub(super) fn apply_rewrite(
    state: &mut CallState,
    tool: &Tool,
    new_input: serde_json::Value,
) -> Flow {
    let parsed = tool.parse(&new_input).map_err(|problems| {
        Early::new(CallResult::error(
            &state.call,
            messages::hook_rewrite_invalid(tool.name(), &problems),
            Outcome::InvalidInput,
        ))
    })?;
    state.read_only = tool.is_read_only(&parsed);
    state.parsed = Some(parsed);
    state.call.input = new_input;
    Ok(())
}
