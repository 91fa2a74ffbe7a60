//! Permission requests as host events.
//!
//! An `ask` decision becomes a [`Event::PermissionRequest`] on the batch's
//! stream and the call waits for the host's answer. The pipeline stops
//! waiting when the call is cancelled (and then reports it as never run);
//! the request is then withdrawn with a `PermissionCancelled` lifecycle
//! event, so a UI closes its prompt. A host that drops the request
//! unanswered denies the call, so a call never waits forever for a host
//! that is gone. Deny-and-interrupt interrupts the top-level batch, the
//! way the host's own `cancel` interrupt would.

use std::sync::Arc;

use crate::intake::Mailbox;
use baton_engine::pipeline::ApproverService;
use baton_engine::{Approval, ApprovalRequest, Approver};

use crate::config::InterruptKind;
use crate::coordinator::CoordMsg;
use crate::event::{Event, EventSink, PermissionPrompt};
use crate::lifecycle::{self, CallState};

pub(crate) struct HostApprover {
    sink: EventSink,
    /// The top-level batch, for deny-and-interrupt.
    batch: Mailbox,
}

impl HostApprover {
    pub(crate) fn new(sink: EventSink, batch: Mailbox) -> Self {
        HostApprover { sink, batch }
    }
}

#[baton_engine::async_trait]
impl Approver for HostApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let call_id: Arc<str> = request.call_id.as_str().into();
        let (prompt, answer) = PermissionPrompt::new(request);
        lifecycle::send(&self.sink, None, &call_id, CallState::WaitingApproval);
        let mut pending = Withdraw {
            prompt: Some(prompt.clone()),
            sink: self.sink.clone(),
            call_id,
        };
        self.sink.send(Event::PermissionRequest(Box::new(prompt)));
        let approval = answer.await.unwrap_or(Approval::Unanswered {
            cause: baton_engine::Unasked::SessionClosing,
            detail: Some("the host dropped the permission request without answering".into()),
        });
        pending.prompt = None;
        if let Approval::DenyAndInterrupt { .. } = approval {
            self.batch.post(CoordMsg::Interrupt(InterruptKind::Cancel));
        }
        approval
    }
}

/// Withdraws the prompt if the wait ends without an answer (the pipeline
/// dropped the wait because the call was cancelled).
struct Withdraw {
    prompt: Option<PermissionPrompt>,
    sink: EventSink,
    call_id: Arc<str>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(prompt) = self.prompt.take() {
            if prompt.withdraw() {
                lifecycle::send(
                    &self.sink,
                    None,
                    &self.call_id,
                    CallState::PermissionCancelled {
                        prompt: prompt.id(),
                    },
                );
            }
        }
    }
}

/// The approver of a nested batch's calls: the top-level host's, with the
/// id of the call that opened the batch on each request. Nested deeper, the
/// innermost parent is kept.
pub(crate) struct NestedApprover {
    inner: Arc<dyn Approver>,
    parent: String,
}

impl NestedApprover {
    /// `services` with their approver (if any) naming `parent` on requests.
    pub(crate) fn wrap(
        services: &baton_engine::extensions::Extensions,
        parent: &str,
    ) -> baton_engine::extensions::Extensions {
        match services.get::<ApproverService>() {
            Some(approver) => services.with(ApproverService(Arc::new(NestedApprover {
                inner: approver.0.clone(),
                parent: parent.to_string(),
            }))),
            None => services.clone(),
        }
    }
}

#[baton_engine::async_trait]
impl Approver for NestedApprover {
    async fn approve(&self, mut request: ApprovalRequest) -> Approval {
        request
            .parent_call_id
            .get_or_insert_with(|| self.parent.clone());
        self.inner.approve(request).await
    }
}
