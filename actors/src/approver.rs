//! Permission requests as host events.
//!
//! An `ask` decision becomes a [`Event::PermissionRequest`] on the batch's
//! stream and the call waits for the host's answer. If the batch is
//! cancelled meanwhile, or the host drops the request, the call is denied:
//! a call must never wait forever for a host that is gone.

use baton_engine::{Approval, ApprovalRequest, Approver, CancelScope};

use crate::event::{Event, EventSink, PermissionPrompt};

pub(crate) struct HostApprover {
    sink: EventSink,
    batch: CancelScope,
}

impl HostApprover {
    pub fn new(sink: EventSink, batch: CancelScope) -> Self {
        HostApprover { sink, batch }
    }
}

#[baton_engine::async_trait]
impl Approver for HostApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let (prompt, answer) = PermissionPrompt::new(request);
        self.sink.send(Event::PermissionRequest(prompt));
        tokio::select! {
            answer = answer => answer.unwrap_or(Approval::Deny {
                reason: Some("the host dropped the permission request without answering".into()),
            }),
            _ = self.batch.cancelled() => Approval::Deny {
                reason: Some("the batch was stopped while waiting for approval".into()),
            },
        }
    }
}
