//! Checks and starts kept apart.
//!
//! A command's mounts name the entries its walk found, by identity; the
//! child fails to start (rather than protect something else) when one of
//! them is gone. A check moving entries aside between another command's
//! walk and its mounts would make that start fail for nothing. So a start
//! holds a [`Starting`] from before its walk until its child has entered
//! the sandbox, and a check moves entries only when no start is in that
//! window (waiting for one at most [`WAIT`]), while new walks wait for it.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a check waits for starts in progress before moving entries
/// anyway (a start it then overtakes fails closed).
const WAIT: Duration = Duration::from_secs(2);

/// Starts in their window, and the signal that one ended.
static GATE: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

fn lock() -> MutexGuard<'static, usize> {
    GATE.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// One start between its walk and its child's mounts; drop it once the
/// child runs (or failed to).
#[derive(Debug)]
pub struct Starting(());

impl Starting {
    /// Waits while a check is moving entries, then counts this start in.
    pub(crate) fn begin() -> Starting {
        *lock() += 1;
        Starting(())
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        let mut starting = lock();
        *starting = starting.saturating_sub(1);
        GATE.1.notify_all();
    }
}

/// Runs `moves` once no start is in its window (or [`WAIT`] passed),
/// keeping new starts from walking meanwhile.
pub(crate) fn exclusive<T>(moves: impl FnOnce() -> T) -> T {
    let deadline = Instant::now() + WAIT;
    let mut starting = lock();
    while *starting > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        starting = GATE
            .1
            .wait_timeout(starting, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    let out = moves();
    drop(starting);
    out
}
