//! Permission requests as host events.
//!
//! An `ask` decision becomes a [`Event::PermissionRequest`] on the batch's
//! stream and the call waits for the host's answer. The pipeline stops
//! waiting when the call is cancelled (and then reports it as never run);
//! a host that drops the request unanswered denies the call, so a call
//! never waits forever for a host that is gone.

use baton_engine::{Approval, ApprovalRequest, Approver};

use crate::event::{Event, EventSink, PermissionPrompt};

pub(crate) struct HostApprover {
    sink: EventSink,
}

impl HostApprover {
    pub fn new(sink: EventSink) -> Self {
        HostApprover { sink }
    }
}

#[baton_engine::async_trait]
impl Approver for HostApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let call_id: std::sync::Arc<str> = request.call_id.as_str().into();
        let (prompt, answer) = PermissionPrompt::new(request);
        crate::lifecycle::send(
            &self.sink,
            None,
            &call_id,
            crate::lifecycle::CallState::WaitingApproval,
        );
        self.sink.send(Event::PermissionRequest(prompt));
        answer.await.unwrap_or(Approval::Deny {
            reason: Some("the host dropped the permission request without answering".into()),
        })
    }
}
