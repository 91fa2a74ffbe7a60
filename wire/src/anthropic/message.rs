//! Anthropic Messages: `tool_use` in, `tool_result` out, tool definitions.

use serde_json::{Map, Value};

use crate::answer::{self, Asked};
use crate::{WireError, WireFormat, WireTools};
use baton_tool::call::{CallResult, ToolUse};
use baton_tool::pool::ToolPool;

/// The `tool_use` blocks of an assistant message, in order. Accepts a message
/// (`{"role":"assistant","content":[…]}`) or an API response object
/// (`{"type":"message",…}`); other block types are passed over.
pub fn parse_tool_uses(message: &Value) -> Result<Vec<ToolUse>, WireError> {
    let obj = message
        .as_object()
        .ok_or_else(|| WireError::NotAMessage("expected a JSON object".into()))?;
    let is_response = obj.get("type").and_then(Value::as_str) == Some("message");
    match obj.get("role").and_then(Value::as_str) {
        Some("assistant") => {}
        Some(other) => {
            return Err(WireError::NotAMessage(format!(
                "role is `{other}`, expected `assistant`"
            )))
        }
        None if is_response => {}
        None => return Err(WireError::NotAMessage("no `role` field".into())),
    }
    let content = match obj.get("content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        // A plain string content carries no tool calls.
        Some(Value::String(_)) => return Ok(Vec::new()),
        _ => return Err(WireError::NotAMessage("`content` must be an array".into())),
    };
    content
        .iter()
        .enumerate()
        .filter_map(|(index, block)| block_call(index, block))
        .collect()
}

/// The call entry `index` of `content` asks for; `None` for blocks that
/// are not `tool_use` (text, thinking, server tools' blocks).
pub(crate) fn block_call(index: usize, block: &Value) -> Option<Result<ToolUse, WireError>> {
    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
        return None;
    }
    Some(tool_use_from_block(block).map_err(|reason| WireError::BadToolCall { index, reason }))
}

/// One `tool_use` block (its `type` is not checked, so hosts may also send
/// bare `{id, name, input}` objects). `input` may be JSON text, as it
/// accumulates while streaming; text that does not parse becomes `{}`.
pub fn tool_use_from_block(block: &Value) -> Result<ToolUse, String> {
    let field = |name: &str| {
        block
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("missing non-empty string field `{name}`"))
    };
    let (id, name) = (field("id")?, field("name")?);
    let call = match block.get("input") {
        Some(Value::String(text)) => ToolUse::from_json_text(id, name, text),
        Some(v) => ToolUse::new(id, name, v.clone()),
        None => ToolUse::new(id, name, Value::Object(Map::new())),
    };
    Ok(call.with_caller(block.get("caller").filter(|c| !c.is_null()).cloned()))
}

/// Parses JSON text then [`parse_tool_uses`].
pub fn parse_tool_uses_str(text: &str) -> Result<Vec<ToolUse>, WireError> {
    let value: Value = serde_json::from_str(text).map_err(|e| WireError::NotJson(e.to_string()))?;
    parse_tool_uses(&value)
}

/// One `tool_result` block (written by [`crate::answer`], the one
/// renderer of results, and read back).
pub fn tool_result_block(result: &CallResult) -> Value {
    answer::tool_result_tree(result)
}

/// The user message answering a batch: one `tool_result` per call, in order.
pub fn user_message<'a>(results: impl IntoIterator<Item = &'a CallResult>) -> Value {
    answer::answer_tree(WireFormat::Anthropic, &Asked::default(), results, &[])
}

/// Definitions of the whole pool, in pool order (names mapped where the
/// format forbids them; see [`crate::WireTools`]).
pub fn tool_definitions(pool: &ToolPool) -> Value {
    WireTools::new(pool, WireFormat::Anthropic).definitions()
}
