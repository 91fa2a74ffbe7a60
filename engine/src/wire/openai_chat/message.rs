//! OpenAI chat completions: `tool_calls` in, `tool` messages out, function
//! tool definitions.

use serde_json::{json, Value};

use crate::call::{CallResult, ToolUse};
use crate::pool::ToolPool;
use crate::wire::WireError;

/// The tool calls of an assistant message (`{"role":"assistant",
/// "tool_calls":[…]}`) or of a completion response's first choice.
pub fn parse_tool_uses(message: &Value) -> Result<Vec<ToolUse>, WireError> {
    let message = match message.get("choices").and_then(|c| c.get(0)) {
        Some(choice) => choice.get("message").unwrap_or(&Value::Null),
        None => message,
    };
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return Err(WireError::NotAMessage("expected role `assistant`".into()));
    }
    let Some(calls) = message.get("tool_calls") else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| WireError::NotAMessage("`tool_calls` must be an array".into()))?;
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let bad = |reason: &str| WireError::BadToolCall {
                index,
                reason: reason.into(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing `id`"))?;
            let function = call
                .get("function")
                .ok_or_else(|| bad("missing `function`"))?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing `function.name`"))?;
            Ok(match function.get("arguments") {
                Some(Value::String(text)) => ToolUse::from_json_text(id, name, text),
                Some(v) => ToolUse::new(id, name, v.clone()),
                None => ToolUse::new(id, name, json!({})),
            })
        })
        .collect()
}

/// The `tool` messages answering a batch, in order.
pub fn tool_messages<'a>(results: impl IntoIterator<Item = &'a CallResult>) -> Value {
    Value::Array(
        results
            .into_iter()
            .map(|r| {
                let mut text = r.text();
                if r.content.iter().any(|b| b.is_image()) {
                    text.push_str("\n(an image was returned; this format carries text only)");
                }
                json!({"role": "tool", "tool_call_id": r.call_id, "content": text})
            })
            .collect(),
    )
}

/// Function tool definitions of the pool.
pub fn tool_definitions(pool: &ToolPool) -> Value {
    Value::Array(
        pool.tools()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name(),
                        "description": t.def().prompt_text(),
                        "parameters": t.input_schema(),
                    }
                })
            })
            .collect(),
    )
}
