//! Batches nested under a running call (SPEC §15), and the services every
//! call of a batch receives.
//!
//! A nested batch's scope is a child of the opening call's scope, so
//! cancelling the parent (or anything above it) reaches every descendant,
//! while the nested batch failing or being cancelled never touches the
//! parent. Permission requests of nested calls go to the top-level host (the
//! approver service is inherited), and context changes stay inside.

use std::sync::Arc;

use baton_engine::deferred::PoolService;
use baton_engine::extensions::Extensions;
use baton_engine::nesting::{
    NestedBatch, NestedBatches, NestedEvent, NestedOptions, NestingError, NestingService,
};
use baton_engine::pipeline::ApproverService;
use baton_engine::{Pipeline, ToolContext, ToolUse};
use parking_lot::Mutex;
use ractor::{ActorRef, ActorStatus};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::InterruptKind;
use crate::coordinator::CoordMsg;

use crate::approver::{HostApprover, NestedApprover};
use crate::coordinator::state::BatchSpec;
use crate::event::{Event, EventSink};
use crate::handle::BatchHandle;
use crate::intake::Mailbox;
use crate::quiescence::Quiescence;
use crate::runtime::{spawn_batch, RuntimeInner};

/// The nested batches opened under a batch's calls, by opening call, so the
/// batch can pass a new-message interrupt down to the subtrees of calls
/// that keep running through it.
///
/// Registering a child and passing an interrupt down take the same lock,
/// and an interrupted call is remembered: a batch that registers after the
/// interrupt went by learns of it at registration instead of missing it.
#[derive(Default)]
pub(crate) struct Children(Mutex<ChildrenInner>);

#[derive(Default)]
pub(crate) struct ChildrenInner {
    open: Vec<(String, Mailbox)>,
    /// Calls that a new-message interrupt reached while they ran.
    interrupted: Vec<String>,
}

impl Children {
    /// Records that a new-message interrupt reached `call_id` and returns
    /// the coordinators of its nested batches that are still alive.
    pub(crate) fn interrupt(&self, call_id: &str) -> Vec<Mailbox> {
        let mut inner = self.0.lock();
        if !inner.interrupted.iter().any(|id| id == call_id) {
            inner.interrupted.push(call_id.to_string());
        }
        inner.open.retain(|(_, mailbox)| {
            !matches!(
                mailbox.actor().get_status(),
                ActorStatus::Stopping | ActorStatus::Stopped
            )
        });
        inner
            .open
            .iter()
            .filter(|(id, _)| id == call_id)
            .map(|(_, mailbox)| mailbox.clone())
            .collect()
    }

    /// Records a nested batch of `call_id`; true when a new-message
    /// interrupt already reached that call, so the caller passes it on.
    pub(crate) fn register(&self, call_id: &str, mailbox: Mailbox) -> bool {
        let mut inner = self.0.lock();
        inner.open.push((call_id.to_string(), mailbox));
        inner.interrupted.iter().any(|id| id == call_id)
    }

    /// Forgets the nested batches of a call that finished.
    pub(crate) fn forget(&self, call_id: &str) {
        let mut inner = self.0.lock();
        if !inner.open.is_empty() {
            inner.open.retain(|(id, _)| id != call_id);
        }
        if !inner.interrupted.is_empty() {
            inner.interrupted.retain(|id| id != call_id);
        }
    }
}

/// The services of one batch's calls: the host's, the approver (top level),
/// the batch's pool (for ToolSearch),
/// and a nesting service one level deeper than this batch; and the record of
/// nested batches that service opens.
pub(crate) fn services_for(
    spec: &BatchSpec,
    myself: &ActorRef<CoordMsg>,
) -> (Extensions, Arc<Children>) {
    let mut services = spec.services.clone();
    if spec.depth == 0 && spec.runtime.config.host_approvals {
        services = services.with(ApproverService(Arc::new(HostApprover::new(
            spec.sink.clone(),
            Mailbox::new(myself.clone(), spec.intake.clone()),
        ))));
    }
    let children = Arc::new(Children::default());
    let services = services.with(PoolService(spec.pipeline.pool().clone()));
    let services = services.with(NestingService(Arc::new(Nesting {
        runtime: spec.runtime.clone(),
        pipeline: spec.pipeline.clone(),
        depth: spec.depth,
        children: children.clone(),
    })));
    (services, children)
}

struct Nesting {
    runtime: Arc<RuntimeInner>,
    pipeline: Arc<Pipeline>,
    /// Depth of the batch whose calls use this service.
    depth: usize,
    children: Arc<Children>,
}

#[baton_engine::async_trait]
impl NestedBatches for Nesting {
    fn pool(&self) -> Option<baton_engine::ToolPool> {
        Some(self.pipeline.pool().clone())
    }

    async fn open(
        &self,
        parent: &ToolContext,
        options: NestedOptions,
    ) -> Result<Box<dyn NestedBatch>, NestingError> {
        let max = self.runtime.config.max_nesting_depth;
        if self.depth + 1 > max {
            return Err(NestingError::TooDeep { max });
        }
        if parent.cancel.is_cancelled() {
            return Err(NestingError::ParentCancelled);
        }
        let slot = match &self.runtime.nested_slots {
            Some(slots) => tokio::select! {
                permit = slots.clone().acquire_owned() => Some(permit.map_err(|_| {
                    NestingError::Closed("the runtime no longer runs nested batches".into())
                })?),
                _ = parent.cancel.cancelled() => return Err(NestingError::ParentCancelled),
            },
            None => None,
        };
        let pipeline = match options.pool {
            Some(pool) => Arc::new((*self.pipeline).clone().with_pool(pool)),
            None => self.pipeline.clone(),
        };
        let (sink, events) = EventSink::tokio();
        let (quiet, guard) = Quiescence::new();
        let spec = BatchSpec {
            runtime: self.runtime.clone(),
            pipeline,
            context: options.context.unwrap_or_else(|| parent.context.clone()),
            scope: parent.cancel.child(),
            sink,
            services: NestedApprover::wrap(&parent.services, &parent.call_id),
            depth: self.depth + 1,
            span: crate::trace::batch_span(self.depth + 1, Some(&parent.call_id)),
            persist_context: false,
            quiet: guard,
            intake: crate::intake::Intake::new(),
        };
        let handle = spawn_batch(spec, quiet)
            .await
            .map_err(|e| NestingError::Runtime(Arc::new(e)))?;
        if let Some(pause) = &self.runtime.before_nested_register {
            pause().await;
        }
        if self
            .children
            .register(&parent.call_id, handle.mailbox().clone())
        {
            handle.interrupt(InterruptKind::NewMessage);
        }
        Ok(Box::new(NestedHandle {
            handle,
            events,
            _slot: slot,
        }))
    }
}

struct NestedHandle {
    handle: BatchHandle,
    events: UnboundedReceiver<Event>,
    /// Held while the nested batch is open (when nesting is limited).
    _slot: Option<tokio::sync::OwnedSemaphorePermit>,
}

#[baton_engine::async_trait]
impl NestedBatch for NestedHandle {
    fn add(&mut self, call: ToolUse) -> Result<(), NestingError> {
        self.handle
            .add(call)
            .map_err(|e| NestingError::Runtime(Arc::new(e)))
    }

    fn end(&mut self) {
        self.handle.end();
    }

    async fn next_event(&mut self) -> Option<NestedEvent> {
        loop {
            match self.events.recv().await? {
                Event::Progress {
                    call_id, progress, ..
                } => {
                    return Some(NestedEvent::Progress {
                        call_id: call_id.to_string(),
                        progress,
                    })
                }
                Event::Result { result, .. } => return Some(NestedEvent::Result(*result)),
                Event::Done(_) => return None,
                // Approvals and notifications go to the top-level host.
                Event::PermissionRequest(_) | Event::Notification(_) | Event::Call(_) => {}
            }
        }
    }
}
