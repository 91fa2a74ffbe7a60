//! Calls past the message's call limit, answered as they arrive.
//!
//! Such a call used to be prepared like any other (a boxed `PreparedCall`
//! holding its whole input), queued, started as an invocation actor and
//! run through the pipeline only to return its refusal: a message of
//! 100,000 calls held 90,000 of them at once for the 10,000 that run. Now
//! the call is answered on arrival and only its id and name are kept (in
//! the slot, and in the ordering stage, which makes the refusal only when
//! its turn comes); its input is dropped at once, and it takes no
//! part in scheduling, id checks or hooks.

use std::sync::Arc;

use baton_engine::{InterruptBehavior, Outcome, ToolUse, WorkKind};
use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::{BatchState, Phase, Slot};

impl BatchState {
    /// Settles call `call` (past the limit of `max` calls) at once.
    pub(crate) fn refuse_over_limit(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        call: ToolUse,
        call_id: Arc<str>,
        max: usize,
    ) {
        let index = self.slots.len();
        let ToolUse { name, .. } = call;
        self.slots.push(Slot {
            call_id: call_id.clone(),
            name: Arc::from(name),
            label: String::new(),
            safe: false,
            work: WorkKind::Process,
            read_only: false,
            interrupt: InterruptBehavior::Block,
            cancels_siblings: false,
            phase: Phase::Settled,
        });
        let slot = &self.slots[index];
        self.lifecycle
            .queued(&self.sink, index, &call_id, &slot.name);
        self.lifecycle
            .finished(&self.sink, index, &call_id, &Outcome::InvalidInput);
        let name = slot.name.to_string();
        self.ordering
            .refuse_over_limit(index, call_id, name, max, &self.sink);
        self.maybe_finish(myself);
    }
}
