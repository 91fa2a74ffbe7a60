//! What must stop when a session ends: the session's cleanup registry.
//!
//! Tools start things that outlive the call that started them (background
//! shells, interactive sessions, background agents, monitors). None of them
//! may outlive the session. Rather than have the host name every tool that
//! might have left something running, each tool registers a
//! [`SessionCleanup`] in its session the first time it keeps something, and
//! ending the session runs the registry: every entry in registration
//! order, so a tool's own helpers registered after it stop after it.
//!
//! Stopping has two halves. [`SessionCleanup::stop`] asks everything to
//! stop before it returns (it never blocks), so a host that cannot wait
//! (a synchronous shutdown, a runtime going away) still stops it all; the
//! future it may return finishes the job (waits for processes to be gone,
//! escalates a stop that was not heeded). [`Cleanups::stop_all`] waits for
//! those futures one after another, up to one deadline for all of them: a
//! tool whose processes hang costs the wait, never the other tools' stop.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

/// The rest of a stop, after it was asked for: waiting for the ends,
/// escalating. May be dropped unpolled (see [`SessionCleanup::stop`]).
pub type Stopping = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Something a session's tools keep that must end with the session.
///
/// An entry must not hold the [`crate::session::Session`] itself (that
/// cycle would keep the session alive): hold the slot or state it stops.
pub trait SessionCleanup: Send + Sync + 'static {
    /// Asks everything this entry keeps to stop, before returning, and
    /// gives back what is left to wait for, if anything. Dropping that
    /// future unpolled must leave nothing running that this call did not
    /// already ask to stop (let its `Drop` kill what is left). Called
    /// again, it stops what was started since.
    fn stop(&self) -> Option<Stopping>;
}

/// A closure is an entry: `|| { ask_to_stop(); None }`.
impl<F> SessionCleanup for F
where
    F: Fn() -> Option<Stopping> + Send + Sync + 'static,
{
    fn stop(&self) -> Option<Stopping> {
        self()
    }
}

/// A session's cleanup registry (see the module docs). Reached through
/// [`crate::session::Session::cleanups`].
#[derive(Default)]
pub struct Cleanups {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: Vec<(String, Arc<dyn SessionCleanup>)>,
    /// The registry ran: what registers now is stopped at once.
    ended: bool,
}

crate::debug_fields! { Cleanups as this { names: this.names() } }

impl Cleanups {
    /// The registry, even after a panic elsewhere while it was held: each
    /// change is one push or one flag, so a poisoned registry is whole.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers `cleanup` under `name`, once: a name already registered
    /// keeps its first entry and its place, and `false` comes back, so a
    /// tool may register on every use. Registered after the session ended,
    /// the entry is stopped at once (not waited for).
    pub fn register(&self, name: &str, cleanup: Arc<dyn SessionCleanup>) -> bool {
        let mut inner = self.lock();
        if inner.entries.iter().any(|(n, _)| n == name) {
            return false;
        }
        inner.entries.push((name.to_string(), cleanup.clone()));
        let ended = inner.ended;
        drop(inner);
        if ended {
            drop(cleanup.stop());
        }
        true
    }

    /// The names registered, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.lock().entries.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Ends the session's things: asks every entry to stop, in
    /// registration order, before returning, and gives back the waiting
    /// for them, in the same order, which ends at the latest when
    /// `deadline` does (for instance `tokio::time::sleep(bound)`). The
    /// waiting yields the names of the entries it stopped waiting for.
    /// Dropping it unpolled waits for nothing (a synchronous shutdown).
    pub fn stop_all<D>(&self, deadline: D) -> impl Future<Output = Vec<String>> + Send + 'static
    where
        D: Future<Output = ()> + Send + 'static,
    {
        let entries = {
            let mut inner = self.lock();
            inner.ended = true;
            inner.entries.clone()
        };
        // Not under the lock: an entry may register another.
        let waits: Vec<(String, Stopping)> = entries
            .into_iter()
            .filter_map(|(name, entry)| entry.stop().map(|s| (name, s)))
            .collect();
        wait_in_order(waits, deadline)
    }
}

/// Awaits `waits` one after another until `deadline`; the names of those
/// not finished by then. The deadline is never polled after it fired.
async fn wait_in_order<D>(waits: Vec<(String, Stopping)>, deadline: D) -> Vec<String>
where
    D: Future<Output = ()> + Send + 'static,
{
    let mut deadline = Box::pin(deadline);
    let mut late = Vec::new();
    let mut expired = false;
    for (name, mut stopping) in waits {
        if !expired {
            let finished = std::future::poll_fn(|cx| {
                if stopping.as_mut().poll(cx).is_ready() {
                    Poll::Ready(true)
                } else if deadline.as_mut().poll(cx).is_ready() {
                    Poll::Ready(false)
                } else {
                    Poll::Pending
                }
            })
            .await;
            expired = !finished;
        }
        if expired {
            late.push(name);
        }
    }
    late
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// An entry recording when it was asked to stop, in `log`.
    fn entry(
        log: &Arc<Mutex<Vec<String>>>,
        name: &str,
        wait: Option<Duration>,
    ) -> Arc<dyn SessionCleanup> {
        let log = log.clone();
        let name = name.to_string();
        Arc::new(move || {
            log.lock().unwrap().push(name.clone());
            wait.map(|d| Box::pin(tokio::time::sleep(d)) as Stopping)
        })
    }

    #[tokio::test]
    async fn entries_stop_in_registration_order_once_per_name() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let cleanups = Cleanups::default();
        assert!(cleanups.register("b", entry(&log, "b", None)));
        assert!(cleanups.register("a", entry(&log, "a", Some(Duration::ZERO))));
        assert!(!cleanups.register("b", entry(&log, "b again", None)));
        assert_eq!(cleanups.names(), ["b", "a"]);
        let waiting = cleanups.stop_all(std::future::pending());
        // Asked before any waiting.
        assert_eq!(*log.lock().unwrap(), ["b", "a"]);
        assert!(waiting.await.is_empty());
    }

    #[tokio::test]
    async fn the_deadline_bounds_the_wait_for_all_entries() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let cleanups = Cleanups::default();
        cleanups.register(
            "hangs",
            entry(&log, "hangs", Some(Duration::from_secs(3600))),
        );
        cleanups.register(
            "after",
            entry(&log, "after", Some(Duration::from_secs(3600))),
        );
        let late = tokio::time::timeout(
            Duration::from_secs(60),
            cleanups.stop_all(tokio::time::sleep(Duration::from_millis(50))),
        )
        .await
        .expect("the deadline ends the wait");
        assert_eq!(late, ["hangs", "after"]);
        // The second was asked to stop although the first hung.
        assert_eq!(*log.lock().unwrap(), ["hangs", "after"]);
    }

    #[tokio::test]
    async fn an_entry_registered_after_the_end_is_stopped_at_once() {
        let stops = Arc::new(AtomicUsize::new(0));
        let cleanups = Cleanups::default();
        cleanups.stop_all(std::future::ready(())).await;
        let counted = stops.clone();
        cleanups.register(
            "late",
            Arc::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                None
            }),
        );
        assert_eq!(stops.load(Ordering::SeqCst), 1);
    }
}
