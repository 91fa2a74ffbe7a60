//! `baton serve`: a JSON-lines session for hosts in other languages.
//!
//! The protocol is documented in docs/serve-protocol.md. One line in, zero
//! or more lines out; a bad line gets an `error` line and the session goes
//! on. Several messages can follow each other in one session; context
//! changes carry over. Interrupts and `end` apply to the latest message.

use std::collections::HashMap;
use std::io::Write;

use baton::engine::wire::anthropic;
use baton::engine::{Approval, HookEvent, ToolUse};
use baton::jsonl::{event_json, summary_json};
use baton::{BatchHandle, Engine, Event, InterruptKind, PermissionPrompt};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use super::{CliError, Setup};

struct Session {
    engine: Engine,
    next_batch: u64,
    /// The message currently streaming (not yet ended).
    open: Option<u64>,
    /// The most recent message, ended or not.
    latest: Option<u64>,
    batches: HashMap<u64, Running>,
    prompts: HashMap<u64, PermissionPrompt>,
    next_prompt: u64,
    /// The host closed its input: nobody can answer questions any more.
    input_closed: bool,
    events: mpsc::UnboundedSender<(Option<u64>, Event)>,
}

struct Running {
    handle: BatchHandle,
    /// tool_result blocks so far, for the user message in `done`.
    blocks: Vec<Value>,
}

pub async fn serve(mut setup: Setup) -> Result<(), CliError> {
    let engine = setup.engine()?;
    let hooks = engine.runtime().pipeline().hooks();
    let (has_start, has_end) = (
        hooks.has_any(HookEvent::SessionStart, "startup"),
        hooks.has_any(HookEvent::SessionEnd, "other"),
    );
    if has_start {
        let outcome = engine.session_start("startup").await;
        write_line(&super::session::line(&outcome, "SessionStart"))?;
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let notes_tx = tx.clone();
    let mut notes = engine.notifications();
    tokio::spawn(async move {
        while let Some(event) = notes.next().await {
            if notes_tx.send((None, event)).is_err() {
                break;
            }
        }
    });
    let mut session = Session {
        engine,
        next_batch: 1,
        open: None,
        latest: None,
        batches: HashMap::new(),
        prompts: HashMap::new(),
        next_prompt: 1,
        input_closed: false,
        events: tx,
    };
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut input_open = true;
    let stop = super::signals::stop_requested();
    tokio::pin!(stop);
    let mut stopping = false;
    loop {
        if !input_open && session.batches.is_empty() {
            if has_end {
                let outcome = session.engine.session_end("other").await;
                write_line(&super::session::line(&outcome, "SessionEnd"))?;
            }
            return Ok(());
        }
        tokio::select! {
            line = lines.next_line(), if input_open => match line {
                Ok(Some(line)) => {
                    if !session.handle_line(&line).await? {
                        input_open = false;
                        session.close_input();
                    }
                }
                Ok(None) | Err(_) => {
                    input_open = false;
                    session.close_input();
                }
            },
            Some((batch, event)) = rx.recv() => session.emit(batch, event)?,
            _ = &mut stop, if !stopping => {
                // Stop every message's calls, report their results, exit.
                stopping = true;
                input_open = false;
                session.close_input();
                for running in session.batches.values() {
                    running.handle.interrupt(InterruptKind::Cancel);
                }
            }
        }
    }
}

impl Session {
    /// Handles one input line; false when the host asked to shut down.
    async fn handle_line(&mut self, line: &str) -> Result<bool, CliError> {
        if line.trim().is_empty() {
            return Ok(true);
        }
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return self.error(format!("not JSON: {e}")).map(|_| true),
        };
        match msg.get("type").and_then(Value::as_str).unwrap_or("") {
            "add" => {
                let block = msg.get("tool_use").unwrap_or(&msg);
                match anthropic::tool_use_from_block(block) {
                    Ok(call) => self.add(call).await?,
                    Err(e) => self.error(e)?,
                }
            }
            "message" => {
                let message = msg.get("message").unwrap_or(&Value::Null);
                match anthropic::parse_tool_uses(message) {
                    Ok(calls) => {
                        self.end_open();
                        // An empty message still gets a batch and a done line.
                        self.ensure_open().await?;
                        for call in calls {
                            self.add(call).await?;
                        }
                        self.end_open();
                    }
                    Err(e) => self.error(e.to_string())?,
                }
            }
            "end" => {
                if self.open.is_none() {
                    // `end` without calls: an empty message.
                    self.ensure_open().await?;
                }
                self.end_open();
            }
            "interrupt" => {
                let kind = msg.get("kind").and_then(Value::as_str).unwrap_or("cancel");
                match kind.parse::<InterruptKind>() {
                    Ok(kind) => {
                        if let Some(b) = self.latest.and_then(|id| self.batches.get(&id)) {
                            b.handle.interrupt(kind);
                        }
                    }
                    Err(e) => self.error(e)?,
                }
            }
            "approve" => self.approve(&msg)?,
            "shutdown" => return Ok(false),
            other => self.error(format!(
                "unknown message type `{other}` (expected add, message, end, interrupt, approve or shutdown)"
            ))?,
        }
        Ok(true)
    }

    async fn ensure_open(&mut self) -> Result<u64, CliError> {
        if let Some(id) = self.open {
            return Ok(id);
        }
        let batch = self
            .engine
            .open_batch()
            .await
            .map_err(|e| CliError::Failed(e.to_string()))?;
        let id = self.next_batch;
        self.next_batch += 1;
        let (handle, mut events) = batch.split();
        let tx = self.events.clone();
        tokio::spawn(async move {
            while let Some(event) = events.next().await {
                if tx.send((Some(id), event)).is_err() {
                    break;
                }
            }
        });
        self.batches.insert(
            id,
            Running {
                handle,
                blocks: Vec::new(),
            },
        );
        self.open = Some(id);
        self.latest = Some(id);
        write_line(&json!({"type": "batch_started", "batch": id}))?;
        Ok(id)
    }

    async fn add(&mut self, call: ToolUse) -> Result<(), CliError> {
        let id = self.ensure_open().await?;
        if let Some(b) = self.batches.get(&id) {
            if let Err(e) = b.handle.add(call) {
                self.error(e.to_string())?;
            }
        }
        Ok(())
    }

    /// No more lines will come: end the open message, and deny what would
    /// wait for an answer forever.
    fn close_input(&mut self) {
        self.input_closed = true;
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

    fn approve(&mut self, msg: &Value) -> Result<(), CliError> {
        let Some(id) = msg.get("request_id").and_then(Value::as_u64) else {
            return self.error("approve needs a numeric `request_id`".into());
        };
        let Some(prompt) = self.prompts.remove(&id) else {
            return self.error(format!("no pending permission request {id}"));
        };
        let approval = match msg.get("decision").and_then(Value::as_str) {
            Some("allow") => Approval::Allow,
            Some("deny") => Approval::Deny {
                reason: msg
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
            _ => {
                self.prompts.insert(id, prompt);
                return self.error("`decision` must be \"allow\" or \"deny\"".into());
            }
        };
        prompt.answer(approval);
        Ok(())
    }

    fn emit(&mut self, batch: Option<u64>, event: Event) -> Result<(), CliError> {
        if let Event::PermissionRequest(prompt) = &event {
            if self.input_closed {
                prompt.answer(no_host());
                return Ok(());
            }
        }
        let request_id = match &event {
            Event::PermissionRequest(prompt) => {
                let id = self.next_prompt;
                self.next_prompt += 1;
                self.prompts.insert(id, prompt.clone());
                Some(id)
            }
            _ => None,
        };
        let mut line = match &event {
            Event::Done(summary) => {
                let mut blocks = batch
                    .and_then(|id| self.batches.remove(&id))
                    .map(|b| b.blocks)
                    .unwrap_or_default();
                blocks.extend(baton::jsonl::batch_context_blocks(summary));
                json!({
                    "type": "done",
                    "summary": summary_json(summary),
                    "message": {"role": "user", "content": blocks},
                })
            }
            Event::Result { result, .. } => {
                if let Some(b) = batch.and_then(|id| self.batches.get_mut(&id)) {
                    b.blocks.push(anthropic::tool_result_block(result));
                }
                event_json(&event, None)
            }
            _ => event_json(&event, request_id),
        };
        if let Some(id) = batch {
            line["batch"] = json!(id);
        }
        write_line(&line)
    }

    fn error(&self, message: String) -> Result<(), CliError> {
        write_line(&json!({"type": "error", "message": message}))
    }
}

fn no_host() -> Approval {
    Approval::Deny {
        reason: Some("the host closed the session before answering".into()),
    }
}

fn write_line(value: &Value) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{value}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}
