//! One streamed attempt of a turn, with the batch's events reported while
//! the model is still streaming (`--events` shows a tool's progress and
//! result the moment it happens, not when the stream ends).
//!
//! The stream parser hands each complete call to a channel instead of the
//! batch, so one task can wait on three things at once: the stream, the
//! calls it completes (added to the batch at once), and the batch's events.

use std::future::Future;
use std::pin::Pin;

use baton_actors::Event;
use baton_engine::nesting::NestedEvent;
use baton_engine::wire::{StreamSink, ToolSet, WireTools};
use baton_engine::{CallResult, ToolUse};
use serde_json::Value;
use tokio::sync::mpsc;

use super::agent::AgentEvent;
use super::client::{Attempt, Client};
use super::turn::{TurnBatch, TurnEvent};

enum Piece {
    Call(ToolUse),
    Text(String),
}

struct ChannelSink(mpsc::UnboundedSender<Piece>);

impl StreamSink for ChannelSink {
    type Error = String;
    fn call(&mut self, call: ToolUse) -> Result<(), String> {
        self.0
            .send(Piece::Call(call))
            .map_err(|_| "the turn stopped taking calls".to_string())
    }
    fn text(&mut self, delta: &str) -> Result<(), String> {
        self.0
            .send(Piece::Text(delta.to_string()))
            .map_err(|_| "the turn stopped taking text".to_string())
    }
}

/// What the batch did so far in this turn.
#[derive(Default)]
pub(super) struct Seen {
    /// Results already reported, in the order they came.
    pub results: Vec<CallResult>,
    /// The batch reported its end (or has no more events).
    pub done: bool,
}

/// How one attempt went.
pub(super) struct Streamed {
    /// `None`: interrupted.
    pub attempt: Option<Attempt>,
    pub added: usize,
    pub text: String,
}

/// Streams `body`, adding each call to `batch` as it completes and
/// reporting the batch's events as they happen.
#[allow(clippy::too_many_arguments)]
pub(super) async fn attempt<F, I>(
    client: &Client,
    body: &Value,
    batch: &mut dyn TurnBatch,
    tools: &WireTools,
    set: ToolSet,
    report: &mut F,
    mut interrupt: Pin<&mut I>,
    seen: &mut Seen,
) -> Streamed
where
    F: FnMut(AgentEvent<'_>),
    I: Future<Output = ()>,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut sink = ChannelSink(tx);
    let mut out = Streamed {
        attempt: None,
        added: 0,
        text: String::new(),
    };
    let mut refused = None;
    let stream = client.stream(body, &mut sink);
    tokio::pin!(stream);
    let attempt = loop {
        tokio::select! {
            biased;
            Some(piece) = rx.recv() => {
                take(piece, batch, tools, set, report, &mut out, &mut refused);
            }
            a = &mut stream => break Some(a),
            event = batch.next(), if !seen.done => match event {
                Some(e) => seen.done |= report_event(e, report, &mut seen.results),
                None => seen.done = true,
            },
            _ = interrupt.as_mut() => break None,
        }
    };
    // Calls the parser handed over in the stream's last poll.
    while let Ok(piece) = rx.try_recv() {
        take(piece, batch, tools, set, report, &mut out, &mut refused);
    }
    out.attempt = match (attempt, refused) {
        (Some(_), Some(why)) => Some(Attempt::Fatal(why)),
        (a, _) => a,
    };
    out
}

fn take<F: FnMut(AgentEvent<'_>)>(
    piece: Piece,
    batch: &mut dyn TurnBatch,
    tools: &WireTools,
    set: ToolSet,
    report: &mut F,
    out: &mut Streamed,
    refused: &mut Option<String>,
) {
    match piece {
        Piece::Text(delta) => {
            report(AgentEvent::Text(&delta));
            out.text.push_str(&delta);
        }
        Piece::Call(call) => {
            let call = crate::tool_set::translate(set, tools.resolve(call));
            report(AgentEvent::Call(&call));
            out.added += 1;
            if let Err(e) = batch.add(call) {
                refused.get_or_insert(e);
            }
        }
    }
}

/// Reports one batch event, keeps its result, answers permission prompts;
/// true when the batch is done.
pub(super) fn report_event<F: FnMut(AgentEvent<'_>)>(
    event: TurnEvent,
    report: &mut F,
    results: &mut Vec<CallResult>,
) -> bool {
    match &event {
        TurnEvent::Engine(e) => report(AgentEvent::Batch(e)),
        TurnEvent::Nested(e) => report(AgentEvent::Nested(e)),
    }
    match event {
        TurnEvent::Engine(Event::Result { result, .. }) => results.push(*result),
        TurnEvent::Nested(NestedEvent::Result(result)) => results.push(result),
        TurnEvent::Engine(Event::Done(_)) => return true,
        // No one to ask in this loop: settings decide, ask means deny.
        TurnEvent::Engine(Event::PermissionRequest(prompt)) => {
            prompt.answer(baton_engine::Approval::Unanswered {
                cause: baton_engine::Unasked::Headless,
                detail: Some("baton agent has no one to ask; allow it in the settings".into()),
            });
        }
        _ => {}
    }
    false
}
