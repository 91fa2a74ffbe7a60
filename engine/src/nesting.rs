//! Opening a batch under a running call (SPEC §15).
//!
//! A subagent (the `Agent` tool, or a host running its own model loop for a
//! call) needs a coordinator of its own whose cancellation hangs under the
//! call that opened it: stopping the parent must reach every descendant,
//! while a failure inside the child stays in the child. The engine does not
//! know the actor layer, so it only names the capability; the runtime puts a
//! [`NestingService`] into [`ToolContext::services`] of every call it runs.

use std::sync::Arc;

use async_trait::async_trait;

use baton_tool::call::{CallResult, ToolUse};
use baton_tool::context::{Context, ToolContext};
use baton_tool::pool::ToolPool;
use baton_tool::progress::Progress;

/// What a nested batch may differ in from its parent.
#[derive(Clone, Debug, Default)]
pub struct NestedOptions {
    /// The tools the child may use (for example a restricted pool, §3);
    /// the parent's pool when `None`.
    pub pool: Option<ToolPool>,
    /// The context the child starts from; the parent call's when `None`.
    pub context: Option<Context>,
}

/// Why a nested batch could not be opened or fed.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NestingError {
    /// The batch would nest deeper than the runtime allows.
    #[error("nesting is limited to {max} levels")]
    TooDeep {
        /// The most levels allowed.
        max: usize,
    },
    /// The call that would own the batch was cancelled.
    #[error("the parent call was already cancelled")]
    ParentCancelled,
    /// The batch no longer takes calls (why).
    #[error("the nested batch is closed: {0}")]
    Closed(String),
    /// The runtime could not open the batch, or it refused a call; the
    /// runtime's own error is the source.
    #[error("the nested batch is closed: {0}")]
    Runtime(#[source] Arc<dyn std::error::Error + Send + Sync>),
}

/// What a nested batch reports: progress as it happens, results in call order.
#[derive(Debug)]
#[non_exhaustive]
pub enum NestedEvent {
    /// A nested call reported progress.
    Progress {
        /// The nested call's `tool_use` id.
        call_id: String,
        /// What it reported.
        progress: Progress,
    },
    /// A nested call's result, in call order.
    Result(CallResult),
}

/// One open nested batch.
#[async_trait]
pub trait NestedBatch: Send {
    /// Adds a call; it starts as soon as the scheduling rules allow.
    fn add(&mut self, call: ToolUse) -> Result<(), NestingError>;
    /// No more calls will come.
    fn end(&mut self);
    /// The next event; `None` once every call has its result and the batch
    /// was ended.
    async fn next_event(&mut self) -> Option<NestedEvent>;
}

/// Opens batches nested under the call whose context is given.
#[async_trait]
pub trait NestedBatches: Send + Sync {
    /// The tools of the batch whose calls use this service (a subagent's
    /// pool is cut from it); `None` when the runtime does not say.
    fn pool(&self) -> Option<ToolPool> {
        None
    }

    /// Opens a batch nested under the call of `parent`, cancelled with it.
    async fn open(
        &self,
        parent: &ToolContext,
        options: NestedOptions,
    ) -> Result<Box<dyn NestedBatch>, NestingError>;
}

/// The key under which the runtime offers [`NestedBatches`] in
/// [`ToolContext::services`].
#[derive(Clone)]
pub struct NestingService(pub Arc<dyn NestedBatches>);

// Not derived: the service is a trait object.
baton_tool::debug_fields! { NestingService { .. } }

impl NestingService {
    /// The service of `ctx`, if the runtime offered one.
    pub fn of(ctx: &ToolContext) -> Option<Arc<dyn NestedBatches>> {
        ctx.services.get::<NestingService>().map(|s| s.0.clone())
    }
}

/// Runs `calls` as one nested batch under `parent` and returns their results
/// in order; a convenience for tools that do not stream.
pub async fn run_nested(
    parent: &ToolContext,
    options: NestedOptions,
    calls: Vec<ToolUse>,
) -> Result<Vec<CallResult>, NestingError> {
    let service = NestingService::of(parent)
        .ok_or_else(|| NestingError::Closed("no nesting service in this context".into()))?;
    let mut batch = service.open(parent, options).await?;
    for call in calls {
        batch.add(call)?;
    }
    batch.end();
    let mut results = Vec::new();
    while let Some(event) = batch.next_event().await {
        if let NestedEvent::Result(r) = event {
            results.push(r);
        }
    }
    Ok(results)
}
