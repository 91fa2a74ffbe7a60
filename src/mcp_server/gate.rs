//! SPEC §5 across independent requests: safe calls share, others run alone.
//!
//! Inside one assistant message the coordinator orders calls; MCP requests
//! have no message around them, so the server keeps the same rule with a
//! read/write lock. tokio's `RwLock` is fair (first come, first served), which
//! is exactly the rule wanted: a writer that arrives waits for the readers
//! already running, and readers that arrive after it wait until it is done.

use std::sync::Arc;

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// The gate every call passes before it starts.
#[derive(Debug, Default, Clone)]
pub(super) struct Gate {
    lock: Arc<RwLock<()>>,
}

/// Held for as long as the call runs.
#[derive(Debug)]
pub(super) enum Pass {
    // The guards are held, not read: dropping them opens the gate.
    Shared(#[allow(dead_code)] OwnedRwLockReadGuard<()>),
    Exclusive(#[allow(dead_code)] OwnedRwLockWriteGuard<()>),
}

impl Gate {
    /// Waits for a shared pass (a concurrency-safe call) or an exclusive one.
    pub(super) async fn enter(&self, concurrency_safe: bool) -> Pass {
        if concurrency_safe {
            Pass::Shared(self.lock.clone().read_owned().await)
        } else {
            Pass::Exclusive(self.lock.clone().write_owned().await)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Readers overlap, a writer never overlaps anything, and a writer that
    /// queued before later readers runs before them.
    #[tokio::test]
    async fn writers_run_alone_and_in_arrival_order() {
        let gate = Gate::default();
        let running = Arc::new(AtomicUsize::new(0));
        let max_readers = Arc::new(AtomicUsize::new(0));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (i, safe) in [true, true, false, true, true].into_iter().enumerate() {
            let (gate, running, max_readers, order) = (
                gate.clone(),
                running.clone(),
                max_readers.clone(),
                order.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let _pass = gate.enter(safe).await;
                order.lock().unwrap().push(i);
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                if !safe {
                    assert_eq!(now, 1, "a writer ran beside another call");
                }
                max_readers.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                running.fetch_sub(1, Ordering::SeqCst);
            }));
            // Arrival order is the order of `enter`.
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for t in tasks {
            t.await.unwrap_or_else(|e| panic!("task: {e}"));
        }
        let order = order.lock().unwrap().clone();
        let writer_at = order.iter().position(|&i| i == 2).unwrap_or(usize::MAX);
        assert!(order[..writer_at].iter().all(|&i| i < 2), "{order:?}");
        assert!(order[writer_at + 1..].iter().all(|&i| i > 2), "{order:?}");
        assert!(
            max_readers.load(Ordering::SeqCst) >= 2,
            "readers overlapped"
        );
    }
}
