//! Decisions that stop calls: interrupts (SPEC §7), sibling cancellation
//! (SPEC §8); and the one decision that changes what later calls see,
//! context modifiers (SPEC §6).

use std::panic::{catch_unwind, AssertUnwindSafe};

use baton_engine::{CallResult, CancelReason, ContextModifier, InterruptBehavior, Outcome};
use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::{BatchState, Phase};
use crate::config::InterruptKind;

impl BatchState {
    pub(crate) fn interrupt(&mut self, myself: &ActorRef<CoordMsg>, kind: InterruptKind) {
        self.summary.interrupted.get_or_insert(kind);
        match kind {
            InterruptKind::Cancel => self.stop_all(CancelReason::User),
            InterruptKind::NewMessage => {
                self.new_message = true;
                let reason = CancelReason::NewMessage;
                for slot in &self.slots {
                    match (&slot.phase, slot.interrupt) {
                        (Phase::Running(scope), InterruptBehavior::Cancel) => {
                            scope.cancel(reason.clone())
                        }
                        // A call that keeps running passes the interrupt to
                        // the batches it opened (a subagent's own calls
                        // that stop on a new message stop too).
                        (Phase::Running(_), InterruptBehavior::Block) => {
                            for child in self.children.interrupt(&slot.call_id) {
                                child.post(CoordMsg::Interrupt(kind));
                            }
                        }
                        _ => {}
                    }
                }
                self.settle_queued_where(&reason, |s| s.interrupt == InterruptBehavior::Cancel);
            }
        }
        self.pump(myself);
    }

    /// The host let go of the batch: nothing may keep running for nobody.
    pub(crate) fn host_gone(&mut self, myself: &ActorRef<CoordMsg>) {
        self.ended = true;
        self.stop_all(CancelReason::Other(
            "the host stopped waiting for this batch".into(),
        ));
        self.pump(myself);
    }

    /// Stops running calls and settles queued ones; later calls will not
    /// start either. The first reason given stays.
    fn stop_all(&mut self, reason: CancelReason) {
        let reason = self.stop.get_or_insert(reason).clone();
        self.scope.cancel(reason.clone());
        self.settle_queued_where(&reason, |_| true);
    }

    /// A failed call may cancel its siblings, depending on the policy. Only
    /// a call that ran and failed counts (SPEC §8: error exit, timeout,
    /// could not start — all reported by the tool as its own error). A call
    /// that never ran — denied by a rule, a hook, the approver or the lack
    /// of one, or rejected for its input — is a decision for the model to
    /// read, not a failure; a cancelled call, or an engine that already
    /// stopped everything, triggers nothing either. A tool that panicked ran
    /// and broke, which counts as a failure.
    pub(crate) fn check_siblings(&mut self, index: usize, result: &CallResult) {
        let ran_and_failed = matches!(result.outcome, Outcome::ToolError | Outcome::Panicked);
        if !result.is_error || !ran_and_failed || self.stop.is_some() {
            return;
        }
        let slot = &self.slots[index];
        if !self
            .runtime
            .config
            .sibling_policy
            .triggers(slot.cancels_siblings, slot.read_only)
        {
            return;
        }
        self.summary.cancelled_by = Some(slot.label.clone());
        self.stop_all(CancelReason::Sibling {
            failed_call_id: slot.call_id.to_string(),
            failed_call: slot.label.clone(),
        });
    }

    /// Applies a modifier of a call that is not concurrency-safe, before any
    /// later call starts. A modifier that panics leaves the context as it was
    /// and is reported with the call's result.
    pub(crate) fn apply_modifier(&mut self, modifier: ContextModifier, result: &mut CallResult) {
        let before = self.context.clone();
        match catch_unwind(AssertUnwindSafe(move || modifier.apply(before))) {
            Ok(context) => {
                self.context = context;
                if self.persist_context {
                    *self.runtime.context.lock() = self.context.clone();
                }
            }
            Err(_) => result
                .diagnostics
                .push("the call's context change panicked and was not applied".into()),
        }
    }
}
