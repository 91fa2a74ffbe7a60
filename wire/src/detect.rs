//! Which format a message is in, judged by what it contains.
//!
//! Each format has markers no other format uses: Anthropic `tool_use`
//! blocks in `content` (or `type: "message"`); Chat Completions
//! `tool_calls`, `function_call` or `choices`; Responses `output` items (or
//! `object: "response"`, or a bare list of items). A message with the
//! markers of exactly one format is in that format. One with none carries
//! no calls in any format, so reading it as Anthropic loses nothing. One
//! with the markers of two is ambiguous and refused: guessing could drop
//! the calls of the other.

use serde_json::Value;

use super::{WireError, WireFormat};

/// The formats whose call markers `message` carries.
pub fn markers(message: &Value) -> Vec<WireFormat> {
    let mut found = Vec::new();
    match message {
        Value::Array(items) if items.iter().any(|i| i.get("type").is_some()) => {
            found.push(WireFormat::OpenAiResponses);
        }
        Value::Object(obj) => {
            let content_has_tool_use =
                obj.get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|blocks| {
                        blocks
                            .iter()
                            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    });
            let typ = obj.get("type").and_then(Value::as_str);
            let object = obj.get("object").and_then(Value::as_str);
            if content_has_tool_use || typ == Some("message") && obj.contains_key("content") {
                found.push(WireFormat::Anthropic);
            }
            let has = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
            if has("tool_calls")
                || has("function_call")
                || has("choices")
                || object.is_some_and(|o| o.starts_with("chat.completion"))
            {
                found.push(WireFormat::OpenAiChat);
            }
            if has("output")
                || object == Some("response")
                || typ.is_some_and(super::openai_responses::native::is_call)
            {
                found.push(WireFormat::OpenAiResponses);
            }
        }
        _ => {}
    }
    found
}

/// The format of `message` when it can be told for sure.
pub fn detect(message: &Value) -> Result<WireFormat, WireError> {
    match markers(message).as_slice() {
        [one] => Ok(*one),
        [] => Ok(WireFormat::Anthropic),
        many => Err(WireError::NotAMessage(format!(
            "the message has the markers of several formats ({}); say which with --format",
            many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The calls of `message`, read in `format` (or the detected one). A
/// message that also carries another format's calls is refused rather
/// than read with those calls missing.
pub fn parse(
    message: &Value,
    format: Option<WireFormat>,
) -> Result<(WireFormat, Vec<baton_tool::call::ToolUse>), WireError> {
    let format = match format {
        Some(f) => {
            if let Some(other) = markers(message).into_iter().find(|m| *m != f) {
                return Err(WireError::NotAMessage(format!(
                    "this looks like {other}, not {f}: its calls would be lost (use --format {other})"
                )));
            }
            f
        }
        None => detect(message)?,
    };
    Ok((format, format.parse_tool_uses(message)?))
}
