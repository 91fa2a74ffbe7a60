//! The call itself: run the tool, survive its panics, honour cancellation.
//!
//! Tools get the cancellation scope and are expected to stop promptly (Bash
//! kills its process group). A tool that ignores it is given a grace period
//! to return whatever it has, then its future is dropped, so a misbehaving
//! tool cannot hold a batch hostage.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures::future::Either;
use futures::FutureExt;

use super::ready_now::ready_now;
use super::{messages, CallState, Pipeline};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::cancel::{CancelReason, CancelScope};
use baton_tool::content::ContentBlock;
use baton_tool::context::{Context, ToolContext};
use baton_tool::output::{ToolError, ToolOutput};
use baton_tool::progress::ProgressSink;
use baton_tool::tool::Tool;

type Ran = Result<Result<ToolOutput, ToolError>, Box<dyn std::any::Any + Send>>;

pub(super) async fn call(pipeline: &Pipeline, state: &mut CallState, tool: &Tool) -> CallResult {
    let Some(parsed) = state.parsed.take() else {
        return CallResult::error(
            &state.call,
            messages::internal("no parsed input at call time"),
            Outcome::Internal,
        );
    };
    let (cancel, running) = start(pipeline, state, tool, parsed);
    tokio::pin!(running);

    // A tool that is done at its first poll is not watched (see
    // `super::ready_now`); one that waits is, boxed.
    // The box is awaited apart from the statement that makes it: a
    // temporary would keep its room in this future to the statement's end.
    let (ran, mut cancelled) = match ready_now(running.as_mut()).await {
        Some(ran) => (ran, None),
        None => {
            let watch = Box::pin(watched(pipeline.cancel_grace, &cancel, running));
            watch.await
        }
    };
    // The tool may also have noticed cancellation itself and returned early.
    if cancelled.is_none() {
        cancelled = cancel.reason();
    }

    if let Some(reason) = cancelled {
        let mut content = vec![ContentBlock::text(messages::cancelled(&reason, true))];
        let mut shell = None;
        let mut response = None;
        if let Ok(Ok(output)) = ran {
            content.extend(output.content.into_iter().filter(|b| !is_blank(b)));
            shell = output.facts.and_then(|f| f.shell);
            response = output.response;
        }
        let mut result = CallResult::new(
            state.call.id.clone(),
            state.call.name.clone(),
            content,
            true,
            Outcome::Cancelled { started: true },
        );
        // The command's output so far is still worth having, and it was
        // interrupted whatever the tool noticed.
        result.details.shell = shell.map(|mut s| {
            s.interrupted = true;
            s
        });
        // Its own view of how it ended, for PostToolBatch hooks.
        result.response = response;
        return result;
    }

    match ran {
        Ok(Ok(output)) => {
            let outcome = if output.is_error {
                Outcome::ToolError
            } else {
                Outcome::Success
            };
            let mut result = CallResult::new(
                state.call.id.clone(),
                state.call.name.clone(),
                output.content,
                output.is_error,
                outcome,
            );
            result.extra_messages = output.extra_messages;
            result.modifier = output.modifier;
            result.response = output.response;
            if let Some(facts) = output.facts {
                result.details.shell = facts.shell;
                result.details.files_written = facts.files_written;
            }
            result
        }
        Ok(Err(err)) => CallResult::error(
            &state.call,
            messages::tool_failed(&err.message),
            Outcome::ToolError,
        ),
        Err(panic) => CallResult::error(
            &state.call,
            messages::panicked(tool.name(), &panic_message(panic.as_ref())),
            Outcome::Panicked,
        ),
    }
}

/// The tool's future, panics caught, and the call's cancellation scope.
/// Not `async`: the tool's context is made here and moved into the tool's
/// future, and a local of the caller's future that was ever borrowed would
/// keep its room in that future after the move.
fn start<'t>(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &'t Tool,
    parsed: baton_tool::tool::ParsedInput,
) -> (CancelScope, impl Future<Output = Ran> + 't) {
    let mut ctx = if pipeline.hooks.is_empty() {
        hand_over(&mut state.ctx)
    } else {
        // Post-hooks read the call's context after the tool.
        state.ctx.clone()
    };
    // A search filter and the hooks for the tool (see
    // `Pipeline::call_services`; a batch's coordinator added them already).
    ctx.services = pipeline.call_services(&ctx.services);
    let cancel = ctx.cancel.clone();
    // `Tool::call` makes the tool's future at once (no `async` wrapper to
    // defer it to the first poll), so a tool whose `call` panics before it
    // returns its future is caught here, as one that panics in it is.
    let running = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.call(parsed, ctx))) {
        Ok(future) => Either::Left(AssertUnwindSafe(future).catch_unwind()),
        Err(panic) => Either::Right(std::future::ready(Err(panic))),
    };
    (cancel, running)
}

/// Runs the tool on until it ends or the call is cancelled; a cancelled
/// tool gets `grace` to return what it has. The reason is the
/// cancellation's, if it came first.
async fn watched(
    grace: std::time::Duration,
    cancel: &CancelScope,
    mut running: Pin<&mut impl Future<Output = Ran>>,
) -> (Ran, Option<CancelReason>) {
    tokio::select! {
        biased;
        r = running.as_mut() => (r, None),
        _ = cancel.cancelled() => {
            let reason = cancel.reason();
            match tokio::time::timeout(grace, running).await {
                Ok(r) => (r, reason),
                Err(_) => (Ok(Err(ToolError::new("did not stop within the grace period"))), reason),
            }
        }
    }
}

/// The call's context itself, for the tool, when no stage after the tool
/// reads more of it than its session (the size stage does; post-hooks,
/// which read the rest, run only when there are hooks). A copy cost two
/// allocations and frees per call (the id and the working directory);
/// what stays behind shares the original's parts but allocates nothing.
fn hand_over(ctx: &mut ToolContext) -> ToolContext {
    let stand_in = ToolContext {
        call_id: String::new(),
        context: Context {
            cwd: std::path::PathBuf::new(),
            roots: ctx.context.roots.clone(),
            readable: ctx.context.readable.clone(),
            permission_mode: ctx.context.permission_mode,
            extensions: ctx.context.extensions.clone(),
        },
        session: ctx.session.clone(),
        cancel: ctx.cancel.clone(),
        progress: ProgressSink::discard(),
        services: ctx.services.clone(),
        approval: ctx.approval,
    };
    std::mem::replace(ctx, stand_in)
}

fn is_blank(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { text } if text.trim().is_empty())
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "no message".to_string()
    }
}
