//! Call lifecycle events: each call's state as it changes, at once.
//!
//! Results leave in call order, so a finished call stays invisible while an
//! earlier, slower one runs. A UI that shows each call's state needs the
//! changes themselves: queued, started, waiting for approval, finished
//! (with its outcome and how long it ran). They travel on the batch's
//! event stream beside the results, unordered and immediate, and never
//! change what the results say.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::Outcome;

use crate::event::{Event, EventSink};

/// A change in one call's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallEvent {
    /// The call's position in its message; `None` where it is not known
    /// (approval requests name the call by id).
    pub index: Option<usize>,
    /// The call's `tool_use` id.
    pub call_id: Arc<str>,
    /// What the call is now doing.
    pub state: CallState,
}

/// The states a call passes through.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallState {
    /// Added to the batch; waits for the scheduler.
    Queued {
        /// The name of the tool called.
        tool: Arc<str>,
    },
    /// Its pipeline started (validation, hooks, permission, then the tool).
    Started,
    /// Waits for the host's answer to a permission request.
    WaitingApproval,
    /// Stopped waiting for approval without an answer (the call was
    /// cancelled or interrupted): the prompt with this
    /// [`PermissionPrompt::id`](crate::PermissionPrompt::id) is withdrawn,
    /// a UI should close it.
    PermissionCancelled {
        /// The withdrawn prompt's id.
        prompt: u64,
    },
    /// Has its result (which may still wait for earlier calls' results).
    /// `duration` runs from the start; zero for calls that never started.
    Finished {
        /// How the call ended.
        outcome: Outcome,
        /// Time from its start to its result.
        duration: Duration,
    },
}

impl CallState {
    /// The name used on the wire (`call_queued`, …).
    pub fn wire_name(&self) -> &'static str {
        match self {
            CallState::Queued { .. } => "call_queued",
            CallState::Started => "call_started",
            CallState::WaitingApproval => "call_waiting_approval",
            CallState::PermissionCancelled { .. } => "permission_cancelled",
            CallState::Finished { .. } => "call_finished",
        }
    }
}

/// Emits a batch's lifecycle events and remembers when calls started.
/// Turned off (`RuntimeConfig::call_events`), it does neither.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    enabled: bool,
    /// When each running call started, by index (a vector: indexes are
    /// dense, and a map's hashing cost more than the rest of this).
    started: Vec<Option<Instant>>,
}

impl Lifecycle {
    pub(crate) fn new(enabled: bool) -> Self {
        Lifecycle {
            enabled,
            started: Vec::new(),
        }
    }

    pub(crate) fn queued(
        &mut self,
        sink: &EventSink,
        index: usize,
        call_id: &Arc<str>,
        tool: &Arc<str>,
    ) {
        if !self.enabled {
            return;
        }
        send(
            sink,
            Some(index),
            call_id,
            CallState::Queued { tool: tool.clone() },
        );
    }

    /// Call `index` started `at` (read by the caller, who needs the time
    /// too).
    pub(crate) fn started(
        &mut self,
        sink: &EventSink,
        index: usize,
        call_id: &Arc<str>,
        at: Instant,
    ) {
        if !self.enabled {
            return;
        }
        if self.started.len() <= index {
            self.started.resize(index + 1, None);
        }
        self.started[index] = Some(at);
        send(sink, Some(index), call_id, CallState::Started);
    }

    pub(crate) fn finished(
        &mut self,
        sink: &EventSink,
        index: usize,
        call_id: &Arc<str>,
        outcome: &Outcome,
    ) {
        self.finished_at(sink, index, call_id, outcome, None)
    }

    /// [`Self::finished`], with the call's end if the caller has read the
    /// clock at its end already.
    pub(crate) fn finished_at(
        &mut self,
        sink: &EventSink,
        index: usize,
        call_id: &Arc<str>,
        outcome: &Outcome,
        ended: Option<Instant>,
    ) {
        if !self.enabled {
            return;
        }
        let duration =
            self.started
                .get_mut(index)
                .and_then(Option::take)
                .map_or(Duration::ZERO, |t| {
                    ended
                        .unwrap_or_else(Instant::now)
                        .saturating_duration_since(t)
                });
        send(
            sink,
            Some(index),
            call_id,
            CallState::Finished {
                outcome: outcome.clone(),
                duration,
            },
        );
    }
}

pub(crate) fn send(sink: &EventSink, index: Option<usize>, call_id: &Arc<str>, state: CallState) {
    sink.send(Event::Call(CallEvent {
        index,
        call_id: call_id.clone(),
        state,
    }));
}
