//! What a batch tells its host, and the channel it travels on.
//!
//! Results leave in call order (the ordering stage holds them back); progress,
//! permission requests and notifications leave as soon as they happen. All of
//! them share one channel per batch so a host reads a single stream. Async
//! hosts get a tokio channel, blocking hosts a crossbeam one: the sink hides
//! which.

use std::sync::Arc;

use baton_engine::{Approval, ApprovalRequest, CallResult, Notification, Progress};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::config::InterruptKind;

/// One event of a batch.
///
/// The large payloads (a result, an approval request, the batch summary)
/// are boxed: every event is moved into the channel and out of it, and a
/// call sends up to four, so the enum's size is copied that many times per
/// call. Boxed, an event is 88 bytes instead of 272; a result already
/// travels boxed from the call to the ordering stage, so its box is reused
/// and costs no allocation.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A running call reported progress (not ordered with results).
    Progress {
        /// The call's position in its message.
        index: usize,
        /// The call's `tool_use` id.
        call_id: Arc<str>,
        /// What the tool reported.
        progress: Progress,
    },
    /// The result of call `index`; results arrive in index order.
    Result {
        /// The call's position in its message.
        index: usize,
        /// The call's one result.
        result: Box<CallResult>,
    },
    /// A call needs the host's approval; answer through the prompt.
    PermissionRequest(Box<PermissionPrompt>),
    /// Something happened outside any call (a background shell ended).
    Notification(Notification),
    /// A call's state changed (queued, started, waiting for approval,
    /// finished): sent at once, not in call order.
    Call(crate::lifecycle::CallEvent),
    /// Every call has its result and the batch was ended.
    Done(Box<BatchSummary>),
}

/// How a batch ended, for the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Number of calls (and results).
    pub calls: usize,
    /// The first interrupt the host sent, if any.
    pub interrupted: Option<InterruptKind>,
    /// Label of the call whose failure cancelled its siblings, if any.
    pub cancelled_by: Option<String>,
    /// A hook asked to end the turn after this batch.
    pub stop_turn: Option<String>,
    /// PostToolBatch hooks' `additionalContext`, for the model with the
    /// results (see `baton_engine::pipeline::batch_hooks`).
    pub additional_context: Vec<String>,
    /// PostToolBatch hooks' non-blocking problems and `systemMessage`s.
    pub diagnostics: Vec<String>,
    /// PostToolBatch hooks' `systemMessage`s: text for the user, not the
    /// model.
    pub system_messages: Vec<String>,
}

/// A pending approval. Answering twice keeps the first answer; dropping it
/// unanswered denies the call.
#[derive(Debug, Clone)]
pub struct PermissionPrompt {
    /// What is asked: the call, the tool and the reason the rules gave.
    pub request: ApprovalRequest,
    reply: Arc<Mutex<Option<oneshot::Sender<Approval>>>>,
    id: u64,
}

/// Prompt ids, unique in the process (nested batches share one host).
static NEXT_PROMPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl PermissionPrompt {
    pub(crate) fn new(request: ApprovalRequest) -> (Self, oneshot::Receiver<Approval>) {
        let (tx, rx) = oneshot::channel();
        (
            PermissionPrompt {
                request,
                reply: Arc::new(Mutex::new(Some(tx))),
                id: NEXT_PROMPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            },
            rx,
        )
    }

    /// Unique in the process; a `PermissionCancelled` lifecycle event
    /// names the prompt it withdraws by this id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the prompt still waits for an answer.
    pub fn is_pending(&self) -> bool {
        self.reply.lock().as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// Withdraws an unanswered prompt; true if it was still unanswered.
    pub(crate) fn withdraw(&self) -> bool {
        self.reply.lock().take().is_some()
    }

    /// Answers the request; returns false if it was already answered or the
    /// call no longer waits (it was cancelled).
    pub fn answer(&self, approval: Approval) -> bool {
        match self.reply.lock().take() {
            Some(tx) => tx.send(approval).is_ok(),
            None => false,
        }
    }
}

/// Where a batch's events go. Sending never blocks; a host that stopped
/// listening loses events but never stalls the batch.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum EventSink {
    /// Events go to a tokio channel (hosts running on tokio).
    Tokio(tokio::sync::mpsc::UnboundedSender<Event>),
    /// Events go to a crossbeam channel (blocking hosts, e.g. `BlockingEngine`).
    Blocking(crossbeam_channel::Sender<Event>),
}

impl EventSink {
    /// Sends `event`, dropping it if the receiver is gone.
    pub fn send(&self, event: Event) {
        match self {
            EventSink::Tokio(tx) => {
                let _ = tx.send(event);
            }
            EventSink::Blocking(tx) => {
                let _ = tx.send(event);
            }
        }
    }

    /// An async sink and its receiver.
    pub fn tokio() -> (Self, tokio::sync::mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (EventSink::Tokio(tx), rx)
    }

    /// A blocking sink and its receiver.
    pub fn blocking() -> (Self, crossbeam_channel::Receiver<Event>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (EventSink::Blocking(tx), rx)
    }
}

#[cfg(test)]
mod tests {
    /// Every event is moved into its channel and out again, up to four per
    /// call: a variant that grows the enum (an unboxed result made it 272
    /// bytes; boxed, it is 88) is paid on every one of them.
    #[test]
    fn an_event_stays_small() {
        let size = std::mem::size_of::<super::Event>();
        assert!(size <= 96, "Event is {size} bytes");
    }
}
