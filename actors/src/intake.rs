//! The record of every call a host handed to a batch, and the queue that
//! carries them to the coordinator.
//!
//! The host's `add` and the coordinator are separated by a mailbox. If the
//! coordinator failed, calls it had not read yet would vanish with it, and
//! the host would never get their results. So `add` notes the call's id
//! here, under a lock it shares with the coordinator's last-resort cleanup:
//! either the call is noted before the cleanup closes the intake (and the
//! cleanup answers it), or `add` sees the intake closed and tells the host.
//! No call falls between the two.
//!
//! The calls themselves wait here too, not in the mailbox. A message per
//! call cost a boxed message, a channel send and a turn of ractor's
//! receive loop, for every call of a 1,000-call message (about a fifth of
//! the engine's time per no-op call, docs/benchmarks.md §1c). Now only the
//! call that finds the queue empty sends a message ([`CoordMsg::Calls`]),
//! and the coordinator takes every call queued by then in one go. The
//! queue is FIFO and the message is cast after the call was queued, so any
//! message the host casts after `add` (the end, a deadline, a cancel) is
//! read after the call was taken.
//!
//! [`CoordMsg::Calls`]: crate::coordinator::CoordMsg::Calls

use std::sync::Arc;

use baton_engine::ToolUse;
use parking_lot::Mutex;

#[derive(Debug, Default)]
struct Book {
    ids: Vec<Arc<str>>,
    /// Calls added but not yet taken by the coordinator, in order.
    waiting: Vec<(ToolUse, Arc<str>)>,
    closed: bool,
}

#[derive(Debug, Default)]
pub struct Intake {
    book: Mutex<Book>,
}

impl Intake {
    pub fn new() -> Arc<Self> {
        Arc::new(Intake::default())
    }

    /// Notes `call` (by `id`) and queues it for the coordinator. `wake`
    /// runs, under the same lock, when the queue was empty: no message that
    /// will take this call is on its way yet. `None` when the intake is
    /// closed (the call was not queued).
    pub fn admit<R>(
        &self,
        call: ToolUse,
        id: Arc<str>,
        wake: impl FnOnce() -> R,
    ) -> Option<Option<R>> {
        let mut book = self.book.lock();
        if book.closed {
            return None;
        }
        book.ids.push(id.clone());
        let first = book.waiting.is_empty();
        book.waiting.push((call, id));
        Some(first.then(wake))
    }

    /// Every call queued so far, in order; the queue is left empty, so the
    /// next `admit` wakes the coordinator again.
    pub fn take(&self) -> Vec<(ToolUse, Arc<str>)> {
        std::mem::take(&mut self.book.lock().waiting)
    }

    /// Closes the intake and returns every id ever admitted, in order.
    pub fn close(&self) -> Vec<Arc<str>> {
        let mut book = self.book.lock();
        book.closed = true;
        book.waiting.clear();
        book.ids.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> (ToolUse, Arc<str>) {
        (
            ToolUse::new(id, "Noop", serde_json::json!({})),
            Arc::from(id),
        )
    }

    #[test]
    fn nothing_is_admitted_after_close() {
        let intake = Intake::new();
        let (c, id) = call("a");
        assert_eq!(intake.admit(c, id, || "woken"), Some(Some("woken")));
        let ids = intake.close();
        assert_eq!(ids.len(), 1);
        let (c, id) = call("b");
        assert_eq!(intake.admit(c, id, || ()), None);
        assert!(intake.take().is_empty());
    }

    #[test]
    fn only_the_call_that_finds_the_queue_empty_wakes() {
        let intake = Intake::new();
        let woken: Vec<bool> = ["a", "b", "c"]
            .into_iter()
            .map(|i| {
                let (c, id) = call(i);
                intake.admit(c, id, || ()).is_some_and(|w| w.is_some())
            })
            .collect();
        assert_eq!(woken, [true, false, false]);
        let taken: Vec<String> = intake.take().into_iter().map(|(c, _)| c.id).collect();
        assert_eq!(taken, ["a", "b", "c"]);
        // Taken: the next call needs a message of its own.
        let (c, id) = call("d");
        assert_eq!(intake.admit(c, id, || ()), Some(Some(())));
    }
}
