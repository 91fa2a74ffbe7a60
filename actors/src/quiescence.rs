//! The "everything is over" signal of a batch (SPEC §7).
//!
//! A batch is quiescent when every call has its result and every invocation
//! has reported its end. The coordinator's state owns a [`QuiescenceGuard`];
//! dropping it (the coordinator stopped, normally or not) raises the signal,
//! so a waiting host is released even if the coordinator itself failed.
//! Both async and blocking hosts can wait on it.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub(crate) struct Quiescence {
    done: Mutex<bool>,
    cond: Condvar,
    notify: Notify,
}

impl Quiescence {
    pub(crate) fn new() -> (Arc<Self>, QuiescenceGuard) {
        let q = Arc::new(Quiescence::default());
        (q.clone(), QuiescenceGuard(q))
    }

    pub(crate) fn is_reached(&self) -> bool {
        *self.done.lock()
    }

    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_reached() {
                return;
            }
            notified.await;
        }
    }

    /// Blocks the thread; for hosts without an async runtime (never call it
    /// from inside one).
    pub(crate) fn wait_blocking(&self) {
        let mut done = self.done.lock();
        while !*done {
            self.cond.wait(&mut done);
        }
    }

    /// Waits at most `timeout`; returns whether quiescence was reached.
    pub(crate) fn wait_blocking_timeout(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut done = self.done.lock();
        while !*done {
            if self.cond.wait_until(&mut done, deadline).timed_out() {
                return *done;
            }
        }
        true
    }

    fn raise(&self) {
        *self.done.lock() = true;
        self.cond.notify_all();
        self.notify.notify_waiters();
    }
}

/// Raises the signal when dropped.
#[derive(Debug)]
pub(crate) struct QuiescenceGuard(Arc<Quiescence>);

impl Drop for QuiescenceGuard {
    fn drop(&mut self) {
        self.0.raise();
    }
}
