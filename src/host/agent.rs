//! The loop: request, stream (tools start as calls complete), results,
//! again, until the model ends its turn.

use std::future::Future;
use std::time::Duration;

use baton_actors::{Event, InterruptKind};
use baton_engine::wire::{Completed, StreamSink, WireTools};
use baton_engine::{CallResult, ToolUse};
use serde_json::Value;

use super::client::{backoff, Attempt, Client};
use super::conversation::Conversation;
use super::AgentOptions;
use crate::Engine;

/// Something the loop reports as it goes (printed by `baton agent`, or
/// written as JSON lines with `--events`).
#[derive(Debug)]
pub enum AgentEvent<'a> {
    /// A request is about to be sent (turn numbers start at 1).
    Turn(usize),
    /// Text the model streams.
    Text(&'a str),
    /// A complete call, handed to the batch (it may already be running).
    Call(&'a ToolUse),
    /// The engine's event for the turn's batch (progress, results, …).
    Batch(&'a Event),
    /// The request failed or the stream broke; retrying after `wait`.
    Retry {
        attempt: u32,
        reason: &'a str,
        wait: Duration,
    },
    /// What the model said in this turn, as kept in the conversation.
    Assistant(&'a Value),
}

/// How the agent's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentEnd {
    /// The model ended its turn.
    Done { stop_reason: Option<String> },
    /// The model refused.
    Refused,
    /// The output hit the token limit without a call to run.
    MaxTokens,
    /// `--max-turns` requests were made.
    MaxTurns,
    /// The user interrupted; the running batch was stopped.
    Interrupted,
    /// The request kept failing, or cannot succeed.
    Failed(String),
}

/// The sink of one turn: each complete call goes to the batch at once.
struct TurnSink<'a, F: FnMut(AgentEvent<'_>)> {
    batch: &'a baton_actors::BatchHandle,
    tools: &'a WireTools,
    report: &'a mut F,
    added: usize,
}

impl<F: FnMut(AgentEvent<'_>)> StreamSink for TurnSink<'_, F> {
    type Error = String;
    fn call(&mut self, call: ToolUse) -> Result<(), String> {
        let call = self.tools.resolve(call);
        (self.report)(AgentEvent::Call(&call));
        self.added += 1;
        self.batch.add(call).map_err(|e| e.to_string())
    }
    fn text(&mut self, delta: &str) -> Result<(), String> {
        (self.report)(AgentEvent::Text(delta));
        Ok(())
    }
}

/// Runs the agent on `prompt` until the model ends its turn, `interrupt`
/// resolves (Ctrl-C), or something stops it.
pub async fn run_agent<F, I>(
    engine: &Engine,
    pool: &baton_engine::ToolPool,
    options: &AgentOptions,
    prompt: &str,
    interrupt: I,
    mut report: F,
) -> AgentEnd
where
    F: FnMut(AgentEvent<'_>),
    I: Future<Output = ()>,
{
    let client = match Client::new(options.clone()) {
        Ok(c) => c,
        Err(e) => return AgentEnd::Failed(e),
    };
    let mut tools = WireTools::new(pool, options.format);
    let mut conversation = Conversation::new(options.format, prompt);
    tokio::pin!(interrupt);
    for turn in 1..=options.max_turns {
        report(AgentEvent::Turn(turn));
        // Between turns: MCP servers that changed their tool lists.
        if engine.refresh_tools().await.is_some() {
            tools = WireTools::new(&engine.pool(), options.format);
        }
        let body = conversation.request(options, &tools);
        let batch = match engine.open_batch().await {
            Ok(b) => b,
            Err(e) => return AgentEnd::Failed(e.to_string()),
        };
        let (handle, mut events) = batch.split();
        let mut attempt = 0;
        // Stream, retrying while nothing was handed over yet.
        let outcome = loop {
            let mut sink = TurnSink {
                batch: &handle,
                tools: &tools,
                report: &mut report,
                added: 0,
            };
            let streamed = tokio::select! {
                a = client.stream(&body, &mut sink) => a,
                _ = &mut interrupt => {
                    handle.interrupt(InterruptKind::Cancel);
                    handle.end();
                    drain(&mut events, &mut report).await;
                    return AgentEnd::Interrupted;
                }
            };
            let added = sink.added;
            let (reason, after) = match streamed {
                Attempt::Completed(c) => break Ok(c),
                Attempt::Cut { completed, .. } if added > 0 => break Ok(completed),
                Attempt::Cut { reason, .. } => (reason, None),
                Attempt::Retry { reason, after } => (reason, after),
                Attempt::Fatal(reason) => break Err(reason),
            };
            attempt += 1;
            if attempt > options.max_retries {
                break Err(format!("giving up after {attempt} attempts: {reason}"));
            }
            let wait = backoff(options.retry_base, attempt, after);
            report(AgentEvent::Retry {
                attempt,
                reason: &reason,
                wait,
            });
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = &mut interrupt => {
                    handle.end();
                    drain(&mut events, &mut report).await;
                    return AgentEnd::Interrupted;
                }
            }
        };
        handle.end();
        let completed = match outcome {
            Ok(c) => c,
            Err(reason) => {
                drain(&mut events, &mut report).await;
                return AgentEnd::Failed(reason);
            }
        };
        report(AgentEvent::Assistant(&completed.message));
        let results = tokio::select! {
            r = collect(&mut events, &mut report) => r,
            _ = &mut interrupt => {
                handle.interrupt(InterruptKind::Cancel);
                drain(&mut events, &mut report).await;
                return AgentEnd::Interrupted;
            }
        };
        handle.quiescent().await;
        if let Some(end) = turn_end(&completed, &results) {
            return end;
        }
        if completed.stop_reason.as_deref() != Some("pause_turn") || !is_empty(&completed.message) {
            conversation.push_assistant(completed.message);
        }
        if !results.is_empty() {
            conversation.push_results(&results);
        }
    }
    AgentEnd::MaxTurns
}

/// The run ends here unless the model made calls or paused.
fn turn_end(completed: &Completed, results: &[CallResult]) -> Option<AgentEnd> {
    let reason = completed.stop_reason.as_deref();
    if results.iter().any(|r| r.stop_turn.is_some()) {
        // A hook asked to end the turn after this batch.
        return Some(AgentEnd::Done {
            stop_reason: Some("hook".into()),
        });
    }
    if !results.is_empty() {
        return None;
    }
    match reason {
        // Anthropic's server tools paused a long turn: send it back as is.
        Some("pause_turn") => None,
        Some("refusal") | Some("content_filter") => Some(AgentEnd::Refused),
        _ if has_refusal(&completed.message) => Some(AgentEnd::Refused),
        Some("max_tokens") | Some("length") => Some(AgentEnd::MaxTokens),
        Some(r) if r.starts_with("incomplete:max_output_tokens") => Some(AgentEnd::MaxTokens),
        _ => Some(AgentEnd::Done {
            stop_reason: completed.stop_reason.clone(),
        }),
    }
}

fn has_refusal(message: &Value) -> bool {
    message.get("refusal").is_some_and(|r| !r.is_null())
        || message.as_array().is_some_and(|items| {
            items.iter().any(|i| {
                i.get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|c| c.iter().any(|p| p["type"] == "refusal"))
            })
        })
}

fn is_empty(message: &Value) -> bool {
    match message {
        Value::Array(items) => items.is_empty(),
        m => m
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty),
    }
}

/// The batch's results in order, reporting every event.
async fn collect<F: FnMut(AgentEvent<'_>)>(
    events: &mut crate::EventStream,
    report: &mut F,
) -> Vec<CallResult> {
    use futures::StreamExt;
    let mut results = Vec::new();
    while let Some(event) = events.next().await {
        report(AgentEvent::Batch(&event));
        match event {
            Event::Result { result, .. } => results.push(result),
            Event::Done(_) => break,
            // No one to ask in this loop: settings decide, ask means deny.
            Event::PermissionRequest(prompt) => {
                prompt.answer(baton_engine::Approval::Deny {
                    reason: Some("baton agent has no one to ask; allow it in the settings".into()),
                });
            }
            _ => {}
        }
    }
    results
}

async fn drain<F: FnMut(AgentEvent<'_>)>(events: &mut crate::EventStream, report: &mut F) {
    let _ = collect(events, report).await;
}
