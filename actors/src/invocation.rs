//! The invocation actor: one per call, living exactly as long as its call.
//!
//! It runs the per-call pipeline and keeps the result in its state; when it
//! stops, ractor hands that final state to the supervising coordinator with
//! the termination event. Delivering the result through the supervision
//! event (rather than a separate message) means the coordinator learns
//! "finished" and "here is the result" in one step, and cannot mistake a
//! result still in flight for a lost one. An invocation that panics or is
//! killed arrives without a state; the coordinator then writes the result.

use std::sync::Arc;

use baton_engine::{CallResult, Pipeline, PreparedCall, ToolContext};
use ractor::{Actor, ActorProcessingErr, ActorRef};

/// Faults a test can inject into an invocation, to exercise supervision.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InjectedFault {
    #[default]
    None,
    /// The actor panics after running the call, losing its result.
    Panic,
    /// The actor is killed while the call runs.
    Kill,
    /// The coordinator panics while booking this call's result (before the
    /// ordering stage has it): the batch's last line of defence must still
    /// give every call a result.
    PanicCoordinator,
}

pub struct Invocation;

pub struct InvocationArgs {
    pub pipeline: Arc<Pipeline>,
    pub call: PreparedCall,
    pub ctx: ToolContext,
    pub fault: InjectedFault,
    /// The batch's span, parent of the call's.
    pub span: tracing::Span,
}

pub struct InvocationState {
    work: Option<(PreparedCall, ToolContext)>,
    span: tracing::Span,
    pipeline: Arc<Pipeline>,
    fault: InjectedFault,
    /// The call's result, once it has one.
    pub result: Option<CallResult>,
}

impl Actor for Invocation {
    type Msg = ();
    type State = InvocationState;
    type Arguments = InvocationArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<()>,
        args: InvocationArgs,
    ) -> Result<InvocationState, ActorProcessingErr> {
        Ok(InvocationState {
            work: Some((args.call, args.ctx)),
            pipeline: args.pipeline,
            fault: args.fault,
            span: args.span,
            result: None,
        })
    }

    /// The call runs here, in the actor's own task, so the coordinator stays
    /// free to take new calls and interrupts while it runs.
    async fn post_start(
        &self,
        myself: ActorRef<()>,
        state: &mut InvocationState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some((call, ctx)) = state.work.take() {
            if state.fault == InjectedFault::Kill {
                myself.kill();
                // Let the kill signal reach the running loop.
                std::future::pending::<()>().await;
            }
            // Boxed: the pipeline's future is large, and the actor's task
            // future would otherwise carry (and move) it whole.
            let run = state.pipeline.run(call, ctx);
            let result = Box::pin(tracing::Instrument::instrument(run, state.span.clone())).await;
            if state.fault == InjectedFault::Panic {
                panic!("injected invocation fault");
            }
            state.result = Some(result);
        }
        myself.stop(None);
        Ok(())
    }
}
