//! What the three stream parsers share: the sink they push into, their
//! errors, what they hand back at the end, and [`StreamParser`], which
//! picks the parser for a [`WireFormat`].
//!
//! The parsers are pure state machines: no I/O, no async runtime. A host
//! (or `baton serve`, or `baton agent`) reads the SSE stream however it
//! likes and feeds each event's `data`; the parser pushes every tool call
//! into a [`StreamSink`] the moment that call is complete, so its batch can
//! start it while the model is still streaming the rest. This is the shape
//! of ripgrep's `Sink`: a trait for full control, [`FnSink`] for a closure.

use std::convert::Infallible;

use serde_json::Value;

use super::{anthropic, openai_chat, openai_responses, WireFormat};
use baton_tool::call::ToolUse;

/// Receives what a stream parser finds, as soon as it finds it.
pub trait StreamSink {
    /// Stops the parser when returned from a method.
    type Error;

    /// A call is complete (its arguments are all there): hand it to its
    /// batch now. Arguments that are not valid JSON arrive as
    /// [`ToolUse::input_error`], which the engine answers with an error
    /// result for that call alone.
    fn call(&mut self, call: ToolUse) -> Result<(), Self::Error>;

    /// Visible text the model streamed (for display). Ignored by default.
    fn text(&mut self, _delta: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A sink from a closure that takes each complete call.
pub struct FnSink<F>(pub F);

// Not derived: the closure has no `Debug`; the wrapper says what it is.
baton_tool::debug_fields! { FnSink<F> { .. } }

impl<F: FnMut(ToolUse)> StreamSink for FnSink<F> {
    type Error = Infallible;
    fn call(&mut self, call: ToolUse) -> Result<(), Infallible> {
        (self.0)(call);
        Ok(())
    }
}

impl<S: StreamSink + ?Sized> StreamSink for &mut S {
    type Error = S::Error;
    fn call(&mut self, call: ToolUse) -> Result<(), S::Error> {
        (**self).call(call)
    }
    fn text(&mut self, delta: &str) -> Result<(), S::Error> {
        (**self).text(delta)
    }
}

/// Why a stream could not be read on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError<E> {
    /// An event's data was not JSON (or not the object the format sends).
    #[error("stream event is not valid: {0}")]
    BadEvent(String),
    /// The provider reported an error inside the stream (e.g. overloaded);
    /// the value is its `error` object.
    #[error("the provider reported an error: {0}")]
    Provider(Value),
    /// The sink refused a call.
    #[error("the sink stopped the stream")]
    Sink(E),
}

/// What a stream amounted to, from [`StreamParser::finish`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completed {
    /// What the host keeps in its conversation, in the format's own shape:
    /// the assistant message (Anthropic, Chat Completions) or the list of
    /// output items (Responses). Every block or item the model or provider
    /// produced is in it untouched (thinking with its signature, server
    /// tool blocks, …); when the stream broke off, only what was complete.
    pub message: Value,
    /// Why the model stopped, as the format says it (`end_turn`,
    /// `tool_use`, `max_tokens`, `pause_turn`, `refusal`, `stop`,
    /// `tool_calls`, `length`, `completed`, `incomplete`, …).
    pub stop_reason: Option<String>,
    /// How many calls were handed to the sink.
    pub calls: usize,
    /// The format's final event arrived; false means the stream was cut.
    pub complete: bool,
    /// Usage as the provider reported it, if it did.
    pub usage: Option<Value>,
    /// Things the host should know that are not errors (for example a
    /// Chat Completions server that streamed several choices, of which only
    /// choice 0 was read).
    pub diagnostics: Vec<String>,
}

/// One of the three parsers, chosen by format.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamParser {
    /// Anthropic Messages events.
    Anthropic(anthropic::stream::Parser),
    /// OpenAI Chat Completions chunks.
    OpenAiChat(openai_chat::stream::Parser),
    /// OpenAI Responses events.
    OpenAiResponses(openai_responses::stream::Parser),
}

impl StreamParser {
    /// A fresh parser for `format`'s stream.
    pub fn new(format: WireFormat) -> Self {
        match format {
            WireFormat::Anthropic => StreamParser::Anthropic(Default::default()),
            WireFormat::OpenAiChat => StreamParser::OpenAiChat(Default::default()),
            WireFormat::OpenAiResponses => StreamParser::OpenAiResponses(Default::default()),
        }
    }

    /// The format this parser reads.
    pub fn format(&self) -> WireFormat {
        match self {
            StreamParser::Anthropic(_) => WireFormat::Anthropic,
            StreamParser::OpenAiChat(_) => WireFormat::OpenAiChat,
            StreamParser::OpenAiResponses(_) => WireFormat::OpenAiResponses,
        }
    }

    /// Feeds one SSE event's `data` (JSON text; `[DONE]` for Chat
    /// Completions).
    pub fn feed<S: StreamSink>(
        &mut self,
        data: &str,
        sink: S,
    ) -> Result<(), StreamError<S::Error>> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            return match self {
                StreamParser::OpenAiChat(p) => p.done(sink),
                _ => Ok(()),
            };
        }
        let event: Value =
            serde_json::from_str(data).map_err(|e| StreamError::BadEvent(e.to_string()))?;
        self.feed_value(&event, sink)
    }

    /// Feeds one event already parsed.
    pub fn feed_value<S: StreamSink>(
        &mut self,
        event: &Value,
        sink: S,
    ) -> Result<(), StreamError<S::Error>> {
        match self {
            StreamParser::Anthropic(p) => p.feed(event, sink),
            StreamParser::OpenAiChat(p) => p.feed(event, sink),
            StreamParser::OpenAiResponses(p) => p.feed(event, sink),
        }
    }

    /// True once the format's final event has arrived.
    pub fn is_complete(&self) -> bool {
        match self {
            StreamParser::Anthropic(p) => p.is_complete(),
            StreamParser::OpenAiChat(p) => p.is_complete(),
            StreamParser::OpenAiResponses(p) => p.is_complete(),
        }
    }

    /// The stream is over (ended or cut): hands over any call still held
    /// (Chat Completions has no per-call end event, so its last call is
    /// complete only now, and only if the stream was not cut) and returns
    /// what the stream amounted to.
    pub fn finish<S: StreamSink>(self, sink: S) -> Result<Completed, StreamError<S::Error>> {
        match self {
            StreamParser::Anthropic(p) => Ok(p.finish()),
            StreamParser::OpenAiChat(p) => p.finish(sink),
            StreamParser::OpenAiResponses(p) => Ok(p.finish()),
        }
    }
}

/// The event's `type`, or "".
pub(crate) fn event_type(event: &Value) -> &str {
    event.get("type").and_then(Value::as_str).unwrap_or("")
}

/// A provider error object carried by an event.
pub(crate) fn provider_error<E>(event: &Value) -> StreamError<E> {
    StreamError::Provider(event.get("error").cloned().unwrap_or_else(|| event.clone()))
}
