//! Which deferred tools the model has loaded (SPEC §10).
//!
//! The set lives in the session, so a tool found in one message stays loaded
//! for the next. Names are kept in discovery order: formats that add loaded
//! tools to the request's tool list append them in that order, so the list
//! only ever grows at its end and the model API's prompt cache stays valid.

use std::collections::HashSet;

use parking_lot::Mutex;

#[derive(Debug, Default)]
struct Inner {
    order: Vec<String>,
    set: HashSet<String>,
    /// Bumped by every reset, so a [`Mark`] taken before it is recognised.
    epoch: u64,
}

/// Names of deferred tools whose definitions the model has been given.
#[derive(Debug, Default)]
pub struct DiscoveredTools {
    inner: Mutex<Inner>,
}

/// A point in the discovery history (see [`DiscoveredTools::since`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    epoch: u64,
    len: usize,
}

impl DiscoveredTools {
    /// Records `name`; true if it was not known before.
    pub fn insert(&self, name: impl Into<String>) -> bool {
        let name = name.into();
        let mut inner = self.inner.lock();
        if inner.set.contains(&name) {
            return false;
        }
        inner.set.insert(name.clone());
        inner.order.push(name);
        true
    }

    /// Whether the model loaded the tool `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.inner.lock().set.contains(name)
    }

    /// Every discovered name, in discovery order.
    pub fn names(&self) -> Vec<String> {
        self.inner.lock().order.clone()
    }

    /// Forgets every discovery, e.g. after the host compacted its history
    /// and the model no longer sees the definitions it had loaded.
    pub fn reset(&self) {
        let mut inner = self.inner.lock();
        inner.order.clear();
        inner.set.clear();
        inner.epoch += 1;
    }

    /// The current point in the history.
    pub fn mark(&self) -> Mark {
        let inner = self.inner.lock();
        Mark {
            epoch: inner.epoch,
            len: inner.order.len(),
        }
    }

    /// Names discovered after `mark` (all of them if a reset came between).
    pub fn since(&self, mark: Mark) -> Vec<String> {
        let inner = self.inner.lock();
        if inner.epoch != mark.epoch {
            return inner.order.clone();
        }
        inner.order.get(mark.len..).unwrap_or_default().to_vec()
    }
}
