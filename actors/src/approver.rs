//! Permission requests as host events.
//!
//! An `ask` decision becomes a [`Event::PermissionRequest`] on the batch's
//! stream and the call waits for the host's answer. If the batch is
//! cancelled meanwhile, or the host drops the request, the call is denied:
//! a call must never wait forever for a host that is gone.

use std::collections::HashMap;
use std::sync::Arc;

use baton_engine::{Approval, ApprovalRequest, Approver, CancelScope};
use parking_lot::Mutex;

use crate::event::{Event, EventSink, PermissionPrompt};

/// The scopes of running calls by id, so a pending question is dropped as
/// soon as its own call is stopped (a new-message interrupt stops single
/// calls, not the batch). Coordinators, nested ones included, register
/// their calls here while they run.
#[derive(Clone, Default)]
pub(crate) struct CallScopes(Arc<Mutex<HashMap<Arc<str>, CancelScope>>>);

impl CallScopes {
    pub fn insert(&self, id: Arc<str>, scope: CancelScope) {
        self.0.lock().insert(id, scope);
    }

    pub fn remove(&self, id: &str) {
        self.0.lock().remove(id);
    }

    fn get(&self, id: &str) -> Option<CancelScope> {
        self.0.lock().get(id).cloned()
    }
}

pub(crate) struct HostApprover {
    sink: EventSink,
    batch: CancelScope,
    calls: CallScopes,
}

impl HostApprover {
    pub fn new(sink: EventSink, batch: CancelScope, calls: CallScopes) -> Self {
        HostApprover { sink, batch, calls }
    }
}

#[baton_engine::async_trait]
impl Approver for HostApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let scope = self
            .calls
            .get(&request.call_id)
            .unwrap_or_else(|| self.batch.clone());
        let (prompt, answer) = PermissionPrompt::new(request);
        self.sink.send(Event::PermissionRequest(prompt));
        tokio::select! {
            answer = answer => answer.unwrap_or(Approval::Deny {
                reason: Some("the host dropped the permission request without answering".into()),
            }),
            _ = scope.cancelled() => Approval::Deny {
                reason: Some("the call was stopped while waiting for approval".into()),
            },
        }
    }
}
