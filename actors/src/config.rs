//! Runtime settings: the numbers SPEC §5, §8, §9 and §15 make configurable.

use std::str::FromStr;

use crate::limits::{Limits, DEFAULT_WAIT_SLOTS};

/// Environment variable setting one cap on concurrently running safe calls
/// of every kind (SPEC §5); without it the limits go by kind of work (see
/// [`crate::limits`]).
pub(crate) const CONCURRENCY_ENV: &str = "BATON_MAX_TOOL_CONCURRENCY";
/// Fresh results of one message carry at most this many characters (SPEC §9).
pub(crate) const DEFAULT_MESSAGE_BUDGET_CHARS: usize = 200_000;
/// How deep batches may nest under calls (SPEC §15).
pub(crate) const DEFAULT_MAX_NESTING_DEPTH: usize = 8;
/// Calls one message may run; later ones get an error result at once. A
/// model's output limit allows a few thousand calls at most, so this only
/// stops a runaway or hostile host input from costing unbounded memory
/// and time (100,000 calls took 522 MB).
pub(crate) const DEFAULT_MAX_CALLS_PER_MESSAGE: usize = 10_000;

/// When a failed call cancels its siblings (SPEC §8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SiblingPolicy {
    /// Any error result of a call whose tool cancels siblings on error.
    #[default]
    ShellError,
    /// The same, but only when that call was not read-only.
    MutatingShellError,
    /// Never.
    Off,
}

impl SiblingPolicy {
    /// Whether a failed call with these properties triggers cancellation.
    pub fn triggers(self, cancels_siblings: bool, read_only: bool) -> bool {
        match self {
            SiblingPolicy::ShellError => cancels_siblings,
            SiblingPolicy::MutatingShellError => cancels_siblings && !read_only,
            SiblingPolicy::Off => false,
        }
    }

    /// The name settings and flags use for this policy (`shell-error`,
    /// `mutating-shell-error`, `off`).
    pub fn as_str(self) -> &'static str {
        match self {
            SiblingPolicy::ShellError => "shell-error",
            SiblingPolicy::MutatingShellError => "mutating-shell-error",
            SiblingPolicy::Off => "off",
        }
    }
}

impl FromStr for SiblingPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "shell-error" => Ok(SiblingPolicy::ShellError),
            "mutating-shell-error" => Ok(SiblingPolicy::MutatingShellError),
            "off" => Ok(SiblingPolicy::Off),
            other => Err(format!(
                "unknown sibling policy `{other}` (expected shell-error, mutating-shell-error or off)"
            )),
        }
    }
}

/// The two ways a host interrupts a batch (SPEC §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InterruptKind {
    /// The user stopped the turn: everything stops.
    Cancel,
    /// The user typed a new message: only calls that interrupt on it stop.
    NewMessage,
}

impl FromStr for InterruptKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cancel" => Ok(InterruptKind::Cancel),
            "new_message" | "new-message" => Ok(InterruptKind::NewMessage),
            other => Err(format!(
                "unknown interrupt kind `{other}` (expected cancel or new_message)"
            )),
        }
    }
}

/// Settings of a runtime; every batch it opens uses them.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// One cap on running safe calls of every kind, when the user set one;
    /// `None`: the limits by kind of work, [`Self::process_slots`] and
    /// [`Self::wait_slots`].
    pub max_concurrency: Option<usize>,
    /// Safe calls that start processes or work the CPU, running at once in
    /// one batch (default: sized to the machine, see [`Limits`](crate::Limits)).
    pub process_slots: usize,
    /// Safe calls that only wait, running at once in one batch.
    pub wait_slots: usize,
    /// Which failed calls cancel their running siblings (SPEC §8).
    pub sibling_policy: SiblingPolicy,
    /// Characters the fresh results of one message may carry in all; the
    /// largest are cut down to fit (SPEC §9).
    pub message_budget_chars: usize,
    /// How deep batches may nest under calls (subagents inside subagents,
    /// SPEC §15); deeper nested batches are refused.
    pub max_nesting_depth: usize,
    /// Calls past this many in one message are not run (an error result
    /// each, without lookup or parsing).
    pub max_calls_per_message: usize,
    /// How many nested batches (subagents) may run at once across the
    /// runtime; `None`: no limit. A nested batch waits for a slot (or for
    /// its parent call to be cancelled). With a limit, a tree deeper than
    /// the limit can wait on itself, so keep it above the nesting you use.
    pub max_running_nested: Option<usize>,
    /// Send `ask` decisions to the host as permission-request events. When
    /// false, the pipeline's own approver (if any) answers.
    pub host_approvals: bool,
    /// Send each call's lifecycle events (queued, started, finished). A
    /// host that reads only results (`baton run` without `--events`) turns
    /// them off: three events fewer per call, each a message through the
    /// batch's channel. Approval events are sent either way.
    pub call_events: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            max_concurrency: None,
            process_slots: match Limits::by_kind_for_machine() {
                Limits::ByKind { process, .. } => process,
                Limits::Uniform(n) => n,
            },
            wait_slots: DEFAULT_WAIT_SLOTS,
            sibling_policy: SiblingPolicy::default(),
            message_budget_chars: DEFAULT_MESSAGE_BUDGET_CHARS,
            max_nesting_depth: DEFAULT_MAX_NESTING_DEPTH,
            max_calls_per_message: DEFAULT_MAX_CALLS_PER_MESSAGE,
            max_running_nested: None,
            host_approvals: false,
            call_events: true,
        }
    }
}

impl RuntimeConfig {
    /// Defaults, with the concurrency cap taken from the environment when it
    /// holds a positive number (anything else is ignored, not fatal).
    pub fn from_env() -> Self {
        let mut config = RuntimeConfig::default();
        if let Some(n) = std::env::var(CONCURRENCY_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
        {
            config.max_concurrency = Some(n);
        }
        config
    }

    /// One cap for every safe call, whatever its kind (the meaning
    /// `--max-concurrency` always had).
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n.max(1));
        self
    }

    /// Sizes of the two pools used when no single cap is set.
    pub fn with_slots(mut self, process: usize, wait: usize) -> Self {
        self.process_slots = process.max(1);
        self.wait_slots = wait.max(1);
        self
    }

    /// The limits a batch schedules under.
    pub fn limits(&self) -> Limits {
        match self.max_concurrency {
            Some(n) => Limits::Uniform(n.max(1)),
            None => Limits::ByKind {
                process: self.process_slots.max(1),
                wait: self.wait_slots.max(1),
            },
        }
    }

    /// Sets [`Self::sibling_policy`].
    pub fn with_sibling_policy(mut self, policy: SiblingPolicy) -> Self {
        self.sibling_policy = policy;
        self
    }

    /// Sets [`Self::host_approvals`].
    pub fn with_host_approvals(mut self, yes: bool) -> Self {
        self.host_approvals = yes;
        self
    }

    /// See [`Self::call_events`].
    pub fn with_call_events(mut self, yes: bool) -> Self {
        self.call_events = yes;
        self
    }

    /// Sets [`Self::max_running_nested`].
    pub fn with_max_running_nested(mut self, max: Option<usize>) -> Self {
        self.max_running_nested = max;
        self
    }

    /// Sets [`Self::message_budget_chars`].
    pub fn with_message_budget(mut self, chars: usize) -> Self {
        self.message_budget_chars = chars;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_trigger_as_documented() {
        assert!(SiblingPolicy::ShellError.triggers(true, true));
        assert!(!SiblingPolicy::ShellError.triggers(false, false));
        assert!(SiblingPolicy::MutatingShellError.triggers(true, false));
        assert!(!SiblingPolicy::MutatingShellError.triggers(true, true));
        assert!(!SiblingPolicy::Off.triggers(true, false));
        for p in [
            SiblingPolicy::ShellError,
            SiblingPolicy::MutatingShellError,
            SiblingPolicy::Off,
        ] {
            assert_eq!(p.as_str().parse::<SiblingPolicy>(), Ok(p));
        }
        assert!("sometimes".parse::<SiblingPolicy>().is_err());
    }
}
