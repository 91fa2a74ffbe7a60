//! How many runtime worker threads a program that starts commands needs.
//!
//! [`super::Launch::spawn`] suspends its calling thread until the child has
//! executed the program (`clone` with `CLONE_VFORK`, as `posix_spawn`
//! does), and that thread must be one that lives as long as the command
//! (`PR_SET_PDEATHSIG` is tied to it): a runtime worker, never a
//! `spawn_blocking` thread. On an idle machine the suspension is ~0.1 ms.
//! On a busy one it includes the time the new child waits for a CPU and the
//! time the parent waits to run again: 13–27 ms on average per start with
//! 4 busy processes beside other work on 2 cores (docs/benchmarks.md §11).
//! With one worker per core, every worker sat in `clone` at once and
//! nothing else of Baton ran: 64 starts took ~32 of those waits in a row.
//! More workers let the waits overlap. An idle worker only sleeps, so the
//! floor costs nothing measurable on cheap calls (§11).

/// Workers that may wait in `clone` at the same time, at least. Measured
/// beside a 2× CPU hog on 2 cores (docs/benchmarks.md §11): 8 workers gave
/// a 98 ms turn gap on 64 × `true` and 16 gave 116 ms, and on 10,000 no-op
/// calls 8 cost about what 2 did while 16 cost more.
const FLOOR: usize = 8;

/// Worker threads for the runtime of a program that starts commands: one
/// per core, and never fewer than [`FLOOR`].
pub fn runtime_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.max(FLOOR)
}
