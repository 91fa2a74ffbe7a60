//! The host's handle on one batch: add calls, end, interrupt, wait.
//!
//! Sending never waits for the coordinator; the handle only checks what it
//! can know locally (adding after `end` is refused, since the batch may
//! already have reported done). Dropping a handle before `end` stops the
//! batch: nobody would read what it produces.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use baton_engine::{CancelScope, ToolUse};
use ractor::ActorRef;

use crate::config::InterruptKind;
use crate::coordinator::CoordMsg;
use crate::intake::Intake;
use crate::quiescence::Quiescence;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error("the batch was already ended; open a new batch for the next message")]
    Ended,
    #[error("the batch is gone (its coordinator stopped)")]
    Gone,
    #[error("could not start the batch coordinator: {0}")]
    Spawn(String),
}

pub struct BatchHandle {
    actor: ActorRef<CoordMsg>,
    intake: Arc<Intake>,
    quiet: Arc<Quiescence>,
    ended: AtomicBool,
    scope: CancelScope,
}

impl std::fmt::Debug for BatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchHandle")
            .field("ended", &self.ended)
            .finish()
    }
}

impl BatchHandle {
    pub(crate) fn new(
        actor: ActorRef<CoordMsg>,
        intake: Arc<Intake>,
        quiet: Arc<Quiescence>,
        scope: CancelScope,
    ) -> Self {
        BatchHandle {
            actor,
            intake,
            quiet,
            ended: AtomicBool::new(false),
            scope,
        }
    }

    /// Adds a call (as it streams in); it starts as soon as the rules allow.
    pub fn add(&self, call: ToolUse) -> Result<(), BatchError> {
        if self.ended.load(Ordering::Acquire) {
            return Err(BatchError::Ended);
        }
        // Once admitted, the call gets a result even if the coordinator dies
        // before reading it (its cleanup answers every admitted call), so a
        // failed send needs no error here.
        let actor = &self.actor;
        let id = call.id.clone();
        self.intake
            .admit(&id, move |id| {
                let _ = actor.cast(CoordMsg::Add(call, id));
            })
            .ok_or(BatchError::Gone)
    }

    /// The message is complete: no more calls. Idempotent.
    pub fn end(&self) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            let _ = self.actor.cast(CoordMsg::End);
        }
    }

    /// Interrupts the batch (SPEC §7). Idempotent; harmless after the end.
    pub fn interrupt(&self, kind: InterruptKind) {
        let _ = self.actor.cast(CoordMsg::Interrupt(kind));
    }

    /// Resolves when every call has its result and every invocation stopped.
    pub async fn quiescent(&self) {
        self.quiet.wait().await
    }

    /// Blocking variant of [`Self::quiescent`], for hosts without a runtime.
    pub fn wait_quiescent(&self) {
        self.quiet.wait_blocking()
    }

    pub fn wait_quiescent_timeout(&self, timeout: std::time::Duration) -> bool {
        self.quiet.wait_blocking_timeout(timeout)
    }

    pub fn is_quiescent(&self) -> bool {
        self.quiet.is_reached()
    }

    pub(crate) fn actor(&self) -> &ActorRef<CoordMsg> {
        &self.actor
    }

    /// The batch's cancellation scope (a child of the turn).
    pub fn scope(&self) -> &CancelScope {
        &self.scope
    }
}

impl Drop for BatchHandle {
    fn drop(&mut self) {
        if !self.ended.load(Ordering::Acquire) {
            let _ = self.actor.cast(CoordMsg::HostGone);
        }
    }
}
