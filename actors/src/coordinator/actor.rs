//! The coordinator actor: one per message, owner of its batch.
//!
//! It takes calls, the end of the message and interrupts from the host, and
//! the termination of its invocation actors from ractor's supervision: each
//! invocation is linked to it, so a call that ends in any way (result, panic,
//! kill) reaches the coordinator as exactly one event. When it stops, ractor
//! stops every invocation still linked to it.

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

use super::messages::CoordMsg;
use super::state::{BatchSpec, BatchState};
use crate::invocation::InvocationState;

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
            CoordMsg::Add(call, id) => state.add(&myself, call, id),
            CoordMsg::End => {
                state.ended = true;
                state.maybe_finish(&myself);
            }
            CoordMsg::Interrupt(kind) => state.interrupt(&myself, kind),
            CoordMsg::HostGone => state.host_gone(&myself),
            CoordMsg::CancelCall(id, reason) => state.cancel_call(&myself, &id, reason),
            CoordMsg::Deadline(id, after) => BatchState::arm_deadline(&myself, id, after),
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<CoordMsg>,
        event: SupervisionEvent,
        state: &mut BatchState,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorTerminated(cell, final_state, reason) => {
                let result = final_state
                    .and_then(|mut s| s.take::<InvocationState>().ok())
                    .and_then(|s| s.result);
                let why = match reason.as_deref() {
                    Some("killed") => "the task running it was killed".to_string(),
                    Some(other) => format!("the task running it stopped ({other})"),
                    None => "the task running it stopped without a result".to_string(),
                };
                state.invocation_stopped(&myself, cell.get_id(), result, &why);
            }
            SupervisionEvent::ActorFailed(cell, err) => {
                let why = format!("the task running it failed ({err})");
                state.invocation_stopped(&myself, cell.get_id(), None, &why);
            }
            _ => {}
        }
        Ok(())
    }
}
