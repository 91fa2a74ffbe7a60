//! The wire-format side of `baton serve`: reading calls in any of the three
//! formats from `add` and `message` lines, and rendering the answer of a
//! batch in the format its calls came in.

use std::collections::HashMap;

use baton::engine::wire::{self, anthropic, openai_chat, openai_responses, WireFormat, WireTools};
use baton::engine::{CallResult, ToolPool, ToolUse};
use serde_json::Value;

/// What the session knows about formats: the one fixed by `--format` (if
/// any) and each format's view of the pool.
pub struct Wire {
    pool: ToolPool,
    fixed: Option<WireFormat>,
    tools: HashMap<WireFormat, WireTools>,
}

impl Wire {
    pub fn new(pool: ToolPool, fixed: Option<WireFormat>) -> Self {
        Wire {
            pool,
            fixed,
            tools: HashMap::new(),
        }
    }

    /// The format fixed for the session, if any.
    pub fn fixed(&self) -> Option<WireFormat> {
        self.fixed
    }

    fn tools(&mut self, format: WireFormat) -> &WireTools {
        let pool = &self.pool;
        self.tools
            .entry(format)
            .or_insert_with(|| WireTools::new(pool, format))
    }

    /// Undoes what the format forced on the call (mapped name, nulls).
    pub fn resolve(&mut self, format: WireFormat, call: ToolUse) -> ToolUse {
        self.tools(format).resolve(call)
    }

    /// The call of an `add` line: a `tool_use` block (Anthropic), a
    /// `tool_call` (Chat Completions), an `item` (a Responses
    /// `function_call`), or one of them at the top level.
    pub fn add_line(&mut self, msg: &Value) -> Result<(WireFormat, ToolUse), String> {
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
    /// format, the session's, or the detected one).
    pub fn message_line(&mut self, msg: &Value) -> Result<(WireFormat, Vec<ToolUse>), String> {
        let message = msg.get("message").unwrap_or(&Value::Null);
        let named = match msg.get("format").and_then(Value::as_str) {
            Some(name) => Some(name.parse::<WireFormat>()?),
            None => None,
        };
        let (format, calls) =
            wire::parse(message, named.or(self.fixed)).map_err(|e| e.to_string())?;
        let calls = calls.into_iter().map(|c| self.resolve(format, c)).collect();
        Ok((format, calls))
    }
}

/// What a `done` line carries as `message`: the answer in `format`.
pub fn answer(format: WireFormat, results: &[CallResult]) -> Value {
    format.results_message(results.iter())
}
