//! The record of every call a host handed to a batch, and the queue that
//! carries what a batch is told to its coordinator.
//!
//! The host's `add` and the coordinator are separated by a queue. If the
//! coordinator failed, calls it had not read yet would vanish with it, and
//! the host would never get their results. So `add` notes the call's id
//! here, under a lock it shares with the coordinator's last-resort cleanup:
//! either the call is noted before the cleanup closes the intake (and the
//! cleanup answers it), or `add` sees the intake closed and tells the host.
//! No call falls between the two.
//!
//! What the host (and the batches above, and the approver) tell a
//! coordinator waits here too, in the order it was posted, not in ractor's
//! mailbox. A mailbox message per call cost a boxed message, a channel
//! send and a turn of ractor's receive loop for every call of a 1,000-call
//! message (about a fifth of the engine's time per no-op call; see
//! docs/benchmarks.md §1c). Now only a post that finds the queue empty
//! casts [`CoordMsg::Wake`], and the coordinator takes everything queued
//! by then in one go. Everything such a party says goes through the same
//! queue, so an interrupt posted after a call is read after it, and a call
//! added after an interrupt is read after the interrupt, as with the
//! mailbox. (Only an invocation's end and a call's own deadline still use
//! the mailbox: they come from the batch's own tasks and timers.)
//!
//! [`CoordMsg::Wake`]: crate::coordinator::CoordMsg::Wake

use std::sync::Arc;

use parking_lot::Mutex;
use ractor::ActorRef;

use crate::coordinator::CoordMsg;

#[derive(Debug, Default)]
struct Book {
    ids: Vec<Arc<str>>,
    /// What was posted and not yet taken by the coordinator, in order.
    waiting: Vec<CoordMsg>,
    closed: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Intake {
    book: Mutex<Book>,
}

impl Intake {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Intake::default())
    }

    /// Queues `msg` (noting the id of a call). `wake` runs, under the same
    /// lock, when the queue was empty: no wake-up that will take this
    /// message is on its way yet. False when the intake is closed (the
    /// message was not queued).
    pub(crate) fn post(&self, msg: CoordMsg, wake: impl FnOnce()) -> bool {
        let mut book = self.book.lock();
        if book.closed {
            return false;
        }
        if let CoordMsg::Add(_, id) | CoordMsg::Answered(_, id) = &msg {
            book.ids.push(id.clone());
        }
        let first = book.waiting.is_empty();
        book.waiting.push(msg);
        if first {
            wake();
        }
        true
    }

    /// Everything queued so far, in order; the queue is left empty, so the
    /// next post wakes the coordinator again.
    pub(crate) fn take(&self) -> Vec<CoordMsg> {
        std::mem::take(&mut self.book.lock().waiting)
    }

    /// Closes the intake and returns every id ever admitted, in order.
    pub(crate) fn close(&self) -> Vec<Arc<str>> {
        let mut book = self.book.lock();
        book.closed = true;
        book.waiting.clear();
        std::mem::take(&mut book.ids)
    }
}

/// Where a batch's coordinator is told things: its intake, and its actor
/// to wake.
#[derive(Clone, Debug)]
pub(crate) struct Mailbox {
    actor: ActorRef<CoordMsg>,
    intake: Arc<Intake>,
}

impl Mailbox {
    pub(crate) fn new(actor: ActorRef<CoordMsg>, intake: Arc<Intake>) -> Self {
        Mailbox { actor, intake }
    }

    /// Posts `msg`; false when the batch is gone.
    pub(crate) fn post(&self, msg: CoordMsg) -> bool {
        self.intake.post(msg, || {
            // A coordinator that is gone closed the intake, or is about to
            // (and then answers every call noted in it).
            let _ = self.actor.cast(CoordMsg::Wake);
        })
    }

    pub(crate) fn actor(&self) -> &ActorRef<CoordMsg> {
        &self.actor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_engine::ToolUse;

    fn add(id: &str) -> CoordMsg {
        CoordMsg::Add(
            ToolUse::new(id, "Noop", serde_json::json!({})),
            Arc::from(id),
        )
    }

    #[test]
    fn nothing_is_admitted_after_close() {
        let intake = Intake::new();
        let mut woken = 0;
        assert!(intake.post(add("a"), || woken += 1));
        assert_eq!(woken, 1);
        let ids = intake.close();
        assert_eq!(ids.len(), 1);
        assert!(!intake.post(add("b"), || woken += 1));
        assert_eq!(woken, 1);
        assert!(intake.take().is_empty());
    }

    #[test]
    fn only_a_post_that_finds_the_queue_empty_wakes_and_order_is_kept() {
        let intake = Intake::new();
        let mut woken = 0;
        assert!(intake.post(add("a"), || woken += 1));
        assert!(intake.post(CoordMsg::End, || woken += 1));
        assert!(intake.post(add("c"), || woken += 1));
        assert_eq!(woken, 1);
        let taken: Vec<String> = intake
            .take()
            .into_iter()
            .map(|m| match m {
                CoordMsg::Add(c, _) => c.id,
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(taken, ["a", "End", "c"]);
        // Taken: the next post needs a wake-up of its own.
        assert!(intake.post(add("d"), || woken += 1));
        assert_eq!(woken, 2);
    }
}
