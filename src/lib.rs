//! Baton: executes the tool calls of LLM agents.
//!
//! This facade is what hosts use. An [`Engine`] (one per session, `Send +
//! Sync + Clone`, on the host's tokio runtime) opens a [`Batch`] per
//! assistant message; the host adds calls as they stream, ends the message,
//! reads an ordered stream of [`Event`]s, may interrupt, and can await
//! quiescence. [`blocking`] offers the same to hosts without an async
//! runtime, through crossbeam channels.
//!
//! The engine itself lives in [`baton_engine`] (tools, pool, pipeline) and
//! the scheduling in [`baton_actors`]; both are re-exported.
//!
//! ```no_run
//! use std::sync::Arc;
//! use baton::{Engine, Event, ToolUse};
//! use baton::engine::settings::Settings;
//! use serde_json::json;
//!
//! # async fn host() -> Result<(), Box<dyn std::error::Error>> {
//! let project = std::path::Path::new("/path/to/project");
//! // The user's Claude Code settings: rules, mode, hooks. Without a policy
//! // the engine still applies the safe default (read-only inside the
//! // workspace runs, everything else asks).
//! let settings = Settings::load(project, None)?;
//! let engine = Engine::builder(baton::BuiltinConfig::default().pool(&*settings.policy)?)
//!     .cwd(project)
//!     .policy(settings.policy.clone())
//!     .hooks(settings.hooks.clone())
//!     .permission_mode(settings.mode)
//!     .host_approvals(true) // ask decisions arrive as PermissionRequest events
//!     .build()?;
//! let mut batch = engine.open_batch().await?;
//! // Add calls as the model streams them; they start as soon as allowed.
//! batch.add(ToolUse::new("toolu_1", "Glob", json!({"pattern": "**/*.rs"})))?;
//! batch.add(ToolUse::new("toolu_2", "Bash", json!({"command": "cargo test"})))?;
//! batch.end();
//! let mut results = Vec::new();
//! while let Some(event) = batch.next_event().await {
//!     match event {
//!         Event::Progress { call_id, progress, .. } => println!("{call_id}: {}", progress.message),
//!         Event::PermissionRequest(prompt) => {
//!             // Show the user what is asked; here, everything is refused.
//!             prompt.answer(baton::Approval::Deny { reason: None });
//!         }
//!         Event::Result { result, .. } => results.push(*result), // in call order
//!         Event::Done(_) => break,
//!         // Lifecycle (queued, started, finished), session notifications,
//!         // and kinds of event added later.
//!         _ => {}
//!     }
//! }
//! let user_message = baton::engine::wire::anthropic::user_message(results.iter());
//! # let _ = user_message;
//! batch.quiescent().await; // every call answered, every process gone
//! # Ok(())
//! # }
//! ```

pub mod assembly;
pub mod blocking;
mod builder;
pub mod host;
pub mod journal_text;
pub mod jsonl;
pub mod jsonl_direct;
mod mcp_elicit;
pub mod mcp_host;
pub mod mcp_server;
pub mod metrics;
pub mod remote;
pub mod session_hooks;
pub mod session_state;
pub mod settings;
mod tasks;
mod timestamp;
pub mod tool_changes;
mod tool_search;
pub mod tool_set;
pub mod transfer;

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures::Stream;
use tokio::sync::mpsc::UnboundedReceiver;

pub use baton_actors as actors;
pub use baton_actors::{
    BatchError, BatchHandle, BatchSummary, CallEvent, CallState, Event, EventSink, InterruptKind,
    PermissionPrompt, RuntimeConfig, SiblingPolicy,
};
pub use baton_engine as engine;
pub use baton_engine::{Approval, CallResult, Notification, Outcome, ToolUse, Unasked};
/// The MCP client: configured MCP servers as tools ([`baton_mcp`]).
pub use baton_mcp as mcp;
/// The built-in tools, their limits, agents and skills, as a list of tools
/// or a pool ([`baton_tools::BuiltinConfig`]).
pub use baton_tools::BuiltinConfig;
pub use builder::{BuildError, EngineBuilder};
pub use tasks::{OutputTail, TaskError, TaskInfo, TAIL_BYTES};

/// A batch's results in call order and its summary, gathered from its
/// events (what `finish` returns; other events are dropped).
#[derive(Default)]
pub(crate) struct Gathered {
    results: Vec<CallResult>,
    summary: BatchSummary,
}

impl Gathered {
    /// Takes one event; true once it was the last (`Done`).
    pub(crate) fn take(&mut self, event: Event) -> bool {
        match event {
            Event::Result { result, .. } => self.results.push(*result),
            Event::Done(summary) => {
                self.summary = *summary;
                return true;
            }
            _ => {}
        }
        false
    }

    pub(crate) fn into_parts(self) -> (Vec<CallResult>, BatchSummary) {
        (self.results, self.summary)
    }
}

/// One session's engine. Clones share the session, its context and tools.
#[derive(Clone, Debug)]
pub struct Engine {
    runtime: baton_actors::Runtime,
}

/// The longest [`Engine::shutdown`] lets the session's cleanups wait for
/// what they stopped (the shell tools' own bounds are shorter).
pub const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Engine {
    /// Starts building an engine over `pool`.
    pub fn builder(pool: baton_engine::ToolPool) -> EngineBuilder {
        EngineBuilder::new(pool)
    }

    pub(crate) fn from_runtime(runtime: baton_actors::Runtime) -> Self {
        Engine { runtime }
    }

    /// The actor runtime underneath.
    pub fn runtime(&self) -> &baton_actors::Runtime {
        &self.runtime
    }

    /// Opens a batch for one assistant message.
    pub async fn open_batch(&self) -> Result<Batch, BatchError> {
        let (sink, events) = EventSink::tokio();
        let handle = self.runtime.open_batch(sink).await?;
        Ok(self.batch(handle, events))
    }

    fn batch(&self, handle: BatchHandle, events: UnboundedReceiver<Event>) -> Batch {
        Batch {
            handle,
            events,
            done: false,
            engine: self.clone(),
            calls: Default::default(),
        }
    }

    /// Opens a batch under a turn scope of the host's (see
    /// [`baton_actors::Runtime::open_batch_under`]).
    pub async fn open_batch_under(
        &self,
        turn: &baton_engine::CancelScope,
    ) -> Result<Batch, BatchError> {
        let (sink, events) = EventSink::tokio();
        let handle = self.runtime.open_batch_under(sink, turn).await?;
        Ok(self.batch(handle, events))
    }

    /// Sends the named calls, where they are foreground `Bash` commands
    /// still running, to the background: each answers at once that its
    /// command goes on as a background task (with its task id and output
    /// file), and the command keeps running until it ends, `TaskStop`, its
    /// background time limit or the end of the session. Returns the ids
    /// that were sent; other calls are left alone.
    pub fn send_to_background(&self, call_ids: &[String]) -> Vec<String> {
        baton_tools::bash::send_to_background(self.runtime.session(), call_ids)
    }

    /// Session notifications (a background task ended) as events, from now on.
    pub fn notifications(&self) -> NotificationStream {
        NotificationStream {
            inner: tokio_stream_like(self.runtime.session().subscribe()),
        }
    }

    /// Stops every call of every batch of this engine, and everything its
    /// session's tools keep running (background shells and their leftover
    /// process groups, interactive sessions, background agents, monitors:
    /// whatever registered in the session's cleanups,
    /// [`baton_engine::Session::cleanups`]). Every one is asked to stop
    /// before this returns; inside a tokio runtime, the rest of their stop
    /// (grace periods, waiting for the ends) goes on in a task for at most
    /// [`SHUTDOWN_WAIT`].
    pub fn shutdown(&self) {
        self.runtime.shutdown();
        // Hooks too: a hanging one must not hold the shutdown.
        self.runtime
            .pipeline()
            .hooks()
            .stop_running(baton_engine::CancelReason::Shutdown);
        self.begin_stopping_mcp_servers();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                let waiting = self
                    .runtime
                    .session()
                    .cleanups()
                    .stop_all(tokio::time::sleep(SHUTDOWN_WAIT));
                rt.spawn(waiting);
            }
            // Nothing to wait on: dropping the waiting kills what is left.
            Err(_) => drop(
                self.runtime
                    .session()
                    .cleanups()
                    .stop_all(std::future::ready(())),
            ),
        }
    }
}

/// One assistant message being executed.
#[derive(Debug)]
pub struct Batch {
    handle: BatchHandle,
    events: UnboundedReceiver<Event>,
    done: bool,
    engine: Engine,
    /// Ids of the calls added, for [`Batch::send_to_background`].
    calls: std::sync::Mutex<Vec<String>>,
}

impl Batch {
    /// Adds a call as it streams in.
    pub fn add(&self, call: ToolUse) -> Result<(), BatchError> {
        let id = call.id.clone();
        self.handle.add(call)?;
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(id);
        Ok(())
    }

    /// Adds a call with the host's own deadline for it (see
    /// [`BatchHandle::add_with_deadline`]).
    pub fn add_with_deadline(
        &self,
        call: ToolUse,
        deadline: std::time::Duration,
    ) -> Result<(), BatchError> {
        let id = call.id.clone();
        self.handle.add_with_deadline(call, deadline)?;
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(id);
        Ok(())
    }

    /// Cancels the one call `id`; its siblings run on (see
    /// [`BatchHandle::cancel_call`]).
    pub fn cancel_call(&self, id: &str) {
        self.handle.cancel_call(id)
    }

    /// Sends this batch's running foreground `Bash` calls to the background
    /// (see [`Engine::send_to_background`]): the one named `call_id`, or
    /// all of them. Returns the ids that were sent.
    pub fn send_to_background(&self, call_id: Option<&str>) -> Vec<String> {
        let ids: Vec<String> = self
            .calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|id| call_id.is_none_or(|wanted| wanted == id.as_str()))
            .cloned()
            .collect();
        self.engine.send_to_background(&ids)
    }

    /// Marks the end of the message.
    pub fn end(&self) {
        self.handle.end()
    }

    /// Interrupts the batch (see [`BatchHandle::interrupt`]).
    pub fn interrupt(&self, kind: InterruptKind) {
        self.handle.interrupt(kind)
    }

    /// The next event; `None` after [`Event::Done`].
    pub async fn next_event(&mut self) -> Option<Event> {
        if self.done {
            return None;
        }
        let event = self.events.recv().await;
        self.done = matches!(event, Some(Event::Done(_)) | None);
        event
    }

    /// Resolves when every call has its result and every invocation stopped.
    pub async fn quiescent(&self) {
        self.handle.quiescent().await
    }

    /// The control handle, to feed and interrupt the batch from elsewhere.
    pub fn handle(&self) -> &BatchHandle {
        &self.handle
    }

    /// Splits the control handle from the event stream, so one task can
    /// feed and interrupt while another reads.
    pub fn split(self) -> (BatchHandle, EventStream) {
        (
            self.handle,
            EventStream {
                rx: self.events,
                done: self.done,
            },
        )
    }

    /// Ends the batch and returns its results in order, with the summary.
    /// Other events are dropped.
    pub async fn finish(mut self) -> (Vec<CallResult>, BatchSummary) {
        self.end();
        let mut gathered = Gathered::default();
        while let Some(event) = self.next_event().await {
            if gathered.take(event) {
                break;
            }
        }
        gathered.into_parts()
    }
}

/// A batch's events as a [`Stream`], in order of emission. It ends after
/// [`Event::Done`] (a background task a tool left running may still hold a
/// progress sink; what it sends after the end is not part of the batch).
#[derive(Debug)]
pub struct EventStream {
    rx: UnboundedReceiver<Event>,
    done: bool,
}

impl Stream for EventStream {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Event>> {
        if self.done {
            return Poll::Ready(None);
        }
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(event) = &polled {
            self.done = matches!(event, Some(Event::Done(_)) | None);
        }
        polled
    }
}

/// Session notifications as [`Event::Notification`]s.
pub struct NotificationStream {
    inner: Pin<Box<dyn Stream<Item = Event> + Send>>,
}

// Not derived: the stream inside is a trait object.
baton_engine::debug_fields! { NotificationStream { .. } }

impl Stream for NotificationStream {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Event>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// A broadcast receiver as a stream; lagging just skips what was missed.
fn tokio_stream_like(
    rx: tokio::sync::broadcast::Receiver<Notification>,
) -> Pin<Box<dyn Stream<Item = Event> + Send>> {
    Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(n) => return Some((Event::Notification(n), rx)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    }))
}
