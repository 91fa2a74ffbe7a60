//! The state of one `baton serve` session and what each input line does.
//!
//! Interrupts and `end` apply to the latest message.

use std::collections::HashMap;

use baton::engine::deferred::Mark;
use baton::engine::wire::WireFormat;
use baton::engine::{Approval, CallResult};
use baton::{BatchHandle, Engine, Event, InterruptKind, PermissionPrompt};
use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use serde_json::{json, Value};

mod adding;
mod emit;
mod targets;

use super::output::write_line;
use super::strict::Checked;
use super::tasks::TaskLine;
use super::wire::{self, Wire};
use crate::cli::CliError;

pub(super) struct Session {
    engine: Engine,
    next_batch: u64,
    /// The message currently streaming (not yet ended).
    open: Option<u64>,
    /// The most recent message, ended or not.
    latest: Option<u64>,
    batches: HashMap<u64, Running>,
    /// Host batch ids of running batches.
    host_ids: HashMap<String, u64>,
    prompts: HashMap<u64, PermissionPrompt>,
    next_prompt: u64,
    /// The host closed its input: nobody can answer questions any more.
    input_closed: bool,
    /// A signal came during start-up: every batch is stopped as it opens.
    pub refuse_calls: bool,
    elicitor: std::sync::Arc<super::elicit::HostElicitor>,
    questions: std::sync::Arc<super::ask::HostQuestions>,
    /// The number of the input line being handled, for error lines.
    line: u64,
    /// The events of every running batch, tagged with the batch's id.
    streams: SelectAll<BoxStream<'static, (Option<u64>, Event)>>,
    wire: Wire,
    /// Subagents the host runs (lines naming an `agent_id`).
    agents: super::subagent::Agents,
    /// Prompt and agent hooks waiting for the host's model.
    pub model_hooks: super::model_hooks::ModelHooks,
    /// Host-loop events (`hook_event` lines) whose hooks are running.
    pub hook_events: super::hook_event::HookEvents,
    /// `--journal`: the session's calls go through the call journal.
    pub journal: Option<super::journal::SessionJournal>,
}

struct Running {
    handle: BatchHandle,
    /// The host's own name for the batch, echoed in every line.
    host_id: Option<String>,
    /// Results so far, for the answer in `done`.
    results: Vec<CallResult>,
    /// The format the message's calls came in (the answer's format).
    format: Option<WireFormat>,
    /// Deferred tools loaded before this message, so `done` can name the
    /// ones it loaded (the host's next request changes).
    loaded_mark: Mark,
    /// Ids of the calls added, for the `background` line.
    calls: Vec<String>,
    /// The message's native Responses items, for the answer's output types.
    native: Vec<Value>,
    /// Its journaled calls (in a session with `--journal`).
    journal: super::journal::BatchJournal,
}

impl Session {
    pub(super) fn new(engine: Engine, wire: Wire, agents: super::subagent::Agents) -> Self {
        let questions = super::ask::install(engine.runtime().session());
        Session {
            engine,
            next_batch: 1,
            open: None,
            latest: None,
            batches: HashMap::new(),
            host_ids: HashMap::new(),
            prompts: HashMap::new(),
            next_prompt: 1,
            input_closed: false,
            refuse_calls: false,
            elicitor: super::elicit::install(),
            questions,
            line: 0,
            streams: SelectAll::new(),
            wire,
            agents,
            model_hooks: Default::default(),
            hook_events: Default::default(),
            journal: None,
        }
    }

    /// No message is running.
    /// The session's engine.
    pub(super) fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(super) fn is_idle(&self) -> bool {
        self.batches.is_empty() && self.hook_events.is_idle()
    }

    pub(super) fn interrupt_all(&self, kind: InterruptKind) {
        for running in self.batches.values() {
            running.handle.interrupt(kind);
        }
    }

    /// Handles input line `number`; false when the host asked to shut down.
    pub(super) async fn handle_line(&mut self, number: u64, line: &str) -> Result<bool, CliError> {
        self.line = number;
        if line.trim().is_empty() {
            return Ok(true);
        }
        let keep = self.engine.runtime().config().max_calls_per_message;
        let cut = match crate::cli::serve::wire::cut_message_line(line, keep) {
            Some(Ok(cut)) => Some(cut),
            Some(Err(e)) => return self.error(e).map(|_| true),
            None => None,
        };
        let whole: Value;
        let msg: &Value = match &cut {
            Some(cut) => cut.head(),
            None => match serde_json::from_str(line) {
                Ok(v) => {
                    whole = v;
                    &whole
                }
                Err(e) => return self.error(format!("not JSON: {e}")).map(|_| true),
            },
        };
        let kind = msg.get("type").and_then(Value::as_str).unwrap_or("");
        if msg.get("agent_id").is_some() {
            if let Err(e) = super::strict::check_agent(kind, msg) {
                return self.error(e).map(|_| true);
            }
            if let Err(e) = self.agents.handle(msg).await {
                self.error(e)?;
            }
            return Ok(true);
        }
        let checked = match super::strict::check(kind, msg) {
            Ok(checked) => checked,
            Err(e) => return self.error(e).map(|_| true),
        };
        if self.open.is_none() && matches!(kind, "add" | "message" | "stream") {
            // Between messages: pick up MCP tool lists that changed.
            if let Some(refreshed) = self.engine.refresh_tools().await {
                for problem in refreshed.problems {
                    eprintln!("baton: mcp: {problem}");
                }
                self.wire.set_pool(self.engine.pool());
            }
        }
        // Lines parsed once: their handlers take the struct.
        let task = match checked {
            Checked::Interrupt(line) => return self.interrupt(&line).map(|_| true),
            Checked::Cancel(line) => return self.cancel(&line).map(|_| true),
            Checked::Background(line) => return self.background(&line).map(|_| true),
            Checked::Approve(line) => return self.approve(&line).map(|_| true),
            Checked::Tasks => Some(TaskLine::List),
            Checked::TaskStop(l) => Some(TaskLine::Stop { task_id: l.task_id }),
            Checked::TaskOutput(l) => Some(TaskLine::Output { task_id: l.task_id }),
            Checked::Line => None,
        };
        if let Some(task) = task {
            match super::tasks::answer(&self.engine, task).await {
                Ok(line) => write_line(&line)?,
                Err(e) => self.error(e)?,
            }
            return Ok(true);
        }
        match kind {
            "add" => {
                let Ok(host_id) = host_batch_id(msg) else {
                    return self.error("`batch` must be a string".into()).map(|_| true);
                };
                match self.wire.add_line(msg) {
                    Ok((format, call)) => {
                        if let Some(problem) = self.open_conflict(host_id.as_deref()) {
                            return self.error(problem).map(|_| true);
                        }
                        if self.ensure_open(host_id).await?.is_some() {
                            let deadline = msg.get("timeout_ms").and_then(Value::as_u64);
                            self.add_timed(format, call, deadline).await?;
                        }
                    }
                    Err(e) => self.error(e)?,
                }
            }
            "message" => {
                let Ok(host_id) = host_batch_id(msg) else {
                    return self.error("`batch` must be a string".into()).map(|_| true);
                };
                if let Some(open) = self.open {
                    let name = self.label(open);
                    return self
                        .error(format!(
                            "a message opened by `add` lines (batch {name}) is still open; send `end` \
                             before the next `message`. This line was ignored."
                        ))
                        .map(|_| true);
                }
                let parsed = self.wire.message_line(msg, cut.as_ref());
                match parsed {
                    Ok((format, calls)) => {
                        // An empty message still gets a batch and a done line.
                        if self.ensure_open(host_id).await?.is_none() {
                            return Ok(true);
                        }
                        self.keep_noted();
                        self.set_format(format);
                        self.add_all(format, calls, None).await?;
                        self.end_open();
                    }
                    Err(e) => self.error(e)?,
                }
            }
            "stream" => self.stream_line(msg).await?,
            "end" => {
                self.end_stream().await?;
                if self.open.is_none() {
                    // `end` without calls: an empty message.
                    let Ok(host_id) = host_batch_id(msg) else {
                        return self.error("`batch` must be a string".into()).map(|_| true);
                    };
                    self.ensure_open(host_id).await?;
                }
                self.end_open();
            }
            "elicitation" => {
                if let Err(e) = self.elicitor.answer(msg) {
                    self.error(e)?;
                }
            }
            "question_answer" => {
                if let Err(e) = self.questions.answer(msg) {
                    self.error(e)?;
                }
            }
            "hook_answer" => {
                if let Err(e) = self.model_hooks.answer(msg) {
                    self.error(e)?;
                }
            }
            "hook_event" => {
                if let Err(e) = self.hook_events.fire(&self.engine, msg) {
                    self.error(e)?;
                }
            }
            "tools" => match crate::cli::tool_search::tools_line(&self.engine, msg) {
                Ok(line) => write_line(&line)?,
                Err(e) => self.error(e)?,
            },
            "reset_tools" => self.engine.reset_loaded_tools(),
            "shutdown" => return Ok(false),
            other => self.error(super::strict::unknown_type(other))?,
        }
        Ok(true)
    }

    /// The open message's batch, opening one (named `host_id`) if none is
    /// open. `None` (after an error line) when the host id is taken.
    async fn ensure_open(&mut self, host_id: Option<String>) -> Result<Option<u64>, CliError> {
        if let Some(id) = self.open {
            return Ok(Some(id));
        }
        if let Some(host) = &host_id {
            if self.host_ids.contains_key(host) {
                self.error(format!(
                    "batch `{host}` is still running; give each message its own batch id. \
                     This line was ignored."
                ))?;
                return Ok(None);
            }
        }
        let batch = self
            .engine
            .open_batch()
            .await
            .map_err(|e| CliError::Failed(e.to_string()))?;
        let id = self.next_batch;
        self.next_batch += 1;
        let (handle, events) = batch.split();
        if self.refuse_calls {
            // Stopped before its calls are added: each is never started.
            handle.interrupt(InterruptKind::Cancel);
        }
        // Polled by the session loop itself (`next_batch_event`): a task
        // forwarding them through a second channel woke two threads per
        // event, a tenth of serve's CPU on a message of no-op calls.
        let journal = super::journal::BatchJournal::default();
        let tagged = move |event| (Some(id), event);
        match &self.journal {
            Some(_) => self
                .streams
                .push(journal.follow(events).map(tagged).boxed()),
            None => self.streams.push(events.map(tagged).boxed()),
        }
        self.batches.insert(
            id,
            Running {
                handle,
                host_id: host_id.clone(),
                results: Vec::new(),
                format: self.wire.fixed(),
                loaded_mark: self.engine.loaded_mark(),
                calls: Vec::new(),
                native: Vec::new(),
                journal,
            },
        );
        if let Some(host) = host_id {
            self.host_ids.insert(host, id);
        }
        self.open = Some(id);
        self.latest = Some(id);
        write_line(&json!({"type": "batch_started", "batch": self.label(id)}))?;
        Ok(Some(id))
    }

    /// Records the format of the open message's calls (the first one wins).
    fn set_format(&mut self, format: WireFormat) {
        if let Some(b) = self.open.and_then(|id| self.batches.get_mut(&id)) {
            b.format.get_or_insert(format);
        }
    }

    /// A raw stream event: calls it completes start at once; the stream's
    /// final event ends the message.
    async fn stream_line(&mut self, msg: &Value) -> Result<(), CliError> {
        let step = self.wire.stream_line(msg);
        // A stream's items belong to the batch it feeds (open, or opened now).
        match step {
            Ok(step) => {
                if self.ensure_open(None).await?.is_none() {
                    return Ok(());
                }
                self.keep_noted();
                self.set_format(step.format);
                self.add_all(step.format, step.calls, None).await?;
                if let Some(done) = step.finished {
                    write_line(&wire::stream_done_line(self.open, &done))?;
                    self.end_open();
                }
                Ok(())
            }
            Err(e) => {
                self.keep_noted();
                self.error(e)
            }
        }
    }

    /// Moves the native items the last line carried to the open batch.
    fn keep_noted(&mut self) {
        let noted = self.wire.take_noted();
        if let Some(b) = self.open.and_then(|id| self.batches.get_mut(&id)) {
            b.native.extend(noted);
        }
    }

    /// Ends a stream the host stopped feeding (`end`, end of input).
    pub(super) async fn end_stream(&mut self) -> Result<(), CliError> {
        if let Some((format, calls, done)) = self.wire.end_stream() {
            self.add_all(format, calls, None).await?;
            write_line(&wire::stream_done_line(self.open, &done))?;
        }
        Ok(())
    }

    /// No more lines will come: end the open message, and deny what would
    /// wait for an answer forever.
    pub(super) fn close_input(&mut self) {
        self.input_closed = true;
        self.elicitor.close();
        self.questions.close();
        self.agents.close();
        self.model_hooks.close();
        self.end_open();
        for (_, prompt) in self.prompts.drain() {
            prompt.answer(no_host());
        }
    }

    fn end_open(&mut self) {
        if let Some(id) = self.open.take() {
            if let Some(b) = self.batches.get(&id) {
                b.handle.end();
            }
        }
    }

    fn approve(&mut self, line: &super::strict::ApproveLine) -> Result<(), CliError> {
        let id = line.request_id;
        let Some(prompt) = self.prompts.remove(&id) else {
            return self.error(format!("no pending permission request {id}"));
        };
        let approval = match super::approve::approval(line) {
            Ok(approval) => approval,
            Err(problem) => {
                self.prompts.insert(id, prompt);
                return self.error(problem);
            }
        };
        prompt.answer(approval);
        Ok(())
    }

    fn error(&self, message: String) -> Result<(), CliError> {
        super::output::error_line(&message, Some(self.line))
    }
}

fn no_host() -> Approval {
    Approval::Unanswered {
        cause: baton::Unasked::SessionClosing,
        detail: Some("the host closed its input before answering".into()),
    }
}

/// The host's batch id on a line: absent, or a string.
fn host_batch_id(msg: &Value) -> Result<Option<String>, ()> {
    match msg.get("batch") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(()),
    }
}
