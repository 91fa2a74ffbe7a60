//! The runtime: what every batch of a session shares, and the door to open
//! batches.
//!
//! It runs on the host's tokio runtime (ractor spawns onto the current one)
//! and is cheap to clone. Context changes of top-level batches are kept here
//! so the next message of the session sees them (SPEC §6).

use std::sync::Arc;

use baton_engine::extensions::Extensions;
use baton_engine::{CancelReason, CancelScope, Context, Pipeline, Session, ToolUse};
use parking_lot::Mutex;
use ractor::Actor;

use crate::config::RuntimeConfig;
use crate::coordinator::state::BatchSpec;
use crate::coordinator::Coordinator;
use crate::event::EventSink;
use crate::handle::{BatchError, BatchHandle};
use crate::intake::Intake;
use crate::invocation::InjectedFault;
use crate::quiescence::Quiescence;

/// Chooses a fault to inject per call (tests only).
#[doc(hidden)]
pub type FaultHook = Arc<dyn Fn(&ToolUse) -> InjectedFault + Send + Sync>;

/// Runs between spawning a nested batch and registering it with its parent
/// (tests only: forces the interleaving of an interrupt with registration).
#[doc(hidden)]
pub(crate) type PauseHook = Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

pub(crate) struct RuntimeInner {
    /// The pipeline the next batch takes; a batch keeps the one it opened
    /// with, so replacing the pool never changes a running batch.
    pub pipeline: parking_lot::RwLock<Arc<Pipeline>>,
    pub config: RuntimeConfig,
    pub session: Arc<Session>,
    pub context: Mutex<Context>,
    pub root: CancelScope,
    pub services: Extensions,
    pub fault_hook: Option<FaultHook>,
    pub before_nested_register: Option<PauseHook>,
    /// Slots for running nested batches, when they are limited.
    pub nested_slots: Option<Arc<tokio::sync::Semaphore>>,
}

/// A session's actor runtime. Clones share everything.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

baton_engine::debug_fields! {
    Runtime as this { config: this.inner.config, session: this.inner.session }
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    pipeline: Pipeline,
    session: Arc<Session>,
    context: Context,
    config: RuntimeConfig,
    services: Extensions,
    fault_hook: Option<FaultHook>,
    before_nested_register: Option<PauseHook>,
}

// Not derived: the test hooks are closures; whether they are set is what counts.
baton_engine::debug_fields! {
    RuntimeBuilder as this {
        pipeline, session, context, config, services, fault_hook: this.fault_hook.is_some(),
        before_nested_register: this.before_nested_register.is_some()
    }
}

impl RuntimeBuilder {
    /// The settings every batch of this runtime uses.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// Services offered to every call (the host's own, e.g. a subagent
    /// runner), besides those the runtime adds.
    pub fn services(mut self, services: Extensions) -> Self {
        self.services = services;
        self
    }

    #[doc(hidden)]
    pub fn fault_hook(mut self, hook: FaultHook) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    #[doc(hidden)]
    pub fn before_nested_register(mut self, hook: PauseHook) -> Self {
        self.before_nested_register = Some(hook);
        self
    }

    /// The runtime, ready to open batches.
    pub fn build(self) -> Runtime {
        Runtime {
            inner: Arc::new(RuntimeInner {
                pipeline: parking_lot::RwLock::new(Arc::new(self.pipeline)),
                session: self.session,
                context: Mutex::new(self.context),
                root: CancelScope::new(),
                nested_slots: self
                    .config
                    .max_running_nested
                    .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1)))),
                config: self.config,
                services: self.services,
                fault_hook: self.fault_hook,
                before_nested_register: self.before_nested_register,
            }),
        }
    }
}

impl Runtime {
    /// A builder with the configuration from the environment
    /// ([`RuntimeConfig::from_env`]).
    pub fn builder(pipeline: Pipeline, session: Arc<Session>, context: Context) -> RuntimeBuilder {
        RuntimeBuilder {
            pipeline,
            session,
            context,
            config: RuntimeConfig::from_env(),
            services: Extensions::default(),
            fault_hook: None,
            before_nested_register: None,
        }
    }

    /// Opens a batch (one assistant message) whose events go to `sink`.
    /// Must be called inside a tokio runtime.
    pub async fn open_batch(&self, sink: EventSink) -> Result<BatchHandle, BatchError> {
        self.open_batch_under(sink, &self.inner.root).await
    }

    /// Opens a batch under `parent` (a turn scope): cancelling it cancels
    /// the batch. `parent` should descend from [`Self::root_scope`] so that
    /// shutdown reaches it.
    pub async fn open_batch_under(
        &self,
        sink: EventSink,
        parent: &CancelScope,
    ) -> Result<BatchHandle, BatchError> {
        let (quiet, guard) = Quiescence::new();
        let spec = BatchSpec {
            runtime: self.inner.clone(),
            pipeline: self.pipeline(),
            context: self.inner.context.lock().clone(),
            scope: parent.child(),
            sink,
            services: self.inner.services.clone(),
            depth: 0,
            span: crate::trace::batch_span(0, None),
            persist_context: true,
            quiet: guard,
            intake: Intake::new(),
        };
        spawn_batch(spec, quiet).await
    }

    /// The scope every batch hangs under; a host's turn scopes should be
    /// children of it.
    pub fn root_scope(&self) -> &CancelScope {
        &self.inner.root
    }

    /// The context the next batch starts from.
    pub fn context(&self) -> Context {
        self.inner.context.lock().clone()
    }

    /// The session the runtime's batches belong to (working directory,
    /// slots shared by the tools).
    pub fn session(&self) -> &Arc<Session> {
        &self.inner.session
    }

    /// The pipeline (pool, policy, hooks) the next batch opens with.
    pub fn pipeline(&self) -> Arc<Pipeline> {
        self.inner.pipeline.read().clone()
    }

    /// Offers `pool` from the next batch on (an MCP server's tool list
    /// changed between messages); running batches keep theirs.
    pub fn replace_pool(&self, pool: baton_engine::ToolPool) {
        let mut current = self.inner.pipeline.write();
        let next = Pipeline::clone(&current).with_pool(pool);
        *current = Arc::new(next);
    }

    /// The settings the runtime was built with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// Stops every running call of every batch; queued calls never start.
    pub fn shutdown(&self) {
        self.inner.root.cancel(CancelReason::Shutdown);
    }
}

pub(crate) async fn spawn_batch(
    spec: BatchSpec,
    quiet: Arc<Quiescence>,
) -> Result<BatchHandle, BatchError> {
    let scope = spec.scope.clone();
    let intake = spec.intake.clone();
    let (actor, _) = Actor::spawn(None, Coordinator, spec)
        .await
        .map_err(|e| BatchError::Spawn(std::sync::Arc::new(e)))?;
    Ok(BatchHandle::new(actor, intake, quiet, scope))
}
