//! Subagents over `baton serve` (SPEC §15; docs/serve-protocol.md).
//!
//! The host runs every model loop, so an Agent call becomes a question to
//! it: Baton writes a `subagent_request` line with a fresh `agent_id`, the
//! host streams that subagent's calls with `add`/`end` lines naming the
//! agent (each message its own batch, nested under the Agent call), reads
//! their `result`/`done` lines (which name the agent too), answers their
//! permission requests like any other, and finishes with a
//! `subagent_result` line. The Agent call's result goes to the parent
//! batch as usual.
//!
//! Each subagent batch is owned by a task of its own that takes commands
//! (add, end) and writes the batch's lines, so a slow batch never holds up
//! the session's input loop.

use std::collections::HashMap;
use std::sync::Arc;

use baton::engine::deferred::deferral_of;
use baton::engine::nesting::{NestedBatch, NestedEvent};
use baton::engine::subagent::{
    StopVerdict, SubagentBatches, SubagentReport, SubagentRunner, SubagentTask,
};
use baton::engine::wire::{self, anthropic, AnswerWriter, Asked, WireFormat};
use baton::engine::{async_trait, ToolUse};
use baton::jsonl_direct::write_result_line;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::cli::CliError;

/// How long an ended subagent's cancelled batches may take to report.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The subagents the host is running, by agent id.
#[derive(Clone, Default)]
pub(super) struct Agents(Arc<Mutex<HashMap<String, Entry>>>);

/// A std mutex that shrugs off poisoning: the map stays usable.
#[derive(Default)]
struct Mutex<T>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Entry {
    batches: SubagentBatches,
    /// Maps the names (and strict-schema nulls) of the definitions the
    /// subagent's model was sent back to its pool's.
    wire: Arc<wire::WireTools>,
    /// The session's tool set: calls in its names run as the tools under.
    set: wire::ToolSet,
    /// The message being streamed, if any.
    open: Option<mpsc::UnboundedSender<Command>>,
    next_batch: u64,
    reply: Option<oneshot::Sender<Result<SubagentReport, String>>>,
    /// The tasks writing the subagent's batches' lines.
    drivers: Vec<tokio::task::JoinHandle<()>>,
}

enum Command {
    Add(ToolUse),
    End,
}

/// The runner a serve session registers: it hands each subagent to the host.
struct HostRunner {
    agents: Agents,
}

#[async_trait]
impl SubagentRunner for HostRunner {
    async fn run(&self, task: SubagentTask) -> Result<SubagentReport, String> {
        let (tx, rx) = oneshot::channel();
        let agent_id = task.agent_id.clone();
        let chain = task.chain();
        // The subagent's request list as the top level's is made: its own
        // (narrowed) pool, the session's tool search state and format, so
        // deferred tools stay deferred and ToolSearch loads them.
        let session = task.batches.parent().session.clone();
        let format = deferral_of(&session).settings.format;
        // In the session's tool set too (`--tool-set codex`): the same one
        // renderer and translation as the top level's `tools` line.
        let set = session
            .slots()
            .get::<wire::ToolSet>()
            .map_or(wire::ToolSet::Claude, |s| *s);
        let tools = baton::tool_set::in_set(
            set,
            &task.tools,
            format,
            baton_engine::deferred::request_tools(&task.tools, &session, format),
        );
        // The subagent's batches hang under a scope of their own, so that
        // however the subagent ends, everything it still runs is cancelled.
        let subtree = task.batches.parent().cancel.child();
        self.agents.0.lock().insert(
            agent_id.clone(),
            Entry {
                batches: task.batches.under(subtree.clone()),
                wire: Arc::new(wire::WireTools::new(&task.tools, format)),
                set,
                open: None,
                next_batch: 1,
                reply: Some(tx),
                drivers: Vec::new(),
            },
        );
        let line = json!({
            "type": "subagent_request",
            "agent_id": agent_id,
            "tool_use_id": task.batches.parent().call_id,
            "agent_type": task.definition.name,
            "description": task.description,
            "prompt": task.prompt,
            "system_prompt": task.definition.system_prompt,
            "model": task.model,
            "max_turns": task.definition.max_turns,
            "permission_mode": task.context.permission_mode.as_str(),
            "cwd": task.context.cwd,
            "agent_chain": chain.call_ids(),
            "format": tools.format,
            "tools": tools.tools,
            "deferred": tools.deferred,
            "reminder": tools.reminder,
            "additional_context": task.start_context,
            // A message continued this subagent after it ended: the host
            // keeps its transcript and adds `prompt` as the next user turn.
            "resume": task.resume.is_some(),
        });
        if let Err(e) = write(&line) {
            self.agents.0.lock().remove(&agent_id);
            return Err(e.to_string());
        }
        // Messages sent to the running subagent go to the host as they
        // come, for its next turn (docs/serve-protocol.md).
        let forward = tokio::spawn(super::subagent_mail::forward(
            task.inbox.clone(),
            agent_id.clone(),
        ));
        let mut rx = rx;
        let outcome = loop {
            let answer = tokio::select! {
                answer = &mut rx => answer.unwrap_or_else(|_| {
                    Err("the host closed the session before the subagent finished".into())
                }),
                _ = task.cancel.cancelled() => {
                    let _ = write(&json!({"type": "subagent_cancelled", "agent_id": agent_id}));
                    break Err("the subagent was cancelled".into());
                }
            };
            let Ok(report) = answer else { break answer };
            // A SubagentStop hook may keep the subagent going: the host gets
            // the feedback and answers with another subagent_result.
            let StopVerdict::Continue(reason) = task.stopping(&report.text).await else {
                break Ok(report);
            };
            let (tx, next) = oneshot::channel();
            match self.agents.0.lock().get_mut(&agent_id) {
                Some(entry) => entry.reply = Some(tx),
                None => break Ok(report),
            }
            rx = next;
            let line = json!({"type": "subagent_continue", "agent_id": agent_id, "reason": reason});
            if write(&line).is_err() {
                break Ok(report);
            }
        };
        forward.abort();
        // End whatever message the host left open, so its batch can finish.
        let mut drivers = Vec::new();
        if let Some(entry) = self.agents.0.lock().remove(&agent_id) {
            if let Some(open) = entry.open {
                let _ = open.send(Command::End);
            }
            drivers = entry.drivers;
        }
        // Whatever still runs below the subagent (its calls, the subagents
        // they started, their processes) runs for nobody now: the host
        // failed or ended it, or it was cancelled. Cancelling reaches the
        // whole subtree; each subagent below gets its `subagent_cancelled`.
        subtree.cancel(baton::engine::CancelReason::Other(match &outcome {
            Ok(_) => format!("subagent {agent_id} already ended"),
            Err(e) => format!("subagent {agent_id} failed: {e}"),
        }));
        // The subagent's lines come before its Agent call's result (a host
        // reading the parent's `done` has seen everything below it). The
        // batches were just cancelled, so this is short; bounded anyway.
        let _ = tokio::time::timeout(DRAIN_LIMIT, futures::future::join_all(drivers)).await;
        outcome
    }
}

impl Agents {
    /// The runner to register with the engine; lines go through `write`.
    pub(super) fn runner(&self) -> Arc<dyn SubagentRunner> {
        Arc::new(HostRunner {
            agents: self.clone(),
        })
    }

    /// The host's input ended: no subagent will get its result any more.
    pub(super) fn close(&self) {
        for entry in self.0.lock().values_mut() {
            entry.reply.take();
        }
    }

    /// Handles a line that names an `agent_id`. `Err(text)` for an `error`
    /// line; the session goes on either way.
    pub(super) async fn handle(&self, msg: &Value) -> Result<(), String> {
        let agent_id = msg
            .get("agent_id")
            .and_then(Value::as_str)
            .ok_or("`agent_id` must be a string")?
            .to_string();
        let known = || format!("no running subagent `{agent_id}`");
        match msg.get("type").and_then(Value::as_str).unwrap_or("") {
            "add" => {
                let block = msg.get("tool_use").unwrap_or(msg);
                let call = anthropic::tool_use_from_block(block)?;
                let (open, call) = self
                    .0
                    .lock()
                    .get(&agent_id)
                    .map(|e| {
                        let call = e.wire.resolve(call);
                        (e.open.clone(), baton::tool_set::translate(e.set, call))
                    })
                    .ok_or_else(known)?;
                let sender = match open {
                    Some(sender) => sender,
                    None => self.open_batch(&agent_id).await?,
                };
                sender
                    .send(Command::Add(call))
                    .map_err(|_| format!("the message of subagent `{agent_id}` is closed"))
            }
            "end" => {
                let open = self
                    .0
                    .lock()
                    .get_mut(&agent_id)
                    .ok_or_else(known)?
                    .open
                    .take();
                let sender = match open {
                    Some(sender) => sender,
                    // `end` without calls: an empty message, still answered.
                    None => {
                        let sender = self.open_batch(&agent_id).await?;
                        if let Some(e) = self.0.lock().get_mut(&agent_id) {
                            e.open = None;
                        }
                        sender
                    }
                };
                let _ = sender.send(Command::End);
                Ok(())
            }
            "subagent_result" => {
                let reply = self
                    .0
                    .lock()
                    .get_mut(&agent_id)
                    .ok_or_else(known)?
                    .reply
                    .take();
                let reply =
                    reply.ok_or_else(|| format!("subagent `{agent_id}` already has its result"))?;
                let outcome = match msg.get("error").and_then(Value::as_str) {
                    Some(error) => Err(error.to_string()),
                    None => Ok(SubagentReport {
                        text: msg
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        input_tokens: msg.pointer("/usage/input_tokens").and_then(Value::as_u64),
                        output_tokens: msg.pointer("/usage/output_tokens").and_then(Value::as_u64),
                        model: msg.get("model").and_then(Value::as_str).map(str::to_string),
                        transcript: None,
                    }),
                };
                let _ = reply.send(outcome);
                Ok(())
            }
            other => Err(format!(
                "`{other}` lines do not take an agent_id (add, end and subagent_result do)"
            )),
        }
    }

    /// Opens the next message of a subagent, nested under its Agent call.
    async fn open_batch(&self, agent_id: &str) -> Result<mpsc::UnboundedSender<Command>, String> {
        let batches = self
            .0
            .lock()
            .get(agent_id)
            .map(|e| e.batches.clone())
            .ok_or_else(|| format!("no running subagent `{agent_id}`"))?;
        let batch = batches.open().await.map_err(|e| e.to_string())?;
        let (tx, rx) = mpsc::unbounded_channel();
        let number = {
            let mut agents = self.0.lock();
            let entry = agents
                .get_mut(agent_id)
                .ok_or_else(|| format!("subagent `{agent_id}` ended"))?;
            entry.open = Some(tx.clone());
            entry.next_batch += 1;
            entry.next_batch - 1
        };
        let _ =
            write(&json!({"type": "batch_started", "agent_id": agent_id, "agent_batch": number}));
        let driver = tokio::spawn(drive(batch, rx, agent_id.to_string(), number));
        if let Some(entry) = self.0.lock().get_mut(agent_id) {
            entry.drivers.retain(|d| !d.is_finished());
            entry.drivers.push(driver);
        }
        Ok(tx)
    }
}

/// Feeds one subagent batch and writes its lines until it is done.
async fn drive(
    mut batch: Box<dyn NestedBatch>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    agent_id: String,
    number: u64,
) {
    let mut ended = false;
    let mut index = 0;
    // The `done` line's user message, written as the results come.
    let asked = Asked::default();
    let mut answer = AnswerWriter::new(WireFormat::Anthropic, &asked, Vec::new());
    let tag = |mut line: Value| {
        line["agent_id"] = json!(agent_id);
        line["agent_batch"] = json!(number);
        line
    };
    loop {
        tokio::select! {
            command = commands.recv(), if !ended => match command {
                Some(Command::Add(call)) => {
                    if let Err(e) = batch.add(call) {
                        let _ = write(&tag(json!({"type": "error", "message": e.to_string()})));
                    }
                }
                Some(Command::End) | None => {
                    ended = true;
                    batch.end();
                }
            },
            event = batch.next_event() => match event {
                Some(NestedEvent::Result(result)) => {
                    // Writing into memory cannot fail.
                    let _ = answer.push(&result);
                    let (number, id) = (json!(number), json!(agent_id));
                    let tags = [("agent_batch", &number), ("agent_id", &id)];
                    let _ = super::output::write_made(|out| {
                        write_result_line(out, Some(index), &result, &tags)
                    });
                    index += 1;
                }
                Some(NestedEvent::Progress { call_id, progress }) => {
                    let _ = write(&tag(json!({
                        "type": "progress",
                        "tool_use_id": call_id,
                        "message": progress.message,
                        "data": progress.data,
                    })));
                }
                // An event kind added to nested batches later: nothing the
                // subagent's host needs to answer; the results still come.
                Some(_) => {}
                None => break,
            },
        }
    }
    let message = answer.finish(&[]).unwrap_or_default();
    let _ = super::output::write_line_with_raw(&tag(json!({"type": "done"})), "message", &message);
}

/// One protocol line on stdout (written whole, so the session's and the
/// subagent tasks' lines never mix).
fn write(value: &Value) -> Result<(), CliError> {
    super::output::write_line(value)
}
