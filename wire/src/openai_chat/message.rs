//! OpenAI chat completions: `tool_calls` in, `tool` messages out, function
//! tool definitions.

use serde_json::{json, Value};

use crate::answer::{self, Asked};
use crate::{WireError, WireFormat, WireTools};
use baton_tool::call::{CallResult, ToolUse};
use baton_tool::content::ContentBlock;
use baton_tool::pool::ToolPool;

/// The tool calls of an assistant message (`{"role":"assistant",
/// "tool_calls":[…]}`) or of a completion response's choice 0 (see
/// [`choices_note`] for the others).
pub fn parse_tool_uses(message: &Value) -> Result<Vec<ToolUse>, WireError> {
    let message = match message.get("choices").and_then(Value::as_array) {
        Some(choices) => first_choice(choices)
            .and_then(|c| c.get("message"))
            .unwrap_or(&Value::Null),
        None => message,
    };
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return Err(WireError::NotAMessage("expected role `assistant`".into()));
    }
    if message.get("function_call").is_some_and(|f| !f.is_null()) {
        // The deprecated single call has no id to answer with.
        return Err(WireError::NotAMessage(
            "legacy `function_call` is not supported; send `tool_calls`".into(),
        ));
    }
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(calls) => calls,
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| WireError::NotAMessage("`tool_calls` must be an array".into()))?;
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| entry_call(index, call))
        .collect()
}

/// The call entry `index` of `tool_calls` asks for (every entry is one).
pub(crate) fn entry_call(index: usize, call: &Value) -> Result<ToolUse, WireError> {
    tool_use_from_call(call).map_err(|reason| WireError::BadToolCall { index, reason })
}

/// The choice with `index` 0; without indexes, the first one.
fn first_choice(choices: &[Value]) -> Option<&Value> {
    first_choice_at(choices).map(|i| &choices[i])
}

pub(crate) fn first_choice_at(choices: &[Value]) -> Option<usize> {
    choices
        .iter()
        .position(|c| c.get("index").and_then(Value::as_u64) == Some(0))
        .or_else(|| choices.iter().position(|c| c.get("index").is_none()))
}

/// When a completion response carries several choices: which were left
/// unread (only choice 0 runs; calls of different choices never mix).
pub fn choices_note(response: &Value) -> Option<String> {
    let choices = response.get("choices").and_then(Value::as_array)?;
    let chosen = first_choice_at(choices);
    let others: std::collections::BTreeSet<u64> = choices
        .iter()
        .enumerate()
        .filter(|(position, _)| Some(*position) != chosen)
        .map(|(position, c)| match c.get("index") {
            Some(i) => i.as_u64().unwrap_or(u64::MAX),
            None => u64::try_from(position).unwrap_or(u64::MAX),
        })
        .collect();
    super::stream::other_choices_note(&others)
}

/// One entry of `tool_calls` (`{"id", "type": "function", "function":
/// {"name", "arguments"}}`); `arguments` is JSON text, and text that does
/// not parse becomes `{}` with the error kept.
pub fn tool_use_from_call(call: &Value) -> Result<ToolUse, String> {
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("missing non-empty string field `id`")?;
    let function = call.get("function").ok_or("missing `function`")?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("missing non-empty string field `function.name`")?;
    Ok(match function.get("arguments") {
        Some(Value::String(text)) => ToolUse::from_json_text(id, name, text),
        Some(v) => ToolUse::new(id, name, v.clone()),
        None => ToolUse::new(id, name, json!({})),
    })
}

/// The messages answering a batch: one `tool` message per call, in order.
/// A `tool` message carries text only, so images returned by tools follow
/// in one `user` message (as `image_url` data URLs), each introduced by the
/// id of the call that returned it; the tool message says where it went.
/// Written by [`crate::answer`], the one renderer of results, and
/// read back.
pub fn tool_messages<'a>(results: impl IntoIterator<Item = &'a CallResult>) -> Value {
    answer::answer_tree(WireFormat::OpenAiChat, &Asked::default(), results, &[])
}

/// A result's `tool` message text. Its images are moved to `images` (the
/// parts of the user message that follows the `tool` messages), introduced
/// by the call's id, and the text says where they went.
pub(crate) fn tool_text(r: &CallResult, images: &mut Vec<Value>) -> String {
    let mut text = r.text();
    let mut count = 0;
    for block in &r.content {
        if let ContentBlock::Image { media_type, data } = block {
            if count == 0 {
                let intro = format!("Image returned by tool call {}:", r.call_id);
                images.push(json!({"type": "text", "text": intro}));
            }
            let url = format!("data:{media_type};base64,{data}");
            images.push(json!({"type": "image_url", "image_url": {"url": url}}));
            count += 1;
        }
    }
    if count > 0 {
        text.push_str(&format!(
            "\n({count} image(s) returned; attached in the next user message)"
        ));
    }
    text
}

/// Function tool definitions of the pool (names mapped, strict schemas
/// where possible; see [`crate::WireTools`]).
pub fn tool_definitions(pool: &ToolPool) -> Value {
    WireTools::new(pool, WireFormat::OpenAiChat).definitions()
}
