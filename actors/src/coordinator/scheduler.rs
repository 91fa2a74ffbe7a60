//! Which queued call may start now (SPEC §5), as plain logic.
//!
//! Calls start strictly in the order they were added: a safe call waits for a
//! free slot under the cap and for no unsafe call to be running; an unsafe
//! call waits for nothing to be running, then runs alone, so it is a barrier.
//! Nothing is ever hoisted above an earlier call. Calls that were settled
//! without running (cancelled while queued) are passed over. Keeping this
//! free of actors lets it be tested exhaustively and cheaply.

/// Scheduling view of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Waiting to start; `safe` as decided at add time.
    Waiting { safe: bool },
    /// Already started or already settled; never to be started again.
    Gone,
}

#[derive(Debug)]
pub struct Scheduler {
    cap: usize,
    /// First call not yet started or passed over.
    next: usize,
    running_safe: usize,
    running_unsafe: bool,
}

impl Scheduler {
    pub fn new(cap: usize) -> Self {
        Scheduler {
            cap: cap.max(1),
            next: 0,
            running_safe: 0,
            running_unsafe: false,
        }
    }

    /// Whether a call of this safety could start given what runs now.
    pub fn admits(&self, safe: bool) -> bool {
        if safe {
            !self.running_unsafe && self.running_safe < self.cap
        } else {
            !self.running_unsafe && self.running_safe == 0
        }
    }

    /// The next call to start, if any may start now; it is counted as
    /// running. Call repeatedly until `None`.
    pub fn next_start(&mut self, calls: impl Fn(usize) -> Option<Queued>) -> Option<usize> {
        loop {
            match calls(self.next)? {
                Queued::Gone => self.next += 1,
                Queued::Waiting { safe } => {
                    if !self.admits(safe) {
                        return None;
                    }
                    if safe {
                        self.running_safe += 1;
                    } else {
                        self.running_unsafe = true;
                    }
                    self.next += 1;
                    return Some(self.next - 1);
                }
            }
        }
    }

    /// A call started by [`Self::next_start`] finished.
    pub fn finished(&mut self, safe: bool) {
        if safe {
            self.running_safe = self.running_safe.saturating_sub(1);
        } else {
            self.running_unsafe = false;
        }
    }

    pub fn running(&self) -> usize {
        self.running_safe + usize::from(self.running_unsafe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `safety` to completion, finishing every running call at once
    /// each round; returns the groups that ran together.
    fn waves(safety: &[bool], cap: usize) -> Vec<Vec<usize>> {
        let mut sched = Scheduler::new(cap);
        let mut state: Vec<Queued> = safety
            .iter()
            .map(|&safe| Queued::Waiting { safe })
            .collect();
        let mut out = Vec::new();
        loop {
            let mut wave = Vec::new();
            while let Some(i) = sched.next_start(|i| state.get(i).copied()) {
                state[i] = Queued::Gone;
                wave.push(i);
            }
            if wave.is_empty() {
                break;
            }
            for &i in &wave {
                sched.finished(safety[i]);
            }
            out.push(wave);
        }
        out
    }

    #[test]
    fn unsafe_call_is_a_barrier() {
        let s = [true, true, false, true, true];
        assert_eq!(waves(&s, 10), vec![vec![0, 1], vec![2], vec![3, 4]]);
    }

    #[test]
    fn cap_limits_safe_calls() {
        let s = [true; 25];
        let w = waves(&s, 10);
        assert_eq!(w.iter().map(Vec::len).collect::<Vec<_>>(), vec![10, 10, 5]);
    }

    #[test]
    fn unsafe_calls_run_alone_in_order() {
        let s = [false, false, true, false];
        assert_eq!(waves(&s, 10), vec![vec![0], vec![1], vec![2], vec![3]]);
    }

    #[test]
    fn settled_calls_are_passed_over() {
        let mut sched = Scheduler::new(1);
        let state = [
            Queued::Gone,
            Queued::Waiting { safe: true },
            Queued::Gone,
            Queued::Waiting { safe: true },
        ];
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
        // Cap reached: the next waiting call stays queued.
        assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
        sched.finished(true);
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(3));
        assert_eq!(sched.running(), 1);
        assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
    }

    #[test]
    fn a_safe_call_waits_behind_a_running_unsafe_one_even_with_room() {
        let mut sched = Scheduler::new(10);
        let state = [
            Queued::Waiting { safe: false },
            Queued::Waiting { safe: true },
        ];
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(0));
        assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
        sched.finished(false);
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
    }

    #[test]
    fn calls_added_later_start_when_allowed() {
        let mut sched = Scheduler::new(10);
        let mut state = vec![Queued::Waiting { safe: true }];
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(0));
        assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
        state.push(Queued::Waiting { safe: true });
        assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
    }
}
