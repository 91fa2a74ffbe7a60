//! Questions sent to the host that wait for its answer line, by request
//! id: MCP elicitations, `AskUserQuestion` and model hooks each go out as a
//! line with a fresh `request_id` and come back as a line naming it. Once
//! the host can no longer answer (end of input, shutdown), what waits and
//! what comes get the closing answer at once, so nothing waits forever.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::oneshot;

/// The requests of one kind waiting for the host.
pub(super) struct Pending<T> {
    waiting: Mutex<HashMap<u64, oneshot::Sender<T>>>,
    next: AtomicU64,
    closed: AtomicBool,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending {
            waiting: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }
}

impl<T> Pending<T> {
    fn waiting(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<T>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh request id (from 1) and the receiver of its answer; `None`
    /// once closed.
    pub(super) fn open(&self) -> Option<(u64, oneshot::Receiver<T>)> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        // Checked under the lock `close` drains, so no request slips in
        // after it and waits forever.
        let mut waiting = self.waiting();
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        waiting.insert(id, tx);
        Some((id, rx))
    }

    /// Hands `answer` to request `id`; false when no such request waits.
    /// The asker may have given up meanwhile; that is no error.
    pub(super) fn settle(&self, id: u64, answer: T) -> bool {
        match self.waiting().remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(answer);
                true
            }
            None => false,
        }
    }

    /// Forgets request `id` (its line could not be written, its asker gave
    /// up, or it was withdrawn); its receiver sees the channel closed.
    /// Whether it was still waiting.
    pub(super) fn forget(&self, id: u64) -> bool {
        self.waiting().remove(&id).is_some()
    }

    /// Nobody will answer from now on: what waits gets `closing()`, and
    /// [`open`](Self::open) refuses from now on.
    pub(super) fn close(&self, closing: impl Fn() -> T) {
        self.closed.store(true, Ordering::Release);
        for (_, waiting) in self.waiting().drain() {
            let _ = waiting.send(closing());
        }
    }
}

/// The numeric `request_id` of an answer line called `line`.
pub(super) fn request_id(msg: &Value, line: &str) -> Result<u64, String> {
    msg.get("request_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{line} needs a numeric `request_id`"))
}
