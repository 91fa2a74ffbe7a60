//! The wire-format side of `baton serve`: reading calls in any of the three
//! formats from `add` and `message` lines, and rendering the answer of a
//! batch in the format its calls came in.

use std::collections::HashMap;

use baton::engine::wire::{
    self, anthropic, openai_chat, openai_responses, AnswerWriter, Asked, BoundedMessage, Completed,
    FnSink, StreamError, StreamParser, WireFormat, WireTools,
};
use baton::engine::{CallResult, ToolPool, ToolUse};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

/// `message` lines at least this long are read by [`cut_message_line`]: a
/// shorter one holds too few calls for the cut to matter, and every line
/// would pay for the look at its type.
const CUT_FROM: usize = 1 << 20;

/// A long `message` line read with its calls past the engine's limit of
/// `keep` left unbuilt (see [`BoundedMessage`]): a 64 MiB line of 600,000
/// calls peaked at 2.3 GB read whole. `None` for any other line, or when
/// the line's kind cannot be told for sure (it is then read whole, as
/// before). Lines for a subagent (`agent_id`) are never cut: their calls
/// are counted against another batch.
pub(super) fn cut_message_line(
    line: &str,
    keep: usize,
) -> Option<Result<BoundedMessage<'_>, String>> {
    /// Present, whatever its value (`null` included, as `Value::get` sees it).
    #[derive(Default)]
    struct Present(bool);
    impl<'de> Deserialize<'de> for Present {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            IgnoredAny::deserialize(d).map(|_| Present(true))
        }
    }
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        agent_id: Present,
    }
    if line.len() < CUT_FROM {
        return None;
    }
    let peek: Peek = serde_json::from_str(line).ok()?;
    if peek.kind.as_deref() != Some("message") || peek.agent_id.0 {
        return None;
    }
    Some(BoundedMessage::from_field(line, "message", keep).map_err(|e| e.to_string()))
}

/// What the session knows about formats: the one fixed by `--format` (if
/// any) and each format's view of the pool.
pub(super) struct Wire {
    pool: ToolPool,
    fixed: Option<WireFormat>,
    tools: HashMap<WireFormat, WireTools>,
    /// The stream being fed by `stream` lines, if one is open.
    stream: Option<StreamParser>,
    /// `--tool-set`: calls in its names run as the tools underneath.
    pub set: baton::engine::wire::ToolSet,
    /// Responses items of OpenAI's native local tools read from the last
    /// `message` or `stream` line, until the session moves them to the
    /// batch they belong to ([`Wire::take_noted`]; each such line starts
    /// afresh): their results go back in the item's own
    /// output type. Kept per batch, not per session, so that two batches
    /// at once that reuse a call id cannot answer each other's calls in
    /// the wrong type.
    noted: Vec<Value>,
}

impl Wire {
    pub(super) fn new(pool: ToolPool, fixed: Option<WireFormat>) -> Self {
        Wire {
            pool,
            fixed,
            tools: HashMap::new(),
            stream: None,
            set: Default::default(),
            noted: Vec::new(),
        }
    }

    /// The pool changed between messages (MCP `tools/list_changed`).
    pub(super) fn set_pool(&mut self, pool: ToolPool) {
        self.pool = pool;
        self.tools.clear();
    }

    /// The format fixed for the session, if any.
    pub(super) fn fixed(&self) -> Option<WireFormat> {
        self.fixed
    }

    fn tools(&mut self, format: WireFormat) -> &WireTools {
        let pool = &self.pool;
        self.tools
            .entry(format)
            .or_insert_with(|| WireTools::new(pool, format))
    }

    /// Undoes what the format forced on the call (mapped name, nulls).
    pub(super) fn resolve(&mut self, format: WireFormat, call: ToolUse) -> ToolUse {
        let set = self.set;
        baton::tool_set::translate(set, self.tools(format).resolve(call))
    }

    /// The call of an `add` line: a `tool_use` block (Anthropic), a
    /// `tool_call` (Chat Completions), an `item` (a Responses
    /// `function_call`), or one of them at the top level.
    pub(super) fn add_line(&mut self, msg: &Value) -> Result<(WireFormat, ToolUse), String> {
        let (body, hinted) = if let Some(b) = msg.get("tool_use") {
            (b, Some(WireFormat::Anthropic))
        } else if let Some(b) = msg.get("tool_call") {
            (b, Some(WireFormat::OpenAiChat))
        } else if let Some(b) = msg.get("item") {
            (b, Some(WireFormat::OpenAiResponses))
        } else {
            (msg, None)
        };
        let shape = if body.get("function").is_some() {
            WireFormat::OpenAiChat
        } else if body.get("call_id").is_some() {
            WireFormat::OpenAiResponses
        } else {
            WireFormat::Anthropic
        };
        let format = hinted.unwrap_or(shape);
        if let Some(fixed) = self.fixed.filter(|f| *f != format) {
            return Err(format!(
                "this call is in the {format} format but the session speaks {fixed}"
            ));
        }
        let call = match format {
            WireFormat::OpenAiChat => openai_chat::message::tool_use_from_call(body),
            WireFormat::OpenAiResponses => openai_responses::message::tool_use_from_item(body),
            _ => anthropic::tool_use_from_block(body),
        }?;
        Ok((format, self.resolve(format, call)))
    }

    /// The calls of a `message` line's message (in its `format` field's
    /// format, the session's, or the detected one). `cut` is the line read
    /// by [`cut_message_line`], when it was.
    pub(super) fn message_line(
        &mut self,
        msg: &Value,
        cut: Option<&BoundedMessage>,
    ) -> Result<(WireFormat, Vec<ToolUse>), String> {
        // What an earlier line noted and no batch took is not this one's.
        self.noted.clear();
        let message = msg.get("message").unwrap_or(&Value::Null);
        let named = match msg.get("format").and_then(Value::as_str) {
            Some(name) => Some(name.parse::<WireFormat>()?),
            None => None,
        };
        let (format, calls) = match cut {
            Some(cut) => cut.parse(named.or(self.fixed)),
            None => wire::parse(message, named.or(self.fixed)),
        }
        .map_err(|e| e.to_string())?;
        if format == WireFormat::OpenAiResponses {
            let cut_items = cut.map(BoundedMessage::output_items).transpose();
            let cut_items = cut_items.map_err(|e| e.to_string())?;
            let items = match &cut_items {
                Some(items) => items.as_slice(),
                None => openai_responses::message::output_of(message).unwrap_or(&[]),
            };
            for item in items {
                self.note_native(item);
            }
        }
        let calls = calls.into_iter().map(|c| self.resolve(format, c)).collect();
        Ok((format, calls))
    }
}

impl Wire {
    /// Keeps a native local tool item (`shell_call`, …) until answered.
    fn note_native(&mut self, item: &Value) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        if openai_responses::native::KINDS.contains(&kind)
            && item.get("call_id").and_then(Value::as_str).is_some()
        {
            self.noted.push(item.clone());
        }
    }

    /// The native items noted since the last call, for the batch the line
    /// that carried them went to.
    pub(super) fn take_noted(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.noted)
    }

    /// What a `done` line carries as `message`, written: the answer in
    /// `format`, each native call's result in its item's output type (the
    /// batch's `native` items), and (Anthropic) the batch's hook `context`
    /// after the results.
    pub(super) fn answer(
        format: WireFormat,
        results: &[CallResult],
        native: Vec<Value>,
        context: &[String],
    ) -> Vec<u8> {
        let asked = if format == WireFormat::OpenAiResponses {
            Asked::from_items(native)
        } else {
            Asked::default()
        };
        let mut writer = AnswerWriter::new(format, &asked, Vec::new());
        for result in results {
            // Writing into memory cannot fail.
            let _ = writer.push(result);
        }
        writer.finish(context).unwrap_or_default()
    }
}

/// What one `stream` line amounted to.
pub(super) struct StreamStep {
    pub format: WireFormat,
    /// Calls completed by this event, in order, ready to add.
    pub calls: Vec<ToolUse>,
    /// The stream is over: its final event arrived (or it failed).
    pub finished: Option<Result<Completed, String>>,
}

/// The format a raw stream event belongs to, from its shape.
fn stream_format(event: &Value) -> Option<WireFormat> {
    if event.as_str() == Some("[DONE]") || event.get("choices").is_some() {
        return Some(WireFormat::OpenAiChat);
    }
    let typ = event.get("type").and_then(Value::as_str)?;
    if typ.starts_with("response.") {
        Some(WireFormat::OpenAiResponses)
    } else if typ.starts_with("message_") || typ.starts_with("content_block_") || typ == "ping" {
        Some(WireFormat::Anthropic)
    } else {
        None
    }
}

impl Wire {
    /// Feeds one raw stream event (`event`: the SSE data as an object, or
    /// as text such as `[DONE]`). The first event of a stream picks the
    /// parser; the stream ends at the format's final event.
    pub(super) fn stream_line(&mut self, msg: &Value) -> Result<StreamStep, String> {
        self.noted.clear();
        let event = msg.get("event").ok_or("a stream line needs `event`")?;
        if self.stream.is_none() && event.as_str() == Some("[DONE]") {
            return Err("`[DONE]` without an open stream".into());
        }
        let parser = match self.stream.take() {
            Some(p) => p,
            None => {
                let format = self
                    .fixed
                    .or_else(|| stream_format(event))
                    .ok_or("cannot tell the stream's format from its first event; start serve with --format")?;
                StreamParser::new(format)
            }
        };
        let mut parser = parser;
        let format = parser.format();
        if let Some(item) = event.get("item") {
            self.note_native(item);
        } else if let Some(Ok(v)) = event.as_str().map(serde_json::from_str::<Value>) {
            if let Some(item) = v.get("item") {
                self.note_native(item);
            }
        }
        let mut calls = Vec::new();
        let fed = match event {
            Value::String(data) => parser.feed(data, FnSink(|c| calls.push(c))),
            other => parser.feed_value(other, FnSink(|c| calls.push(c))),
        };
        let calls: Vec<ToolUse> = calls.into_iter().map(|c| self.resolve(format, c)).collect();
        let finished = match fed {
            Err(StreamError::BadEvent(e)) => {
                // One bad event does not end the stream.
                self.stream = Some(parser);
                return Err(format!("stream event: {e}"));
            }
            Err(e) => Some(Err(e.to_string())),
            Ok(()) if parser.is_complete() => Some(self.finish_parser(parser)),
            Ok(()) => {
                self.stream = Some(parser);
                None
            }
        };
        Ok(StreamStep {
            format,
            calls,
            finished,
        })
    }

    /// Ends the open stream, if any (the host said `end`, or the session is
    /// closing): a Chat Completions call still held is handed over only if
    /// its arguments are whole.
    pub(super) fn end_stream(
        &mut self,
    ) -> Option<(WireFormat, Vec<ToolUse>, Result<Completed, String>)> {
        let parser = self.stream.take()?;
        let format = parser.format();
        let mut calls = Vec::new();
        let done = parser
            .finish(FnSink(|c| calls.push(c)))
            .map_err(|e| e.to_string());
        let calls = calls.into_iter().map(|c| self.resolve(format, c)).collect();
        Some((format, calls, done))
    }

    fn finish_parser(&mut self, parser: StreamParser) -> Result<Completed, String> {
        parser.finish(FnSink(|_| {})).map_err(|e| e.to_string())
    }
}

/// The line telling the host what the stream amounted to.
pub(super) fn stream_done_line(batch: Option<u64>, done: &Result<Completed, String>) -> Value {
    match done {
        Ok(c) => {
            let mut line = serde_json::json!({
                "type": "stream_done",
                "batch": batch,
                "complete": c.complete,
                "stop_reason": c.stop_reason,
                "calls": c.calls,
                "assistant": c.message,
            });
            if !c.diagnostics.is_empty() {
                line["diagnostics"] = serde_json::json!(c.diagnostics);
            }
            line
        }
        Err(e) => serde_json::json!({"type": "stream_done", "batch": batch, "error": e}),
    }
}
