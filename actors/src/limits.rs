//! How many safe calls of a batch may run at once, by kind of work (SPEC §5).
//!
//! One cap for everything is wrong both ways: ten `sleep` processes are
//! nothing to a machine, and a hundred compilers are too much, while a
//! hundred MCP requests cost a socket each. So a batch has two pools. Calls
//! that start processes or work the CPU ([`WorkKind::Process`]) share a
//! pool sized to the machine; calls that only wait ([`WorkKind::Wait`]) share
//! a much larger one. A cap the user sets (`--max-concurrency`,
//! `BATON_MAX_TOOL_CONCURRENCY`, `with_max_concurrency`) keeps its old
//! meaning: one pool of that size for every call.

use baton_engine::WorkKind;

/// Process slots are never fewer than this. Sixteen short processes (a
/// model's typical widest fan-out: `sleep`, `grep`, `git log`, `ls`) cost a
/// two-core machine a few milliseconds of CPU each; running them in one wave
/// is what codex and Claude Code's streaming executor do (they have no cap).
pub(crate) const MIN_PROCESS_SLOTS: usize = 16;
/// Process slots per available core. CPU-bound processes beyond a few per
/// core only time-share, so more would add memory and scheduler load, not
/// throughput.
pub(crate) const PROCESS_SLOTS_PER_CORE: usize = 4;
/// Process slots are never more than this, whatever the core count: each
/// process holds memory, file descriptors and a PID.
pub(crate) const MAX_PROCESS_SLOTS: usize = 64;
/// Slots for calls that only wait. Such a call costs a parked task and, for
/// network calls, one connection; 128 stays far under the default limit of
/// 1,024 open files while letting a model's widest fan-out run in one wave.
pub(crate) const DEFAULT_WAIT_SLOTS: usize = 128;

/// The limits one batch schedules under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limits {
    /// The user set a cap: at most this many safe calls of any kind.
    Uniform(usize),
    /// The defaults: a pool per kind of work.
    ByKind {
        /// Safe calls that start processes or work the CPU.
        process: usize,
        /// Safe calls that only wait (on the network, a timer, a person).
        wait: usize,
    },
}

impl Limits {
    /// The defaults for this machine.
    pub fn by_kind_for_machine() -> Limits {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Limits::ByKind {
            process: process_slots_for(cores),
            wait: DEFAULT_WAIT_SLOTS,
        }
    }

    /// Which pool a call of this kind counts against, and that pool's size.
    /// With a uniform cap every kind shares pool 0.
    pub fn pool(&self, kind: WorkKind) -> (usize, usize) {
        match (*self, kind) {
            (Limits::Uniform(n), _) => (0, n.max(1)),
            (Limits::ByKind { process, .. }, WorkKind::Process) => (0, process.max(1)),
            (Limits::ByKind { wait, .. }, WorkKind::Wait) => (1, wait.max(1)),
        }
    }
}

/// Process slots for a machine with `cores` cores.
pub(crate) fn process_slots_for(cores: usize) -> usize {
    cores
        .saturating_mul(PROCESS_SLOTS_PER_CORE)
        .clamp(MIN_PROCESS_SLOTS, MAX_PROCESS_SLOTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_slots_follow_the_core_count_within_bounds() {
        assert_eq!(process_slots_for(1), 16);
        assert_eq!(process_slots_for(2), 16);
        assert_eq!(process_slots_for(8), 32);
        assert_eq!(process_slots_for(16), 64);
        assert_eq!(process_slots_for(256), 64);
    }

    #[test]
    fn a_uniform_cap_puts_every_kind_in_one_pool() {
        let l = Limits::Uniform(3);
        assert_eq!(l.pool(WorkKind::Process), (0, 3));
        assert_eq!(l.pool(WorkKind::Wait), (0, 3));
        let l = Limits::ByKind {
            process: 4,
            wait: 128,
        };
        assert_eq!(l.pool(WorkKind::Process), (0, 4));
        assert_eq!(l.pool(WorkKind::Wait), (1, 128));
    }
}
