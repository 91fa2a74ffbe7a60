//! The loop: request, stream (tools start as calls complete), results,
//! again, until the model ends its turn.

use std::future::Future;
use std::time::Duration;

use baton_actors::Event;
use baton_engine::nesting::NestedEvent;
use baton_engine::wire::{Completed, WireTools};
use baton_engine::{CallResult, ToolUse};
use serde_json::Value;

use super::client::{backoff, Attempt, Client};
use super::conversation::Conversation;
use super::live;
use super::turn::{MainHost, TurnBatch, TurnHost};
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
    /// An event of a subagent's batch (nested under its Agent call).
    Nested(&'a NestedEvent),
    /// The request failed or the stream broke; retrying after `wait`.
    Retry {
        /// Which retry this is, from 1.
        attempt: u32,
        /// Why the attempt failed.
        reason: &'a str,
        /// How long the loop waits before the retry.
        wait: Duration,
    },
    /// What the model said in this turn, as kept in the conversation.
    Assistant(&'a Value),
    /// Something about the response worth knowing that is not an error
    /// (a Chat Completions server sent several choices; only 0 was read).
    Diagnostic(&'a str),
}

/// How the agent's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentEnd {
    /// The model ended its turn.
    Done {
        /// The provider's stop reason (`end_turn`, `stop`, …), if it gave one.
        stop_reason: Option<String>,
    },
    /// The model refused.
    Refused,
    /// The output hit the token limit without a call to run.
    MaxTokens,
    /// `--max-turns` requests were made.
    MaxTurns,
    /// The user interrupted; the running batch was stopped.
    Interrupted,
    /// A UserPromptSubmit hook blocked the prompt (the reason); nothing
    /// was sent.
    Blocked(String),
    /// The request kept failing, or cannot succeed.
    Failed(String),
    /// The model stream kept stalling (idle or total limit) until the
    /// retries ran out.
    Stalled(String),
}

/// How a loop ended, with what a subagent hands back to its parent.
#[derive(Debug)]
pub struct Finished {
    /// How the run ended.
    pub end: AgentEnd,
    /// The text of the last turn the model answered.
    pub text: String,
    /// Tokens over every request, when the provider reported them.
    pub input_tokens: Option<u64>,
    /// Output tokens over every request, when the provider reported them.
    pub output_tokens: Option<u64>,
    /// The conversation as it stood at the end (a subagent's transcript,
    /// kept so a later message can continue it).
    pub transcript: Vec<Value>,
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
    let host = MainHost::new(engine, WireTools::new(pool, options.format));
    let mut notes = Vec::new();
    tokio::pin!(interrupt);
    // A hook may hang; Ctrl-C drops it, which ends its process group.
    let prompt = tokio::select! {
        p = super::loop_hooks::user_prompt_submit(engine, prompt, &mut notes) => p,
        _ = interrupt.as_mut() => return AgentEnd::Interrupted,
    };
    for note in &notes {
        report(AgentEvent::Diagnostic(note));
    }
    let prompt = match prompt {
        super::loop_hooks::Prompt::Send(text) => text,
        super::loop_hooks::Prompt::Blocked(reason) => return AgentEnd::Blocked(reason),
    };
    drive(&host, options, &prompt, interrupt, &mut report)
        .await
        .end
}

/// Hands the conversation's new items to the host's transcript.
fn record<H, F>(host: &H, conversation: &Conversation, report: &mut F)
where
    H: TurnHost + ?Sized,
    F: FnMut(AgentEvent<'_>),
{
    if let Some(problem) = host.record(conversation.items()) {
        report(AgentEvent::Diagnostic(&problem));
    }
}

/// The loop itself, for the main agent and subagents alike (`host` says
/// where batches open and which tools to send).
pub async fn drive<H, F, I>(
    host: &H,
    options: &AgentOptions,
    prompt: &str,
    interrupt: I,
    report: &mut F,
) -> Finished
where
    H: TurnHost + ?Sized,
    F: FnMut(AgentEvent<'_>),
    I: Future<Output = ()>,
{
    // The deferred tools are announced once, at the start; what ToolSearch
    // loads later is added to each request's `tools`.
    let reminder = host.request_tools().reminder;
    let conversation = Conversation::with_reminder(options.format, prompt, reminder.as_deref());
    drive_from(host, options, conversation, interrupt, report).await
}

/// The loop from a conversation already under way (a subagent continued
/// with a new message).
pub async fn drive_from<H, F, I>(
    host: &H,
    options: &AgentOptions,
    mut conversation: Conversation,
    interrupt: I,
    report: &mut F,
) -> Finished
where
    H: TurnHost + ?Sized,
    F: FnMut(AgentEvent<'_>),
    I: Future<Output = ()>,
{
    let mut finished = turns(host, options, &mut conversation, interrupt, report).await;
    finished.transcript = conversation.items().to_vec();
    finished
}

async fn turns<H, F, I>(
    host: &H,
    options: &AgentOptions,
    conversation: &mut Conversation,
    interrupt: I,
    report: &mut F,
) -> Finished
where
    H: TurnHost + ?Sized,
    F: FnMut(AgentEvent<'_>),
    I: Future<Output = ()>,
{
    let mut finished = Finished {
        end: AgentEnd::MaxTurns,
        text: String::new(),
        input_tokens: None,
        output_tokens: None,
        transcript: Vec::new(),
    };
    let mut client = match Client::new(options.clone()) {
        Ok(c) => c,
        Err(e) => {
            finished.end = AgentEnd::Failed(e.to_string());
            return finished;
        }
    };
    // Anthropic tool changes: the first request's `tools` stays; what
    // changes later is appended as blocks (see `tool_changes`).
    let mut changes = super::tool_changes::Changes::new(options);
    record(host, conversation, report);
    // Claude Code's `stop_hook_active`: the model goes on because a Stop
    // hook blocked; hooks read it so as not to keep it going forever.
    let mut stop_hook_active = false;
    tokio::pin!(interrupt);
    for turn in 1..=options.max_turns {
        report(AgentEvent::Turn(turn));
        // Between turns: MCP servers that changed their tool lists.
        host.refresh().await;
        let tools = host.wire();
        let tools = &*tools;
        let defs = changes.tools(host.request_tools(), conversation);
        let mut body = conversation.request(options, Value::Array(defs));
        let mut batch = match host.open().await {
            Ok(b) => b,
            Err(e) => {
                finished.end = AgentEnd::Failed(e);
                return finished;
            }
        };
        let mut attempt = 0;
        let mut stalls = 0;
        // Stream, retrying while nothing was handed over yet.
        let mut seen = live::Seen::default();
        let outcome = loop {
            let live::Streamed {
                attempt: streamed,
                added,
                text,
            } = live::attempt(
                &client,
                &body,
                &mut *batch,
                tools,
                options.tool_set,
                &mut *report,
                interrupt.as_mut(),
                &mut seen,
            )
            .await;
            let Some(streamed) = streamed else {
                batch.interrupt();
                batch.end();
                drain(&mut *batch, report, seen).await;
                finished.end = AgentEnd::Interrupted;
                return finished;
            };
            let (reason, after) = match streamed {
                Attempt::Completed(c) => break Ok((c, text)),
                Attempt::Cut { completed, .. } if added > 0 => break Ok((completed, text)),
                Attempt::Cut {
                    reason, stalled, ..
                } => {
                    stalls += u32::from(stalled);
                    (reason, None)
                }
                Attempt::Retry { reason, after } => (reason, after),
                Attempt::Fatal(reason) if changes.refused(&reason) => {
                    // Not an attempt of the request: the same one again,
                    // the whole tool list in `tools`.
                    client.drop_betas();
                    conversation.drop_tool_changes();
                    body = conversation.request(options, Value::Array(host.request_tools().tools));
                    report(AgentEvent::Diagnostic(super::tool_changes::FELL_BACK));
                    continue;
                }
                Attempt::Fatal(reason) => break Err(AgentEnd::Failed(reason)),
            };
            attempt += 1;
            if attempt > options.max_retries {
                let why = format!("giving up after {attempt} attempts: {reason}");
                // Every attempt stalled: the model is not answering, which a
                // host may want to tell from a failing request.
                break Err(if stalls == attempt {
                    AgentEnd::Stalled(why)
                } else {
                    AgentEnd::Failed(why)
                });
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
                    batch.end();
                    drain(&mut *batch, report, seen).await;
                    finished.end = AgentEnd::Interrupted;
                    return finished;
                }
            }
        };
        batch.end();
        let (completed, text) = match outcome {
            Ok(c) => c,
            Err(end) => {
                drain(&mut *batch, report, seen).await;
                finished.end = end;
                return finished;
            }
        };
        count_usage(&mut finished, completed.usage.as_ref());
        for note in &completed.diagnostics {
            report(AgentEvent::Diagnostic(note));
        }
        finished.text = text;
        report(AgentEvent::Assistant(&completed.message));
        let results = {
            let collected = tokio::select! {
                r = collect(&mut *batch, report, seen) => Some(r),
                _ = &mut interrupt => None,
            };
            match collected {
                Some(r) => r,
                None => {
                    batch.interrupt();
                    drain(&mut *batch, report, live::Seen::default()).await;
                    finished.end = AgentEnd::Interrupted;
                    return finished;
                }
            }
        };
        // PostToolBatch hooks run here; an interrupt ends them.
        let quiet = tokio::select! {
            _ = batch.quiescent() => true,
            _ = &mut interrupt => false,
        };
        if !quiet {
            batch.interrupt();
            batch.quiescent().await;
            finished.end = AgentEnd::Interrupted;
            return finished;
        }
        if let Some(end) = turn_end(&completed, &results) {
            let ended = matches!(&end, AgentEnd::Done { stop_reason } if stop_reason.as_deref() != Some("hook"));
            // The answer is in the transcript before Stop hooks read it,
            // and belongs to the transcript a continuation starts from.
            if !is_empty(&completed.message) {
                conversation.push_assistant(completed.message);
            }
            if !results.is_empty() {
                conversation.push_results(&results);
            }
            record(host, conversation, report);
            let mut again = None;
            if ended {
                let mut notes = Vec::new();
                // A hanging Stop hook yields to Ctrl-C (dropped: its
                // process group is killed).
                let stopped = tokio::select! {
                    a = host.stop_hook(&finished.text, stop_hook_active, &mut notes) => Some(a),
                    _ = &mut interrupt => None,
                };
                let Some(a) = stopped else {
                    finished.end = AgentEnd::Interrupted;
                    return finished;
                };
                again = a;
                for note in &notes {
                    report(AgentEvent::Diagnostic(note));
                }
            }
            if let Some(reason) = again {
                stop_hook_active = true;
                conversation.push_user(&reason);
                record(host, conversation, report);
                continue;
            }
            finished.end = end;
            return finished;
        }
        if completed.stop_reason.as_deref() != Some("pause_turn") || !is_empty(&completed.message) {
            conversation.push_assistant(completed.message);
        }
        if !results.is_empty() {
            conversation.push_results(&results);
        }
        // Tasks that ended (and monitor events) come before the next turn.
        conversation.push_notices(&host.notices());
        record(host, conversation, report);
    }
    finished
}

/// Adds one response's usage (Anthropic and Responses: `input_tokens`,
/// `output_tokens`; Chat Completions: `prompt_tokens`, `completion_tokens`).
fn count_usage(finished: &mut Finished, usage: Option<&Value>) {
    let Some(usage) = usage else { return };
    let read = |a: &str, b: &str| {
        usage
            .get(a)
            .or_else(|| usage.get(b))
            .and_then(Value::as_u64)
    };
    if let Some(n) = read("input_tokens", "prompt_tokens") {
        *finished.input_tokens.get_or_insert(0) += n;
    }
    if let Some(n) = read("output_tokens", "completion_tokens") {
        *finished.output_tokens.get_or_insert(0) += n;
    }
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

/// The batch's results in order, reporting every event (after those
/// already reported while the model streamed).
async fn collect<F: FnMut(AgentEvent<'_>)>(
    batch: &mut dyn TurnBatch,
    report: &mut F,
    seen: live::Seen,
) -> Vec<CallResult> {
    let live::Seen { mut results, done } = seen;
    if done {
        return results;
    }
    while let Some(event) = batch.next().await {
        if live::report_event(event, report, &mut results) {
            break;
        }
    }
    results
}

async fn drain<F: FnMut(AgentEvent<'_>)>(
    batch: &mut dyn TurnBatch,
    report: &mut F,
    seen: live::Seen,
) {
    let _ = collect(batch, report, seen).await;
}
