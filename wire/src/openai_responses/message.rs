//! OpenAI Responses: `function_call` items in, `function_call_output` items
//! out, function tool definitions.
//!
//! A response's `output` is a list of items; only `function_call` items are
//! Baton's to execute. Everything else (`message`, `reasoning`,
//! `web_search_call`, `mcp_call`, `code_interpreter_call`, …) belongs to the
//! model or the provider and is passed over.

use serde_json::{json, Value};

use crate::answer::{self, Asked};
use crate::{WireError, WireFormat, WireTools};
use baton_tool::call::{CallResult, ToolUse};
use baton_tool::pool::ToolPool;

use super::native;

/// The output items of a response object (`{"object":"response",
/// "output":[…]}`), of `{"output":[…]}`, or a bare array of items.
pub fn output_of(message: &Value) -> Result<&[Value], WireError> {
    match message {
        Value::Array(items) => Ok(items),
        Value::Object(obj) => match obj.get("output") {
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(WireError::NotAMessage("`output` must be an array".into())),
            None if obj
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(native::is_call) =>
            {
                Ok(std::slice::from_ref(message))
            }
            None => Err(WireError::NotAMessage(
                "expected a response object with `output`, or an array of output items".into(),
            )),
        },
        _ => Err(WireError::NotAMessage(
            "expected a JSON object or array".into(),
        )),
    }
}

/// The calls of a response, in order: `function_call` items and the
/// native local tools' items (see [`native`]).
pub fn parse_tool_uses(message: &Value) -> Result<Vec<ToolUse>, WireError> {
    output_of(message)?
        .iter()
        .enumerate()
        .filter_map(|(index, item)| item_call(index, item))
        .collect()
}

/// The call output item `index` asks for; `None` for items that are not
/// the client's to execute (messages, reasoning, provider-side tools).
pub(crate) fn item_call(index: usize, item: &Value) -> Option<Result<ToolUse, WireError>> {
    let call = match native::call_of(item) {
        Some(call) => call,
        None if item.get("type").and_then(Value::as_str) == Some("function_call") => {
            tool_use_from_item(item)
        }
        None => return None,
    };
    Some(call.map_err(|reason| WireError::BadToolCall { index, reason }))
}

/// One `function_call` item. The call's id is its `call_id` (what the
/// output item must name), not the item's own `id`.
pub fn tool_use_from_item(item: &Value) -> Result<ToolUse, String> {
    let field = |name: &str| {
        item.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("missing non-empty string field `{name}`"))
    };
    let (id, name) = (field("call_id")?, field("name")?);
    let call = match item.get("arguments") {
        Some(Value::String(text)) => ToolUse::from_json_text(id, name, text),
        Some(v) => ToolUse::new(id, name, v.clone()),
        None => ToolUse::new(id, name, json!({})),
    };
    Ok(call.with_caller(item.get("caller").filter(|c| !c.is_null()).cloned()))
}

/// One `function_call_output` item. Text-only results are a plain string;
/// results with images use the list form (`input_text` / `input_image`).
/// Written by [`crate::answer`], the one renderer of results, and
/// read back, like every answer below.
pub fn output_item(result: &CallResult) -> Value {
    answer::output_item_tree(&Asked::default(), result)
}

/// The items answering a batch whose calls are among `calls` (the
/// response's output items, or the whole conversation's items): each
/// result in the output type of the item that asked for it
/// (`shell_call_output`, `apply_patch_call_output`, …), a
/// `function_call_output` otherwise.
pub fn answer_items<'a>(calls: &Value, results: impl IntoIterator<Item = &'a CallResult>) -> Value {
    let asked = Asked::from_calls(calls);
    answer::answer_tree(WireFormat::OpenAiResponses, &asked, results, &[])
}

/// [`answer_items`] over a list of items.
pub fn answer_items_in<'a>(
    items: &[Value],
    results: impl IntoIterator<Item = &'a CallResult>,
) -> Value {
    let asked = Asked::from_items(items.iter().cloned());
    answer::answer_tree(WireFormat::OpenAiResponses, &asked, results, &[])
}

/// The `function_call_output` items answering a batch, in order.
pub fn output_items<'a>(results: impl IntoIterator<Item = &'a CallResult>) -> Value {
    answer::answer_tree(WireFormat::OpenAiResponses, &Asked::default(), results, &[])
}

/// Function tool definitions of the pool, in the Responses shape (flat, not
/// nested under `function` as in Chat Completions; names mapped, strict
/// schemas where possible).
pub fn tool_definitions(pool: &ToolPool) -> Value {
    WireTools::new(pool, WireFormat::OpenAiResponses).definitions()
}
