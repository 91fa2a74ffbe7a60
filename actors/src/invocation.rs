//! The invocation: one lightweight task per call, living exactly as long
//! as its call, under its batch's coordinator.
//!
//! It was a ractor actor of its own. A no-op call's whole life then cost
//! about as much as the rest of the engine together (see
//! docs/benchmarks.md §1): an actor brings a mailbox of four ports, a
//! registry entry, a start handshake and a supervision event, and a call
//! uses none of them — nothing ever sends an invocation a message. A plain
//! tokio task keeps what the actor gave: the call runs apart from the
//! coordinator (which stays free for new calls and interrupts), the
//! coordinator learns of its end exactly once, whatever the end was, and
//! stopping the coordinator stops it.
//!
//! - A call is first polled on the coordinator (see [`start`]); one that
//!   ends there needs no task, and the coordinator books its end at once.
//! - The result travels to the coordinator as [`CoordMsg::Finished`].
//! - A call that panics is caught, and reported without a result.
//! - A task dropped before it reported (aborted by its coordinator, or by
//!   the runtime shutting down) reports from its [`Report`]'s `Drop`: the
//!   coordinator then writes the call's result, as it did for a killed actor.
//! - The coordinator keeps each task's [`AbortHandle`] and aborts the tasks
//!   still running if it stops before its batch is finished.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use baton_engine::{CallResult, Pipeline, PreparedCall, ToolContext};
use futures::FutureExt;
use ractor::ActorRef;
use tokio::task::AbortHandle;

use crate::coordinator::CoordMsg;

/// Faults a test can inject into an invocation, to exercise supervision.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InjectedFault {
    #[default]
    None,
    /// The invocation panics after running the call, losing its result.
    Panic,
    /// The invocation is aborted while the call runs.
    Kill,
    /// The coordinator panics while booking this call's result (before the
    /// ordering stage has it): the batch's last line of defence must still
    /// give every call a result.
    PanicCoordinator,
}

pub(crate) struct InvocationArgs {
    pub pipeline: Arc<Pipeline>,
    pub call: PreparedCall,
    pub ctx: ToolContext,
    pub fault: InjectedFault,
    /// The batch's span, parent of the call's.
    pub span: tracing::Span,
}

/// How an invocation ended, as its coordinator learns it.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The call ran to its result.
    Result(Box<CallResult>),
    /// The task ended without a result; the text says how.
    Lost(&'static str),
}

/// The one report an invocation owes its coordinator; sent on drop if the
/// task never got to send it.
struct Report {
    coordinator: ActorRef<CoordMsg>,
    index: usize,
    sent: bool,
}

impl Report {
    fn send(mut self, ending: Ending) {
        self.sent = true;
        // A coordinator that is gone settled the call itself.
        let _ = self
            .coordinator
            .cast(CoordMsg::Finished(self.index, ending));
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if !self.sent {
            let _ = self.coordinator.cast(CoordMsg::Finished(
                self.index,
                Ending::Lost("the task running it was killed"),
            ));
        }
    }
}

/// How starting a call went.
pub(crate) enum Start {
    /// The call finished during its first poll, on the coordinator.
    Done(Ending),
    /// The call runs on its own task, which will report its end.
    Running(AbortHandle),
}

/// The call's whole pipeline, owned, boxed: it may move into a task after
/// its first poll.
type Run = Pin<Box<dyn Future<Output = CallResult> + Send>>;

/// Starts call `index`. With `inline`, the call's first poll happens here,
/// on the coordinator: a call that needs nothing outside the process (a
/// no-op, a plan update, a denial, a validation error) ends there and then,
/// and is spared a task, its wake-up and the message back, which together
/// cost more than the call itself (docs/benchmarks.md §1b). A call that
/// must wait for anything (a process, a file on the blocking pool, a
/// server, an approval) returns `Pending` and moves, already started, onto
/// its own task. Polling with a waker that does nothing is sound: the task
/// polls the future again as soon as it starts, and that poll registers
/// the task's waker. A panic during the first poll is caught and reported
/// as one from the task would be. Injected faults always take the task.
pub(crate) fn start(
    coordinator: &ActorRef<CoordMsg>,
    index: usize,
    args: InvocationArgs,
    inline: bool,
) -> Start {
    let InvocationArgs {
        pipeline,
        call,
        ctx,
        fault,
        span,
    } = args;
    // No `async` block around the pipeline's future: each level of
    // nesting would copy the future inside it on the first poll.
    let mut run: Run = Box::pin(tracing::Instrument::instrument(
        pipeline.run_owned(call, ctx),
        span,
    ));
    if inline && fault == InjectedFault::None {
        let mut cx = Context::from_waker(Waker::noop());
        match std::panic::catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(result)) => return Start::Done(Ending::Result(Box::new(result))),
            Ok(Poll::Pending) => {}
            Err(_) => return Start::Done(Ending::Lost(PANICKED)),
        }
    }
    Start::Running(spawn(coordinator.clone(), index, run, fault))
}

const PANICKED: &str = "the task running it panicked";

/// Runs the rest of call `index` on its own task; the handle aborts it.
fn spawn(
    coordinator: ActorRef<CoordMsg>,
    index: usize,
    run: Run,
    fault: InjectedFault,
) -> AbortHandle {
    let report = Report {
        coordinator,
        index,
        sent: false,
    };
    let task = tokio::spawn(async move {
        let work = async move {
            let result = run.await;
            if fault == InjectedFault::Panic {
                panic!("injected invocation fault");
            }
            result
        };
        let ending = match AssertUnwindSafe(work).catch_unwind().await {
            Ok(result) => Ending::Result(Box::new(result)),
            Err(_) => Ending::Lost(PANICKED),
        };
        report.send(ending);
    });
    let handle = task.abort_handle();
    if fault == InjectedFault::Kill {
        // As a killed actor: the task goes away with the call unfinished,
        // and only its report's drop tells the coordinator.
        handle.abort();
    }
    handle
}
