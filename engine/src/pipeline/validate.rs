//! Stages before anything runs: lookup, cancellation check, schema,
//! the tool's own validation.

use std::sync::Arc;

use super::{messages, CallState, Early, Flow};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::pool::ToolPool;
use baton_tool::schema::SchemaProblem;
use baton_tool::tool::{ParsedInput, Tool};

pub(super) fn lookup(state: &CallState, tool: Option<Arc<Tool>>) -> Flow<Arc<Tool>> {
    tool.ok_or_else(|| {
        Early::new(CallResult::error(
            &state.call,
            messages::unknown_tool(&state.call.name),
            Outcome::UnknownTool,
        ))
    })
}

pub(super) fn not_cancelled(state: &CallState) -> Flow {
    match state.ctx.cancel.reason() {
        Some(reason) => Err(Early::new(CallResult::error(
            &state.call,
            messages::cancelled(&reason, false),
            Outcome::Cancelled { started: false },
        ))),
        None => Ok(()),
    }
}

/// Runs a stage that may wait (the tool's validation, PreToolUse hooks)
/// until it ends or the call is cancelled, whichever comes first. On
/// cancellation the stage's future is dropped — a hook's process tree is
/// killed with it — and the call ends as never started: the tool must not
/// run after the user interrupted.
/// A stage that ends on its first poll (the default validation always
/// does) is not watched: see [`super::ready_now`].
pub(super) async fn interruptible(
    cancel: &baton_tool::cancel::CancelScope,
    stage: impl std::future::Future<Output = Flow>,
) -> Result<Flow, baton_tool::cancel::CancelReason> {
    let mut stage = std::pin::pin!(stage);
    if let Some(flow) = super::ready_now::ready_now(stage.as_mut()).await {
        return Ok(flow);
    }
    // Bound before it is awaited: a temporary of the awaiting statement
    // would keep its room in this future.
    let watch = Box::pin(async move {
        tokio::select! {
            biased;
            flow = stage => Ok(flow),
            _ = cancel.cancelled() => Err(cancel.reason().unwrap_or(baton_tool::cancel::CancelReason::User)),
        }
    });
    watch.await
}

/// The result of a call interrupted before its tool started.
pub(super) fn interrupted(state: &CallState, reason: baton_tool::cancel::CancelReason) -> Early {
    Early::new(CallResult::error(
        &state.call,
        messages::cancelled(&reason, false),
        Outcome::Cancelled { started: false },
    ))
}

/// Uses the input parsed at add time, or parses now.
pub(super) fn schema(
    state: &CallState,
    tool: &Tool,
    parsed: Option<Result<ParsedInput, Vec<SchemaProblem>>>,
    pool: &ToolPool,
) -> Flow<ParsedInput> {
    let parsed = parsed.unwrap_or_else(|| tool.parse(&state.call.input));
    parsed.map_err(|problems| {
        let deferred_hint = crate::deferred::needs_load_hint(tool, pool, &state.ctx.session);
        Early::new(CallResult::error(
            &state.call,
            messages::invalid_input(
                tool.name(),
                &problems,
                state.call.input_error.as_deref(),
                deferred_hint,
            ),
            Outcome::InvalidInput,
        ))
    })
}

pub(super) async fn validate_input(state: &CallState, tool: &Tool) -> Flow {
    let Some(parsed) = state.parsed.as_ref() else {
        return Err(Early::new(CallResult::error(
            &state.call,
            messages::internal("the input was not parsed before validation"),
            Outcome::Internal,
        )));
    };
    tool.validate_input(parsed, &state.ctx)
        .await
        .map_err(|message| {
            Early::new(CallResult::error(
                &state.call,
                messages::validation_failed(tool.name(), &message),
                Outcome::ValidationFailed,
            ))
        })
}
