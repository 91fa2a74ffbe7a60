//! The one metric this crate keeps: how many process trees are running.
//! It is written here, where trees start and end, and described with the
//! rest of Baton's metrics by the engine.

/// Gauge name: process trees of running commands.
pub const PROCESS_TREES: &str = "baton_process_trees";

/// A tree started (`true`) or ended (`false`).
pub(crate) fn tree(started: bool) {
    let gauge = metrics::gauge!(PROCESS_TREES);
    if started {
        gauge.increment(1.0);
    } else {
        gauge.decrement(1.0);
    }
}
