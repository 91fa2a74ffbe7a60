//! The host's handle on one batch: add calls, end, interrupt, wait.
//!
//! Sending never waits for the coordinator; the handle only checks what it
//! can know locally (adding after `end` is refused, since the batch may
//! already have reported done). Dropping a handle before `end` stops the
//! batch: nobody would read what it produces.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use baton_engine::{CallResult, CancelScope, ToolUse};
use ractor::ActorRef;

use crate::config::InterruptKind;
use crate::coordinator::CoordMsg;
use crate::intake::{Intake, Mailbox};
use crate::quiescence::Quiescence;

/// Why a batch could not be opened, or a call added to it.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// [`BatchHandle::end`] was called: the batch takes no more calls.
    #[error("the batch was already ended; open a new batch for the next message")]
    Ended,
    /// The batch's coordinator stopped (the runtime shut down or it panicked).
    #[error("the batch is gone (its coordinator stopped)")]
    Gone,
    /// The coordinator actor could not be spawned; ractor's error is the
    /// source.
    #[error("could not start the batch coordinator: {0}")]
    Spawn(#[source] std::sync::Arc<ractor::SpawnErr>),
    /// The blocking API was used from inside an async runtime, where it
    /// would block a worker thread.
    #[error(
        "the blocking API was called from inside an async runtime; use Engine::open_batch there"
    )]
    InsideRuntime,
}

/// Cheap to clone: clones share one batch (a UI task can cancel a call
/// while another task adds calls). The batch stops when the last clone is
/// dropped before `end`.
#[derive(Clone)]
pub struct BatchHandle {
    inner: Arc<Inner>,
}

struct Inner {
    mailbox: Mailbox,
    quiet: Arc<Quiescence>,
    ended: AtomicBool,
    scope: CancelScope,
}

baton_engine::debug_fields! { BatchHandle as this { ended: this.inner.ended } }

impl BatchHandle {
    pub(crate) fn new(
        actor: ActorRef<CoordMsg>,
        intake: Arc<Intake>,
        quiet: Arc<Quiescence>,
        scope: CancelScope,
    ) -> Self {
        BatchHandle {
            inner: Arc::new(Inner {
                mailbox: Mailbox::new(actor, intake),
                quiet,
                ended: AtomicBool::new(false),
                scope,
            }),
        }
    }

    /// Adds a call (as it streams in); it starts as soon as the rules allow.
    pub fn add(&self, call: ToolUse) -> Result<(), BatchError> {
        let inner = &*self.inner;
        if inner.ended.load(Ordering::Acquire) {
            return Err(BatchError::Ended);
        }
        // Once admitted, the call gets a result even if the coordinator dies
        // before reading it (its cleanup answers every admitted call), so a
        // failed wake-up needs no error here.
        // Made before the lock, which the coordinator's cleanup shares.
        let id: Arc<str> = Arc::from(call.id.as_str());
        if inner.mailbox.post(CoordMsg::Add(call, id)) {
            Ok(())
        } else {
            Err(BatchError::Gone)
        }
    }

    /// Adds a call the host has answered itself, without running it (a
    /// call it knows the result of from its own journal): the call, named
    /// by `result.call_id` and `result.tool_name`, takes its place in the
    /// message and `result` leaves in its turn among the results of the
    /// calls that run. Nothing of it runs: no scheduling, permission,
    /// hooks, sibling cancellation, nor context change (the result's
    /// modifier is dropped). It is answered so even after an interrupt. A
    /// later call with its id is refused as a duplicate, as usual.
    pub fn add_answered(&self, result: CallResult) -> Result<(), BatchError> {
        let inner = &*self.inner;
        if inner.ended.load(Ordering::Acquire) {
            return Err(BatchError::Ended);
        }
        let id: Arc<str> = Arc::from(result.call_id.as_str());
        if inner.mailbox.post(CoordMsg::Answered(Box::new(result), id)) {
            Ok(())
        } else {
            Err(BatchError::Gone)
        }
    }

    /// Adds a call with the host's own deadline: if it has not finished
    /// `deadline` after it was added (queued or running), it is cancelled
    /// alone, and its result says the host's deadline passed. Separate from
    /// the tool's own timeout, which still applies.
    pub fn add_with_deadline(
        &self,
        call: ToolUse,
        deadline: std::time::Duration,
    ) -> Result<(), BatchError> {
        let id = call.id.clone();
        self.add(call)?;
        self.inner.mailbox.post(CoordMsg::Deadline(id, deadline));
        Ok(())
    }

    /// Cancels the one call `id` (running: stopped; queued: never started).
    /// Its result says the host cancelled it; its siblings are untouched. An
    /// unknown or finished id does nothing.
    pub fn cancel_call(&self, id: &str) {
        self.inner.mailbox.post(CoordMsg::CancelCall(
            id.to_string(),
            crate::coordinator::host_cancelled(),
        ));
    }

    /// The message is complete: no more calls. Idempotent.
    pub fn end(&self) {
        if !self.inner.ended.swap(true, Ordering::AcqRel) {
            self.inner.mailbox.post(CoordMsg::End);
        }
    }

    /// Interrupts the batch (SPEC §7). Idempotent; harmless after the end.
    pub fn interrupt(&self, kind: InterruptKind) {
        self.inner.mailbox.post(CoordMsg::Interrupt(kind));
    }

    /// Resolves when every call has its result and every invocation stopped.
    pub async fn quiescent(&self) {
        self.inner.quiet.wait().await
    }

    /// Blocking variant of [`Self::quiescent`], for hosts without a runtime.
    pub fn wait_quiescent(&self) {
        self.inner.quiet.wait_blocking()
    }

    /// Like [`Self::wait_quiescent`], giving up after `timeout`; true if the
    /// batch became quiescent in time.
    pub fn wait_quiescent_timeout(&self, timeout: std::time::Duration) -> bool {
        self.inner.quiet.wait_blocking_timeout(timeout)
    }

    /// Whether every call has its result and every invocation stopped, now.
    pub fn is_quiescent(&self) -> bool {
        self.inner.quiet.is_reached()
    }

    pub(crate) fn mailbox(&self) -> &Mailbox {
        &self.inner.mailbox
    }

    /// The batch's cancellation scope (a child of the turn).
    pub fn scope(&self) -> &CancelScope {
        &self.inner.scope
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if !self.ended.load(Ordering::Acquire) {
            self.mailbox.post(CoordMsg::HostGone);
        }
    }
}
