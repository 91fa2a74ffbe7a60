//! The host API for programs without an async runtime.
//!
//! A [`BlockingEngine`] owns a small tokio runtime on which the actors run;
//! the host talks to batches through plain method calls and reads events
//! from a crossbeam channel, so it can `select!` them with its own channels.

use std::time::Duration;

use baton_actors::{BatchError, BatchHandle, Event, EventSink, InterruptKind};
use baton_engine::{CallResult, ToolUse};
use crossbeam_channel::Receiver;

use crate::{BatchSummary, Engine};

/// An [`Engine`] for hosts without an async runtime: owns a tokio runtime
/// and drives batches from plain threads.
#[derive(Debug)]
pub struct BlockingEngine {
    engine: Engine,
    rt: tokio::runtime::Runtime,
}

impl BlockingEngine {
    /// Builds a runtime with `threads` workers (at least one) for `builder`.
    /// An engine that cannot be built ([`crate::BuildError`]) is an error of
    /// kind `Other`.
    pub fn new(builder: crate::EngineBuilder, threads: usize) -> std::io::Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .enable_all()
            .build()?;
        // The engine is built inside the runtime: nothing in it needs one yet,
        // but tools may capture the current handle when constructed.
        let engine = {
            let _guard = rt.enter();
            builder.build().map_err(std::io::Error::other)?
        };
        Ok(BlockingEngine { engine, rt })
    }

    /// The engine inside, for what the blocking API does not wrap.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Opens a batch. Must not be called from inside an async runtime
    /// (use [`Engine::open_batch`] there); doing so returns an error.
    pub fn open_batch(&self) -> Result<BlockingBatch, BatchError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(BatchError::InsideRuntime);
        }
        let (sink, events) = EventSink::blocking();
        let runtime = self.engine.runtime().clone();
        let handle = self
            .rt
            .block_on(async move { runtime.open_batch(sink).await })?;
        Ok(BlockingBatch {
            handle,
            events,
            done: Default::default(),
        })
    }
}

/// One assistant message, driven from a plain thread.
#[derive(Debug)]
pub struct BlockingBatch {
    handle: BatchHandle,
    events: Receiver<Event>,
    done: std::sync::atomic::AtomicBool,
}

impl BlockingBatch {
    /// Hands a call to the batch (see [`BatchHandle::add`]).
    pub fn add(&self, call: ToolUse) -> Result<(), BatchError> {
        self.handle.add(call)
    }

    /// The message is complete: no more calls (see [`BatchHandle::end`]).
    pub fn end(&self) {
        self.handle.end()
    }

    /// Interrupts the batch (see [`BatchHandle::interrupt`]).
    pub fn interrupt(&self, kind: InterruptKind) {
        self.handle.interrupt(kind)
    }

    /// The event channel, for use in the host's own `select!` (it does not
    /// stop at [`Event::Done`] by itself: stop reading there).
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// Waits for the next event; `None` once the batch is over.
    pub fn recv(&self) -> Option<Event> {
        if self.done.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        self.seen(self.events.recv().ok())
    }

    /// Like [`Self::recv`], giving up after `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Event> {
        if self.done.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        self.seen(self.events.recv_timeout(timeout).ok())
    }

    fn seen(&self, event: Option<Event>) -> Option<Event> {
        if matches!(event, Some(Event::Done(_))) {
            self.done.store(true, std::sync::atomic::Ordering::Release);
        }
        event
    }

    /// Blocks until every call has its result and every invocation stopped.
    pub fn wait_quiescent(&self) {
        self.handle.wait_quiescent()
    }

    /// Ends the batch and returns its results in order, with the summary.
    pub fn finish(self) -> (Vec<CallResult>, BatchSummary) {
        self.end();
        let mut gathered = crate::Gathered::default();
        while let Some(event) = self.recv() {
            if gathered.take(event) {
                break;
            }
        }
        gathered.into_parts()
    }
}
