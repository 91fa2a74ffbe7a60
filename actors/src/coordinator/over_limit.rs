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

use baton_engine::{Outcome, ToolUse};
use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::BatchState;

impl BatchState {
    /// Settles call `call` (past the limit of `max` calls) at once.
    pub(crate) fn refuse_over_limit(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        call: ToolUse,
        call_id: Arc<str>,
        max: usize,
    ) {
        let ToolUse { name, .. } = call;
        let name: Arc<str> = Arc::from(name);
        let index = self.settled_slot(&call_id, name.clone(), &Outcome::InvalidInput);
        let name = name.to_string();
        self.ordering
            .refuse_over_limit(index, call_id, name, max, &self.sink);
        self.maybe_finish(myself);
    }
}
