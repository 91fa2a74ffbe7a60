//! PreToolUse hooks: may deny, ask, allow, rewrite the input, add context,
//! or stop the turn. Their permission verdict is kept for the permission
//! stage, which weighs it against the rules.

use super::{messages, CallState, Early, Flow, Pipeline};
use crate::call::{CallResult, Outcome};
use crate::hooks::{HookDecision, HookEvent};
use crate::tool::Tool;

/// The verdict a PreToolUse hook left for the permission stage.
#[derive(Clone, Debug, Default)]
pub(crate) struct HookVerdict {
    pub decision: Option<HookDecision>,
    pub reason: Option<String>,
}

pub(super) async fn run(pipeline: &Pipeline, state: &mut CallState, tool: &Tool) -> Flow {
    if !pipeline.hooks.has_any(HookEvent::PreToolUse, tool.name()) {
        return Ok(());
    }
    let outcome = pipeline
        .hooks
        .run(&state.hook_input(HookEvent::PreToolUse))
        .await;
    state.diagnostics.extend(outcome.errors);
    state.extra_context.extend(outcome.additional_context);
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
    if let Some(new_input) = outcome.updated_input {
        // A rewritten input must satisfy the schema like the model's did.
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
    }
    state.hook_verdict = HookVerdict {
        decision: outcome.decision,
        reason: outcome.reason,
    };
    Ok(())
}
