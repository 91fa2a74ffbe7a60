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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use metrics::{Key, Label, Level, Metadata, SharedString};

use baton_tool::call::Outcome;

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
/// Process trees (a shell with everything it started) alive now; counted
/// by the `baton-process` crate, where trees start and end.
pub use baton_process::PROCESS_TREES;
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
    let outcome = outcome_index(outcome);
    CALL_KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        let name = tool.unwrap_or(UNKNOWN_TOOL);
        if !keys.contains_key(name) {
            keys.insert(name.into(), call_keys(name));
        }
        if let Some(key) = keys.get(name).and_then(|k| k.get(outcome)) {
            metrics::with_recorder(|r| r.register_counter(key, &METADATA)).increment(1);
        }
    });
}

/// What the `metrics` macros would give a metric recorded here.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// Every outcome label, in the order of [`outcome_index`].
const OUTCOMES: [&str; 9] = [
    "success",
    "tool_error",
    "panicked",
    "unknown_tool",
    "invalid_input",
    "validation_failed",
    "denied",
    "cancelled",
    "internal",
];

fn outcome_index(outcome: &Outcome) -> usize {
    match outcome {
        Outcome::Success => 0,
        Outcome::ToolError => 1,
        Outcome::Panicked => 2,
        Outcome::UnknownTool => 3,
        Outcome::InvalidInput => 4,
        Outcome::ValidationFailed => 5,
        Outcome::Denied => 6,
        Outcome::Cancelled { .. } => 7,
        Outcome::Internal => 8,
    }
}

thread_local! {
    /// The [`CALLS`] keys of each tool already counted on this thread, one
    /// per outcome. The macros build a key with labels on every use (a
    /// `Vec` of labels, and a `String` for a tool name that is not
    /// `'static`), recorder or not: two allocations per call for a library
    /// host that installed none. A retained key is built once and lent.
    /// Per thread, so the runtime's workers share no lock. Bounded: only
    /// the pool's names get here (a name the model made up is counted as
    /// [`UNKNOWN_TOOL`]).
    static CALL_KEYS: RefCell<HashMap<Box<str>, Vec<Key>>> = RefCell::new(HashMap::new());
}

fn call_keys(tool: &str) -> Vec<Key> {
    let tool = SharedString::from_shared(Arc::<str>::from(tool));
    OUTCOMES
        .iter()
        .map(|&outcome| {
            let labels = vec![
                Label::new("tool", tool.clone()),
                Label::from_static_parts("outcome", outcome),
            ];
            Key::from_parts(CALLS, labels).to_retained()
        })
        .collect()
}

/// `phase` (one of the names in [`PHASE_SECONDS`]) took `took`.
pub fn phase(phase: &'static str, took: Duration) {
    // Static keys for the known phases: no labels built per call.
    static LABELS: [[Label; 1]; 5] = [
        [Label::from_static_parts("phase", "queue")],
        [Label::from_static_parts("phase", "validate")],
        [Label::from_static_parts("phase", "hooks")],
        [Label::from_static_parts("phase", "permission")],
        [Label::from_static_parts("phase", "exec")],
    ];
    static KEYS: [Key; 5] = [
        phase_key(&LABELS[0]),
        phase_key(&LABELS[1]),
        phase_key(&LABELS[2]),
        phase_key(&LABELS[3]),
        phase_key(&LABELS[4]),
    ];
    let known = ["queue", "validate", "hooks", "permission", "exec"]
        .iter()
        .position(|&p| p == phase);
    let record = |key: &Key| {
        metrics::with_recorder(|r| r.register_histogram(key, &METADATA)).record(took.as_secs_f64())
    };
    match known {
        Some(i) => record(&KEYS[i]),
        None => record(&Key::from_parts(
            PHASE_SECONDS,
            vec![Label::new("phase", phase)],
        )),
    }
}

const fn phase_key(labels: &'static [Label]) -> Key {
    Key::from_static_parts(PHASE_SECONDS, labels)
}

/// Counts one call as queued until it is dropped or [`Queued::start`]ed,
/// so a call cancelled before it starts leaves the gauge right.
#[derive(Debug)]
pub struct Queued(bool);

impl Queued {
    /// Counts one more call as queued.
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

/// An MCP server's health changed: ready or not, and whether this change
/// is a failure.
pub fn mcp_server(server: &str, ready: bool, failed: bool) {
    let server = server.to_string();
    metrics::gauge!(MCP_SERVER_UP, "server" => server.clone()).set(if ready { 1.0 } else { 0.0 });
    if failed {
        metrics::counter!(MCP_SERVER_FAILURES, "server" => server).increment(1);
    }
}
