//! The record of every call a host handed to a batch.
//!
//! The host's `add` and the coordinator are separated by a mailbox. If the
//! coordinator failed, calls still waiting in its mailbox would vanish with
//! it, and the host would never get their results. So `add` also notes the
//! call's id here, under a lock it shares with the coordinator's last-resort
//! cleanup: either the call is noted before the cleanup closes the intake
//! (and the cleanup answers it), or `add` sees the intake closed and tells
//! the host. No call falls between the two.

use std::sync::Arc;

use parking_lot::Mutex;

#[derive(Debug, Default)]
struct Book {
    ids: Vec<Arc<str>>,
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

    /// Notes `id` and runs `send` under the same lock (so mailbox order and
    /// record order agree); `None` when the intake is closed.
    pub fn admit<R>(&self, id: Arc<str>, send: impl FnOnce(Arc<str>) -> R) -> Option<R> {
        let mut book = self.book.lock();
        if book.closed {
            return None;
        }
        book.ids.push(id.clone());
        Some(send(id))
    }

    /// Closes the intake and returns every id ever admitted, in order.
    pub fn close(&self) -> Vec<Arc<str>> {
        let mut book = self.book.lock();
        book.closed = true;
        book.ids.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_admitted_after_close() {
        let intake = Intake::new();
        assert_eq!(
            intake.admit("a".into(), |id| id.to_string()),
            Some("a".to_string())
        );
        let ids = intake.close();
        assert_eq!(ids.len(), 1);
        assert_eq!(intake.admit("b".into(), |_| ()), None);
    }
}
