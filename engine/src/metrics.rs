//! Counters and timings for operators, through the `metrics` facade.
//!
//! The engine only records; it never installs a recorder. Without one
//! (a library host that did not ask for metrics) every call here goes to
//! the facade's no-op recorder, which costs a few atomic loads and a label
//! or two built on the stack. The `baton` binary installs a Prometheus
//! recorder where it serves `/metrics`; a host may install any recorder of
//! the `metrics` ecosystem.
//!
//! Labels are bounded on purpose: the model chooses tool names, so a call
//! of a tool the pool does not have is counted as `unknown`, never under
//! its own name (a model could otherwise grow the recorder without end).

use std::time::Duration;

use crate::call::Outcome;

/// Calls that have their result, by `tool` and `outcome`.
pub const CALLS: &str = "baton_calls_total";
/// Seconds a call spent in each phase, by `phase`: `queue` (added → its
/// pipeline started), `validate`, `hooks` (PreToolUse), `permission`
/// (rules, hooks and the wait for an answer), `exec` (the tool itself).
pub const PHASE_SECONDS: &str = "baton_call_phase_seconds";
/// Calls added and not yet started.
pub const QUEUED: &str = "baton_calls_queued";
/// Calls whose pipeline is running.
pub const RUNNING: &str = "baton_calls_running";
/// Process trees (a shell with everything it started) alive now.
pub const PROCESS_TREES: &str = "baton_process_trees";
/// 1 while an MCP server is connected and ready, else 0; by `server`.
pub const MCP_SERVER_UP: &str = "baton_mcp_server_up";
/// Times an MCP server failed or died, by `server`.
pub const MCP_SERVER_FAILURES: &str = "baton_mcp_server_failures_total";

/// The label of a tool the pool does not have.
pub const UNKNOWN_TOOL: &str = "unknown";

/// Gives each metric its help text (for a recorder installed now).
pub fn describe() {
    metrics::describe_counter!(CALLS, "Calls that have their result, by tool and outcome.");
    metrics::describe_histogram!(
        PHASE_SECONDS,
        metrics::Unit::Seconds,
        "Time a call spent in each phase (queue, validate, hooks, permission, exec)."
    );
    metrics::describe_gauge!(QUEUED, "Calls added and not yet started.");
    metrics::describe_gauge!(RUNNING, "Calls whose pipeline is running.");
    metrics::describe_gauge!(PROCESS_TREES, "Process trees of running commands.");
    metrics::describe_gauge!(MCP_SERVER_UP, "1 while the MCP server is ready, else 0.");
    metrics::describe_counter!(MCP_SERVER_FAILURES, "Times the MCP server failed or died.");
}

/// The outcome's label, as in the serve protocol's `outcome.kind`.
pub fn outcome_label(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::ToolError => "tool_error",
        Outcome::Panicked => "panicked",
        Outcome::UnknownTool => "unknown_tool",
        Outcome::InvalidInput => "invalid_input",
        Outcome::ValidationFailed => "validation_failed",
        Outcome::Denied => "denied",
        Outcome::Cancelled { .. } => "cancelled",
        Outcome::Internal => "internal",
    }
}

/// A call has its result. `tool` is the pool's name for it, or `None`.
pub fn call_finished(tool: Option<&str>, outcome: &Outcome) {
    let tool = tool.unwrap_or(UNKNOWN_TOOL).to_string();
    metrics::counter!(CALLS, "tool" => tool, "outcome" => outcome_label(outcome)).increment(1);
}

/// `phase` (one of the names in [`PHASE_SECONDS`]) took `took`.
pub fn phase(phase: &'static str, took: Duration) {
    metrics::histogram!(PHASE_SECONDS, "phase" => phase).record(took.as_secs_f64());
}

/// Counts one call as queued until it is dropped or [`Queued::start`]ed,
/// so a call cancelled before it starts leaves the gauge right.
#[derive(Debug)]
pub struct Queued(bool);

impl Queued {
    pub fn enter() -> Queued {
        metrics::gauge!(QUEUED).increment(1.0);
        Queued(true)
    }

    /// A placeholder that counts nothing (left behind by `start`).
    pub fn none() -> Queued {
        Queued(false)
    }

    /// The call leaves the queue and runs until the returned guard drops.
    pub fn start(mut self) -> Running {
        self.leave();
        metrics::gauge!(RUNNING).increment(1.0);
        Running(())
    }

    fn leave(&mut self) {
        if std::mem::take(&mut self.0) {
            metrics::gauge!(QUEUED).decrement(1.0);
        }
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.leave();
    }
}

/// A running call (see [`Queued::start`]).
#[derive(Debug)]
pub struct Running(());

impl Drop for Running {
    fn drop(&mut self) {
        metrics::gauge!(RUNNING).decrement(1.0);
    }
}

/// A process tree started (`true`) or ended.
pub fn process_tree(started: bool) {
    let gauge = metrics::gauge!(PROCESS_TREES);
    if started {
        gauge.increment(1.0);
    } else {
        gauge.decrement(1.0);
    }
}

/// An MCP server's health changed: ready or not, and whether this change
/// is a failure.
pub fn mcp_server(server: &str, ready: bool, failed: bool) {
    let server = server.to_string();
    metrics::gauge!(MCP_SERVER_UP, "server" => server.clone()).set(if ready { 1.0 } else { 0.0 });
    if failed {
        metrics::counter!(MCP_SERVER_FAILURES, "server" => server).increment(1);
    }
}
