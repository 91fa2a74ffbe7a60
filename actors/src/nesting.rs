//! Batches nested under a running call (SPEC §15), and the services every
//! call of a batch receives.
//!
//! A nested batch's scope is a child of the opening call's scope, so
//! cancelling the parent (or anything above it) reaches every descendant,
//! while the nested batch failing or being cancelled never touches the
//! parent. Permission requests of nested calls go to the top-level host (the
//! approver service is inherited), and context changes stay inside.

use std::sync::Arc;

use baton_engine::extensions::Extensions;
use baton_engine::nesting::{
    NestedBatch, NestedBatches, NestedEvent, NestedOptions, NestingError, NestingService,
};
use baton_engine::pipeline::ApproverService;
use baton_engine::{Pipeline, ToolContext, ToolUse};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::approver::HostApprover;
use crate::coordinator::state::BatchSpec;
use crate::event::{Event, EventSink};
use crate::handle::BatchHandle;
use crate::quiescence::Quiescence;
use crate::runtime::{spawn_batch, RuntimeInner};

/// The services of one batch's calls: the host's, the approver (top level),
/// and a nesting service one level deeper than this batch.
pub(crate) fn services_for(spec: &BatchSpec) -> Extensions {
    let mut services = spec.services.clone();
    if spec.depth == 0 && spec.runtime.config.host_approvals {
        services = services.with(ApproverService(Arc::new(HostApprover::new(
            spec.sink.clone(),
        ))));
    }
    services.with(NestingService(Arc::new(Nesting {
        runtime: spec.runtime.clone(),
        pipeline: spec.pipeline.clone(),
        depth: spec.depth,
    })))
}

struct Nesting {
    runtime: Arc<RuntimeInner>,
    pipeline: Arc<Pipeline>,
    /// Depth of the batch whose calls use this service.
    depth: usize,
}

#[baton_engine::async_trait]
impl NestedBatches for Nesting {
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
            services: parent.services.clone(),
            depth: self.depth + 1,
            persist_context: false,
            quiet: guard,
            intake: crate::intake::Intake::new(),
        };
        let handle = spawn_batch(spec, quiet)
            .await
            .map_err(|e| NestingError::Closed(e.to_string()))?;
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
            .map_err(|e| NestingError::Closed(e.to_string()))
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
                Event::Result { result, .. } => return Some(NestedEvent::Result(result)),
                Event::Done(_) => return None,
                // Approvals and notifications go to the top-level host.
                Event::PermissionRequest(_) | Event::Notification(_) => {}
            }
        }
    }
}
