//! PostToolUse / PostToolUseFailure hooks: they see the result and may feed
//! text back to the model, add context, or stop the turn. They cannot undo
//! the call, so nothing they say turns a result into a different outcome.

use super::{CallState, Pipeline};
use crate::call::{CallResult, Outcome};
use crate::content::ContentBlock;
use crate::hooks::HookEvent;

pub(super) async fn run(
    pipeline: &Pipeline,
    state: &CallState,
    mut result: CallResult,
) -> CallResult {
    let failed = matches!(result.outcome, Outcome::ToolError | Outcome::Panicked);
    if matches!(result.outcome, Outcome::Cancelled { .. }) {
        return result;
    }
    let event = if failed {
        HookEvent::PostToolUseFailure
    } else {
        HookEvent::PostToolUse
    };
    if !pipeline.hooks.has_any(event, &state.call.name) {
        return result;
    }
    let mut input = state.hook_input(event);
    input.tool_input = state.call.input.clone();
    if failed {
        input.error = Some(result.text());
    } else {
        input.tool_response = Some(serde_json::to_value(&result.content).unwrap_or_default());
    }
    let outcome = pipeline.hooks.run(&input).await;
    result.diagnostics.extend(outcome.errors);
    if let Some(feedback) = outcome.feedback.or(outcome.reason) {
        result.content.push(ContentBlock::text(format!(
            "{} hook feedback: {feedback}",
            event.as_str()
        )));
    }
    for text in outcome.additional_context {
        result.content.push(ContentBlock::text(text));
    }
    if outcome.stop.is_some() {
        result.stop_turn = outcome.stop;
    }
    result
}
