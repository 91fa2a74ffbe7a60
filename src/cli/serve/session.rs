//! The state of one `baton serve` session and what each input line does.
//!
//! Interrupts and `end` apply to the latest message.

use std::collections::HashMap;

use baton::engine::wire::anthropic;
use baton::engine::{Approval, ToolUse};
use baton::jsonl::{event_json, summary_json};
use baton::{BatchHandle, Engine, Event, InterruptKind, PermissionPrompt};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::output::write_line;
use crate::cli::CliError;

pub struct Session {
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
    /// The number of the input line being handled, for error lines.
    line: u64,
    events: mpsc::UnboundedSender<(Option<u64>, Event)>,
}

struct Running {
    handle: BatchHandle,
    /// tool_result blocks so far, for the user message in `done`.
    blocks: Vec<Value>,
}

impl Session {
    pub fn new(engine: Engine, events: mpsc::UnboundedSender<(Option<u64>, Event)>) -> Self {
        Session {
            engine,
            next_batch: 1,
            open: None,
            latest: None,
            batches: HashMap::new(),
            prompts: HashMap::new(),
            next_prompt: 1,
            input_closed: false,
            line: 0,
            events,
        }
    }

    /// No message is running.
    pub fn is_idle(&self) -> bool {
        self.batches.is_empty()
    }

    pub fn interrupt_all(&self, kind: InterruptKind) {
        for running in self.batches.values() {
            running.handle.interrupt(kind);
        }
    }

    /// Handles input line `number`; false when the host asked to shut down.
    pub async fn handle_line(&mut self, number: u64, line: &str) -> Result<bool, CliError> {
        self.line = number;
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
    pub fn close_input(&mut self) {
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

    pub fn emit(&mut self, batch: Option<u64>, event: Event) -> Result<(), CliError> {
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
                let blocks = batch
                    .and_then(|id| self.batches.remove(&id))
                    .map(|b| b.blocks)
                    .unwrap_or_default();
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
        super::output::error_line(&message, Some(self.line))
    }
}

fn no_host() -> Approval {
    Approval::Deny {
        reason: Some("the host closed the session before answering".into()),
    }
}
