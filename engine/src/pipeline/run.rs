//! Running a prepared call: the future that goes through every stage.
//!
//! The future's size is paid on every call. The runtime boxes it (so a
//! call that has to wait can move to a task after its first poll) and
//! every level of `async` nesting moves its inner future into place: with
//! the call, its context and the stages' shared state carried by value
//! through each level, the box was about 3.8 KB, too large for the
//! allocator's per-thread cache, and its bytes were copied several times
//! per call (docs/benchmarks.md §1c, session 11). So [`Pipeline::run`]
//! does the moving once, synchronously, into one box (a `Job`: the
//! prepared call's leftovers and the [`CallState`] the stages share by
//! reference), and the future itself carries little more than that box
//! and the stage it is waiting on. Stages that would wait are watched for
//! cancellation only once they do (see `ready_now`).

use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Instant;

use super::{
    batch_hooks, invoke, permission, post_hooks, pre_hooks, size, trace, validate, CallState,
    Early, Flow, Pipeline, PreparedCall,
};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::context::ToolContext;
use baton_tool::schema::SchemaProblem;
use baton_tool::tool::{ParsedInput, Tool};

/// What a run needs from its prepared call besides the stages' shared
/// state, used up before the first stage.
struct Setup {
    tool: Option<Arc<Tool>>,
    parsed: Option<Result<ParsedInput, Vec<SchemaProblem>>>,
    rejected: Option<String>,
    prepared_at: Instant,
    start_at: Option<Instant>,
    queued: crate::metrics::Queued,
}

/// Everything one run holds, in one box: the future holds the box.
struct Job {
    setup: Setup,
    state: CallState,
}

impl Pipeline {
    /// Runs a prepared call through every stage. Always returns a result.
    /// The call's pipeline starts (its clock is read) when the future is
    /// first polled, not when it is made.
    pub fn run(
        &self,
        call: PreparedCall,
        ctx: ToolContext,
    ) -> impl Future<Output = CallResult> + Send + '_ {
        run_call(self, job(call, ctx))
    }

    /// [`Self::run`] for a future that owns its pipeline (one that may move
    /// to a task of its own).
    pub fn run_owned(
        self: Arc<Self>,
        call: PreparedCall,
        ctx: ToolContext,
    ) -> impl Future<Output = CallResult> + Send + 'static {
        run_call(self, job(call, ctx))
    }
}

/// Moves the call and its context into the box the run holds.
fn job(call: PreparedCall, ctx: ToolContext) -> Box<Job> {
    let PreparedCall {
        call,
        tool,
        parsed,
        read_only,
        rejected,
        prepared_at,
        start_at,
        queued,
        ..
    } = call;
    Box::new(Job {
        setup: Setup {
            tool,
            parsed,
            rejected,
            prepared_at,
            start_at,
            queued,
        },
        state: CallState::new(call, ctx, read_only),
    })
}

/// Generic over how the pipeline is held (borrowed, or shared with an
/// owned future), so neither case adds a level of nesting.
async fn run_call<P: Deref<Target = Pipeline>>(pipeline: P, mut job: Box<Job>) -> CallResult {
    use tracing::Instrument;
    // One clock read ends the queue and starts both the call's duration
    // and its first phase; the last phase's end is the call's end when
    // nothing runs after the tool (see `run_stages`).
    let started = job.setup.start_at.unwrap_or_else(Instant::now);
    let span = trace::call_span(
        &job.state.call,
        started.saturating_duration_since(job.setup.prepared_at),
    );
    let queued = std::mem::replace(&mut job.setup.queued, crate::metrics::Queued::none());
    let _running = queued.start();
    let tool = job.setup.tool.clone();
    let (mut result, ended) = run_stages(&pipeline, job, started).instrument(span).await;
    crate::metrics::call_finished(tool.as_ref().map(|t| t.name()), &result.outcome);
    let ended = ended.unwrap_or_else(Instant::now);
    result.details.duration_ms = Some(ended.saturating_duration_since(started).as_millis() as u64);
    if result.outcome != Outcome::Success {
        // What the tool wrote counts only for a call that succeeded.
        result.details.files_written.clear();
    }
    result
}

/// The call's result, and when its tool returned if nothing that takes
/// time ran after it (no post-hooks): the call's end, without reading
/// the clock again.
async fn run_stages(
    pipeline: &Pipeline,
    mut job: Box<Job>,
    started: Instant,
) -> (CallResult, Option<Instant>) {
    if let Some(text) = job.setup.rejected.take() {
        return (
            CallResult::error(&job.state.call, text, Outcome::InvalidInput),
            None,
        );
    }
    let mut ended = None;
    let flow: Flow<CallResult> = async {
        let Job { setup, state } = &mut *job;
        let tool = validate::lookup(state, setup.tool.take())?;
        // Hooks, rules and results know a tool by its name, not the alias
        // the model happened to use.
        if state.call.name != tool.name() {
            state.call.name = tool.name().to_string();
        }
        validate::not_cancelled(state)?;
        let start = started;
        let parsed = validate::schema(state, &tool, setup.parsed.take(), &pipeline.pool)?;
        state.parsed = Some(parsed);
        let cancel = state.ctx.cancel.clone();
        validate::interruptible(&cancel, validate::validate_input(state, &tool))
            .await
            .map_err(|reason| validate::interrupted(state, reason))??;
        let start = trace::phase("validate_ms", start);
        // Hook stages are boxed, and only entered when there are hooks:
        // inline they would grow every call's future by their size.
        let start = if pipeline.hooks.is_empty() {
            // No hooks ran: the phase took no time, and needs no clock.
            trace::phase_at("hooks_ms", start, start)
        } else {
            let hooks = Box::pin(pre_hooks::run(pipeline, state, &tool));
            validate::interruptible(&cancel, hooks)
                .await
                .map_err(|reason| validate::interrupted(state, reason))??;
            trace::phase("hooks_ms", start)
        };
        permission::decide(pipeline, state, &tool).await?;
        let start = trace::phase("permission_ms", start);
        let result = invoke::call(pipeline, state, &tool).await;
        ended = Some(trace::phase("exec_ms", start));
        let result = size::limit(result, tool.def(), &state.ctx.session);
        if pipeline.hooks.is_empty() {
            return Ok(result);
        }
        ended = None;
        // Post-hooks are awaited in here, not after the block: a result
        // held across an await there kept its room (about 270 bytes) in
        // every call's future; in here it shares room with the stages'.
        let hooks = Box::pin(post_hooks::run(pipeline, state, &tool, result));
        Ok(hooks.await)
    }
    .await;
    let result = match flow {
        Ok(result) => result,
        Err(Early(result)) => *result,
    };
    let record = batch_hooks::record(pipeline, &job.state.call, &result);
    let mut result = job.state.finish(result);
    result.batch_record = record;
    trace::outcome(&result);
    (result, ended)
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_tool::output::{ToolError, ToolOutput};
    use baton_tool::tool::{ToolDef, ToolLogic};
    use serde_json::Value;

    struct Noop;

    #[async_trait::async_trait]
    impl ToolLogic<Value> for Noop {
        async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
    }

    /// A tool whose `call` panics before it returns its future (written
    /// without `async_trait`'s deferral).
    struct PanicsEarly;

    impl ToolLogic<Value> for PanicsEarly {
        fn call<'life0, 'async_trait>(
            &'life0 self,
            _input: Value,
            _ctx: ToolContext,
        ) -> std::pin::Pin<
            Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'async_trait>,
        >
        where
            'life0: 'async_trait,
            Self: 'async_trait,
        {
            panic!("before its future")
        }
    }

    fn tool(name: &str, logic: impl ToolLogic<Value>) -> Tool {
        let schema = serde_json::json!({"type": "object"});
        match Tool::raw(ToolDef::new(name, "a test tool"), schema, logic) {
            Ok(tool) => tool,
            Err(e) => panic!("the test tool's schema compiles: {e:?}"),
        }
    }

    /// A call of `name` with an empty input, and its context.
    fn call_of(pipeline: &Pipeline, name: &str) -> (PreparedCall, ToolContext) {
        let session = baton_tool::session::Session::new("s", std::env::temp_dir());
        let call = baton_tool::call::ToolUse::new("c", name, serde_json::json!({}));
        let ctx = ToolContext::standalone(
            "c",
            baton_tool::context::Context::new(std::env::temp_dir()),
            session,
        );
        (pipeline.prepare(call), ctx)
    }

    #[tokio::test]
    async fn a_tool_that_panics_before_its_future_gets_a_panicked_result() {
        let pipeline = Pipeline::allow_all_unsafe(baton_tool::pool::ToolPool::of(vec![tool(
            "Early",
            PanicsEarly,
        )]));
        let (call, ctx) = call_of(&pipeline, "Early");
        let result = pipeline.run(call, ctx).await;
        assert_eq!(result.outcome, Outcome::Panicked);
        assert!(result.is_error);
    }

    /// The runtime boxes this future for every call. Above about 1 KB a
    /// box no longer comes from malloc's per-thread cache, and its bytes
    /// are copied as it is made: it was about 3.8 KB before session 11,
    /// 640 bytes after (the same in debug and release builds).
    #[test]
    fn a_calls_future_stays_small() {
        let pipeline = Arc::new(Pipeline::allow_all_unsafe(baton_tool::pool::ToolPool::of(
            vec![tool("Noop", Noop)],
        )));
        let (call, ctx) = call_of(&pipeline, "Noop");
        let future = pipeline.clone().run_owned(call, ctx);
        let size = std::mem::size_of_val(&future);
        assert!(size <= 1_000, "a call's pipeline future is {size} bytes");
    }
}
