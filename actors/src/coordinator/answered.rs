//! Calls the host answered itself, settled as they arrive.
//!
//! A host that keeps its own record of calls (`baton serve --journal`: a
//! call id it has seen before, perhaps in an earlier life of the process)
//! knows the result of some calls without running them. Such a call still
//! belongs to its message: its result must leave in its place among the
//! results of the calls that do run, and the message's answer must hold it.
//! So, like a call past the call limit (`over_limit`), it takes a slot and
//! is settled at once with the result the host gave, which then waits in
//! the ordering stage for its turn. It takes no part in scheduling,
//! permission, hooks or sibling cancellation, and it changes no context: it
//! did not run here.

use std::sync::Arc;

use baton_engine::CallResult;
use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::BatchState;

impl BatchState {
    /// Settles the call `call_id` at once with `result`.
    pub(crate) fn add_answered(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        mut result: Box<CallResult>,
        call_id: Arc<str>,
    ) {
        // What the result would do to the batch belongs to a run.
        result.modifier = None;
        result.batch_record = None;
        // A later call under the same id is refused, as for any call.
        self.ids.insert(call_id.clone());
        let name = Arc::from(result.tool_name.as_str());
        let index = self.settled_slot(&call_id, name, &result.outcome);
        self.ordering.complete(index, result, &self.sink);
        self.maybe_finish(myself);
    }
}

#[cfg(test)]
#[path = "answered_tests.rs"]
mod tests;
