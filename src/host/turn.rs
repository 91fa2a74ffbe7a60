//! What one turn of the loop runs its calls in, for the main agent and for
//! a subagent alike.
//!
//! The main agent opens a batch of its own engine; a subagent opens batches
//! nested under its `Agent` call (so cancelling the parent reaches them).
//! Both feed calls while the model streams and read results in call order;
//! the loop in [`super::agent`] does not care which one it drives. The tool
//! list of each request comes from the same place for both: the session's
//! deferred-tool state (SPEC §10), so a ToolSearch result loads tools for
//! the following requests.

use std::sync::Arc;

use baton_actors::{Event, InterruptKind};
use baton_engine::nesting::{NestedBatch, NestedEvent};
use baton_engine::subagent::SubagentBatches;
use baton_engine::wire::{self, RequestTools, WireTools};
use baton_engine::{async_trait, Session, ToolPool, ToolUse};

use crate::{Batch, Engine};

/// An event of a turn's batch.
#[derive(Debug)]
pub enum TurnEvent {
    /// The main agent's batch (every event kind of the engine).
    Engine(Event),
    /// A subagent's nested batch (progress and results).
    Nested(NestedEvent),
}

/// One assistant message's calls.
#[async_trait]
pub trait TurnBatch: Send {
    /// Hands a complete call to the batch; an error says why it was refused.
    fn add(&mut self, call: ToolUse) -> Result<(), String>;
    /// No more calls will come.
    fn end(&mut self);
    /// The user interrupted: stop what runs (every call still gets its
    /// result).
    fn interrupt(&mut self);
    /// The next event; `None` once every call has its result.
    async fn next(&mut self) -> Option<TurnEvent>;
    /// Resolves when every invocation stopped.
    async fn quiescent(&mut self) {}
}

#[async_trait]
impl TurnBatch for Batch {
    fn add(&mut self, call: ToolUse) -> Result<(), String> {
        Batch::add(self, call).map_err(|e| e.to_string())
    }
    fn end(&mut self) {
        Batch::end(self)
    }
    fn interrupt(&mut self) {
        Batch::interrupt(self, InterruptKind::Cancel)
    }
    async fn next(&mut self) -> Option<TurnEvent> {
        self.next_event().await.map(TurnEvent::Engine)
    }
    async fn quiescent(&mut self) {
        Batch::quiescent(self).await
    }
}

/// A subagent's batch, nested under its Agent call.
struct Nested(Box<dyn NestedBatch>);

#[async_trait]
impl TurnBatch for Nested {
    fn add(&mut self, call: ToolUse) -> Result<(), String> {
        self.0.add(call).map_err(|e| e.to_string())
    }
    fn end(&mut self) {
        self.0.end()
    }
    fn interrupt(&mut self) {
        // The Agent call's cancel scope is the parent of this batch's: the
        // engine stops these calls when it cancels the subagent.
    }
    async fn next(&mut self) -> Option<TurnEvent> {
        self.0.next_event().await.map(TurnEvent::Nested)
    }
}

/// Where a loop opens its batches and learns which tools to send.
#[async_trait]
pub trait TurnHost: Send + Sync {
    /// Opens the batch for the next assistant message.
    async fn open(&self) -> Result<Box<dyn TurnBatch>, String>;
    /// The pool's tools in the request's format: names mapped back, strict
    /// schemas undone.
    fn wire(&self) -> Arc<WireTools>;
    /// Between turns: takes in tool lists that MCP servers changed.
    async fn refresh(&self) {}
    /// The next request's tool list as the session's deferred-tool state
    /// says (loaded tools in full; deferred ones left out or marked), each
    /// definition as the wire layer renders it (mapped names, strict
    /// schemas): send its `tools` as they are.
    fn request_tools(&self) -> RequestTools;
    /// Notifications for the model (tasks that ended, monitor events),
    /// as text, since the last call.
    fn notices(&self) -> Vec<String> {
        Vec::new()
    }
    /// The model ended its turn: `Some(reason)` continues the loop with
    /// `reason` as the next user message (a Stop hook blocked). Subagents
    /// have none: the Agent tool runs SubagentStop around them.
    async fn stop_hook(
        &self,
        _last: &str,
        _active: bool,
        _notes: &mut Vec<String>,
    ) -> Option<String> {
        None
    }
    /// The conversation grew: keep the transcript (a problem, if any).
    fn record(&self, _items: &[serde_json::Value]) -> Option<String> {
        None
    }
}

/// The main agent: batches of the engine itself.
#[derive(Debug)]
pub struct MainHost<'a> {
    engine: &'a Engine,
    /// Replaced when an MCP server changes its tools between turns.
    wire: std::sync::Mutex<Arc<WireTools>>,
    notices: super::notices::Notices,
    /// The session's transcript, when it has a path (or why it cannot be
    /// written, reported once).
    transcript: std::sync::Mutex<Option<Result<super::transcript::Transcript, String>>>,
}

impl<'a> MainHost<'a> {
    /// The host for `engine`'s main agent; `wire` is its tool list as the
    /// provider sees it.
    pub fn new(engine: &'a Engine, wire: WireTools) -> Self {
        let session = engine.runtime().session();
        let transcript = session.transcript_path().map(|path| {
            super::transcript::Transcript::open(path, session.id())
                .map_err(|e| format!("transcript {}: {e}", path.display()))
        });
        MainHost {
            engine,
            wire: std::sync::Mutex::new(Arc::new(wire)),
            notices: super::notices::Notices::new(session.subscribe()),
            transcript: std::sync::Mutex::new(transcript),
        }
    }
}

#[async_trait]
impl TurnHost for MainHost<'_> {
    async fn open(&self) -> Result<Box<dyn TurnBatch>, String> {
        let batch = self.engine.open_batch().await.map_err(|e| e.to_string())?;
        Ok(Box::new(batch))
    }
    fn wire(&self) -> Arc<WireTools> {
        self.wire.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    async fn refresh(&self) {
        if self.engine.refresh_tools().await.is_some() {
            let format = self.wire().format();
            let fresh = Arc::new(WireTools::new(&self.engine.pool(), format));
            *self.wire.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
        }
    }
    fn request_tools(&self) -> RequestTools {
        self.engine.request_tools_in_set(self.wire().format())
    }
    fn notices(&self) -> Vec<String> {
        self.notices.take()
    }
    async fn stop_hook(&self, last: &str, active: bool, notes: &mut Vec<String>) -> Option<String> {
        super::loop_hooks::stop(self.engine, last, active, notes).await
    }
    fn record(&self, items: &[serde_json::Value]) -> Option<String> {
        let mut slot = self.transcript.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref()? {
            Ok(t) => {
                let cwd = self.engine.runtime().context().cwd;
                t.record(items, &cwd)
                    .err()
                    .map(|e| format!("transcript {}: {e}", t.path().display()))
            }
            // Reported once; later records do nothing.
            Err(_) => slot.take().and_then(Result::err),
        }
    }
}

/// A subagent: batches nested under its Agent call, its own (narrowed)
/// pool, the session's deferred-tool state.
#[derive(Debug)]
pub struct SubagentHost {
    /// Opens the subagent's batches under its Agent call.
    pub batches: SubagentBatches,
    /// The subagent's own pool (the parent's, narrowed by its definition).
    pub pool: ToolPool,
    /// The session the subagent shares with its parent.
    pub session: Arc<Session>,
    /// The subagent's tools in the request's format.
    pub wire: Arc<WireTools>,
    /// Messages sent to the subagent (`SendMessage`), read before each turn.
    pub inbox: Arc<baton_engine::subagent_inbox::Inbox>,
}

#[async_trait]
impl TurnHost for SubagentHost {
    fn notices(&self) -> Vec<String> {
        self.inbox.take_all().iter().map(|l| l.text()).collect()
    }
    async fn open(&self) -> Result<Box<dyn TurnBatch>, String> {
        let batch = self.batches.open().await.map_err(|e| e.to_string())?;
        Ok(Box::new(Nested(batch)))
    }
    fn wire(&self) -> Arc<WireTools> {
        self.wire.clone()
    }
    fn request_tools(&self) -> RequestTools {
        let set = self
            .session
            .slots()
            .get::<wire::ToolSet>()
            .map_or(wire::ToolSet::Claude, |s| *s);
        let format = self.wire.format();
        let tools = baton_engine::deferred::request_tools(&self.pool, &self.session, format);
        crate::tool_set::in_set(set, &self.pool, format, tools)
    }
}
