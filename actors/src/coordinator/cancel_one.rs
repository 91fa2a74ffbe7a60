//! Stopping one call of a batch at the host's request, by its id: by hand
//! (`BatchHandle::cancel_call`) or when the host's own deadline for the call
//! passes (`BatchHandle::add_with_deadline`).
//!
//! Only that call stops. A cancelled call did not fail (its outcome is
//! `cancelled`), so the sibling policy never fires on it and its siblings
//! run on untouched.

use std::time::Duration;

use baton_engine::CancelReason;
use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::{BatchState, Phase};

/// Why the host stopped a call, as the model reads it.
pub(crate) fn host_cancelled() -> CancelReason {
    CancelReason::Other(
        "the host cancelled this one call; the other calls of the message were not affected".into(),
    )
}

/// Why a call stopped at the host's deadline.
pub(super) fn deadline_passed(after: Duration) -> CancelReason {
    CancelReason::Other(format!(
        "the host's deadline of {} ms for this call passed; the other calls of the message \
         were not affected",
        after.as_millis()
    ))
}

impl BatchState {
    /// Stops call `id`: a running one through its own scope, a queued one
    /// settled at once. A finished or unknown id does nothing.
    pub(crate) fn cancel_call(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        id: &str,
        reason: CancelReason,
    ) {
        let Some(index) = self.slots.iter().position(|s| &*s.call_id == id) else {
            return;
        };
        match &self.slots[index].phase {
            Phase::Running(scope) => scope.cancel(reason),
            Phase::Queued(_) => self.settle_unstarted(index, &reason),
            Phase::Settled => {}
        }
        self.pump(myself);
    }

    /// Arms the host's deadline for call `id`: a timer in the coordinator's
    /// runtime, so that blocking hosts (no runtime of their own) get it too.
    pub(crate) fn arm_deadline(myself: &ActorRef<CoordMsg>, id: String, after: Duration) {
        let target = myself.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            // The batch may be over: then nobody listens, which is fine.
            let _ = target.cast(CoordMsg::CancelCall(id, deadline_passed(after)));
        });
    }
}
