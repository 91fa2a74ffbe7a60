//! Which queued call may start now (SPEC §5), as plain logic.
//!
//! A safe call counts against the pool of its kind of work (see
//! [`crate::limits`]) and waits for a free slot there and for no unsafe call
//! to be running; an unsafe call waits for every earlier call to have
//! started and for nothing to be running, then runs alone, so it is a
//! barrier. Within a pool calls start strictly in the order they were added,
//! so none starves; across pools a waiting call may start before an earlier
//! safe call of the other pool that has no slot yet (both are safe, so their
//! order of start changes nothing but time), never across a barrier. Calls
//! that were settled without running (cancelled while queued) are passed
//! over. Keeping this free of actors lets it be tested exhaustively and
//! cheaply.

use baton_engine::WorkKind;

use crate::limits::Limits;

/// Scheduling view of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queued {
    /// Waiting to start; `safe` and `kind` as decided at add time.
    Waiting { safe: bool, kind: WorkKind },
    /// Already started or already settled; never to be started again.
    Gone,
}

/// Pools a batch can have: one per kind of work.
const POOLS: usize = 2;

#[derive(Debug)]
pub(crate) struct Scheduler {
    limits: Limits,
    /// Per pool: the first call not yet started or passed over by it. Each
    /// only moves forward, so scheduling a batch costs O(calls) in all.
    next: [usize; POOLS],
    running_safe: [usize; POOLS],
    running_unsafe: bool,
}

impl Scheduler {
    pub(crate) fn new(limits: Limits) -> Self {
        Scheduler {
            limits,
            next: [0; POOLS],
            running_safe: [0; POOLS],
            running_unsafe: false,
        }
    }

    /// The next call to start, if any may start now; it is counted as
    /// running. Call repeatedly until `None`.
    pub(crate) fn next_start(&mut self, calls: impl Fn(usize) -> Option<Queued>) -> Option<usize> {
        if self.running_unsafe {
            return None;
        }
        for pool in 0..POOLS {
            if let Some(index) = self.next_safe(pool, &calls) {
                return Some(index);
            }
        }
        // No safe call may start. An unsafe call may, once every pool's
        // cursor waits at it (every earlier call started or settled) and
        // nothing runs.
        let at = self.next[0];
        if self.next.iter().any(|&n| n != at) || self.running() > 0 {
            return None;
        }
        match calls(at)? {
            Queued::Waiting { safe: false, .. } => {
                self.running_unsafe = true;
                self.next = [at + 1; POOLS];
                Some(at)
            }
            _ => None,
        }
    }

    /// Moves `pool`'s cursor over calls it has no part in and starts the
    /// call it stops at if that call is safe, of this pool, and has a slot.
    fn next_safe(
        &mut self,
        pool: usize,
        calls: &impl Fn(usize) -> Option<Queued>,
    ) -> Option<usize> {
        loop {
            let at = self.next[pool];
            match calls(at)? {
                Queued::Gone => self.next[pool] += 1,
                // A barrier: no pool passes it before it has run.
                Queued::Waiting { safe: false, .. } => return None,
                Queued::Waiting { safe: true, kind } => {
                    let (its_pool, cap) = self.limits.pool(kind);
                    if its_pool != pool {
                        self.next[pool] += 1;
                        continue;
                    }
                    if self.running_safe[pool] >= cap {
                        return None;
                    }
                    self.running_safe[pool] += 1;
                    self.next[pool] += 1;
                    return Some(at);
                }
            }
        }
    }

    /// A call started by [`Self::next_start`] finished.
    pub(crate) fn finished(&mut self, safe: bool, kind: WorkKind) {
        if safe {
            let (pool, _) = self.limits.pool(kind);
            self.running_safe[pool] = self.running_safe[pool].saturating_sub(1);
        } else {
            self.running_unsafe = false;
        }
    }

    pub(crate) fn running(&self) -> usize {
        self.running_safe.iter().sum::<usize>() + usize::from(self.running_unsafe)
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
