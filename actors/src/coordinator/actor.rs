//! The coordinator actor: one per message, owner of its batch.
//!
//! It takes calls, the end of the message and interrupts from the host, and
//! the end of its invocations: each invocation task reports how it ended
//! exactly once, whatever the end was (result, panic, abort; see
//! [`crate::invocation`]). When it stops unfinished, its state aborts every
//! invocation still running.

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

use super::messages::CoordMsg;
use super::state::{BatchSpec, BatchState};

pub(crate) struct Coordinator;

impl Actor for Coordinator {
    type Msg = CoordMsg;
    type State = BatchState;
    type Arguments = BatchSpec;

    async fn pre_start(
        &self,
        myself: ActorRef<CoordMsg>,
        spec: BatchSpec,
    ) -> Result<BatchState, ActorProcessingErr> {
        let (services, children) = crate::nesting::services_for(&spec, &myself);
        Ok(BatchState::new(spec, services, children))
    }

    async fn handle(
        &self,
        myself: ActorRef<CoordMsg>,
        msg: CoordMsg,
        state: &mut BatchState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CoordMsg::Wake => {
                // All of it, even once the batch is finished: an interrupt
                // still ends the PostToolBatch hooks a finished batch waits
                // for, and the rest is harmless after the end.
                for msg in state.take_waiting() {
                    handle_one(&myself, msg, state);
                }
            }
            other => handle_one(&myself, other, state),
        }
        Ok(())
    }

    /// Nothing is linked to a coordinator (invocations are tasks, nested
    /// batches have coordinators of their own); ractor's default would stop
    /// this batch on any such event, so none is acted on.
    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<CoordMsg>,
        _event: SupervisionEvent,
        _state: &mut BatchState,
    ) -> Result<(), ActorProcessingErr> {
        Ok(())
    }
}

/// One message, whether from the mailbox or from the intake.
fn handle_one(myself: &ActorRef<CoordMsg>, msg: CoordMsg, state: &mut BatchState) {
    match msg {
        CoordMsg::Wake => {}
        CoordMsg::Add(call, id) => state.add(myself, call, id),
        CoordMsg::Answered(result, id) => state.add_answered(myself, result, id),
        CoordMsg::End => {
            state.ended = true;
            state.maybe_finish(myself);
        }
        CoordMsg::Interrupt(kind) => state.interrupt(myself, kind),
        CoordMsg::HostGone => state.host_gone(myself),
        CoordMsg::CancelCall(id, reason) => state.cancel_call(myself, &id, reason),
        CoordMsg::Deadline(id, after) => BatchState::arm_deadline(myself, id, after),
        CoordMsg::Finished(index, ending) => state.invocation_stopped(myself, index, ending),
    }
}
