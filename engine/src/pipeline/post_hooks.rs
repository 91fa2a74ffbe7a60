//! PostToolUse / PostToolUseFailure hooks: they see the result (in Claude
//! Code's per-tool shape) and may feed text back to the model, add context,
//! replace the output the model sees (`updatedToolOutput`), or stop the
//! turn. They cannot undo the call, so nothing they say turns a result into
//! a different outcome.

use super::{CallState, Pipeline};
use crate::hooks::response::tool_response;
use crate::hooks::{HookEvent, HookOutcome};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::content::ContentBlock;
use baton_tool::tool::Tool;

pub(super) async fn run(
    pipeline: &Pipeline,
    state: &CallState,
    tool: &Tool,
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
    let error = failed.then(|| result.text());
    let response = (!failed).then(|| tool_response(&result));
    let prepare = |input: &mut crate::hooks::HookInput| {
        input.error = error.clone();
        input.tool_response = response.clone();
    };
    // One run per view of the call (a patch: per path); nothing to carry
    // back from here, the call has run.
    let outcome = super::hook_views::run(pipeline, state, tool, event, &state.call.input, prepare)
        .await
        .unwrap_or_else(HookOutcome::error);
    // Interrupted hooks said nothing: the result stays as the tool made it,
    // with the note in its diagnostics.
    result.diagnostics.extend(outcome.errors);
    result.system_messages.extend(outcome.system_messages);
    if let Some(conflict) = outcome.conflict {
        result
            .diagnostics
            .push(format!("{} hooks: {conflict}", event.as_str()));
    } else if let Some(replacement) = outcome.updated_output {
        // What the model sees now; the outcome (and is_error) stay.
        result.content = match replacement {
            serde_json::Value::String(text) => vec![ContentBlock::text(text)],
            other => match serde_json::from_value::<Vec<ContentBlock>>(other.clone()) {
                Ok(blocks) if !blocks.is_empty() => blocks,
                _ => vec![ContentBlock::text(other.to_string())],
            },
        };
    }
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
