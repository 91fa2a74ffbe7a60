//! A message read with at most `keep` calls made whole.
//!
//! A message may carry more calls than a batch runs: calls past the
//! runtime's `max_calls_per_message` are answered with an error each and
//! never run. Parsed as one `serde_json::Value`, a message costs about
//! eight times its text (100,000 `tool_use` blocks: 63 MB of maps, and a
//! second copy of every input when the calls are made), so the memory of a
//! run grew with the message, not with the limit.
//!
//! [`BoundedMessage`] reads the lists where calls live (Anthropic
//! `content`, Chat Completions `tool_calls` at the top or in a choice's
//! `message`, Responses `output` or a bare list of items) element by
//! element. Up to and including the `keep`-th call of a list, elements
//! become `Value`s as usual; after it, each element stays a slice of the
//! text (16 bytes) and is read only for what answering it needs: its type,
//! id and name, and a shell call's `max_output_length`. Its input is never
//! built. Everything else of the message is read as usual, so detecting the
//! format, checking the message and choosing the list work on the same
//! tree as before (`tests` compare every call with the whole parse).
//!
//! A call read this way is made with an input error, so a caller that asks
//! for fewer calls than its runtime runs gets refusals, never calls run
//! with an empty input.

use std::collections::HashMap;

use serde::de::{MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{anthropic, detect, openai_chat, openai_responses, WireError, WireFormat};
use baton_tool::call::ToolUse;

/// A message whose call lists were cut after their `keep`-th call.
#[derive(Debug)]
pub struct BoundedMessage<'t> {
    head: Value,
    /// The JSON pointer of the message in `head`.
    base: String,
    /// The rest of each cut list, by the JSON pointer of the list.
    tails: HashMap<String, Vec<&'t RawValue>>,
    keep: usize,
}

/// What elements of a list count as calls (the format parsers' own rule).
#[derive(Clone, Copy)]
enum List {
    /// Anthropic `content`: `tool_use` blocks.
    Blocks,
    /// Chat Completions `tool_calls`: every entry.
    Entries,
    /// Responses `output`: `function_call` and native items.
    Items,
}

impl List {
    fn counts(self, element: &Value) -> bool {
        let kind = element.get("type").and_then(Value::as_str);
        match self {
            List::Blocks => kind == Some("tool_use"),
            List::Entries => true,
            List::Items => kind.is_some_and(openai_responses::native::is_call),
        }
    }
}

fn not_json(e: serde_json::Error) -> WireError {
    WireError::NotJson(e.to_string())
}

impl<'t> BoundedMessage<'t> {
    /// Reads the message `text`, making at most `keep` calls of each list
    /// whole (at least one, so the format can still be told).
    pub fn from_str(text: &'t str, keep: usize) -> Result<Self, WireError> {
        let mut message = BoundedMessage::empty(keep, String::new());
        let root: &RawValue = serde_json::from_str(text).map_err(not_json)?;
        message.head = message.root(root, "")?;
        Ok(message)
    }

    /// Reads `text`, an object (a host's protocol line) whose field `field`
    /// is the message; its other fields are read whole.
    pub fn from_field(text: &'t str, field: &str, keep: usize) -> Result<Self, WireError> {
        let base = format!("/{}", field.replace('~', "~0").replace('/', "~1"));
        let mut message = BoundedMessage::empty(keep, base.clone());
        let root: &RawValue = serde_json::from_str(text).map_err(not_json)?;
        if !root.get().starts_with('{') {
            message.head = whole(root)?;
            return Ok(message);
        }
        let mut map = Map::new();
        for (key, raw) in object(root)? {
            let value = match key == field {
                true => message.root(raw, &base)?,
                false => whole(raw)?,
            };
            map.insert(key, value);
        }
        message.head = Value::Object(map);
        Ok(message)
    }

    fn empty(keep: usize, base: String) -> Self {
        BoundedMessage {
            head: Value::Null,
            base,
            tails: HashMap::new(),
            keep: keep.max(1),
        }
    }

    /// A message at `prefix`: its call lists are cut.
    fn root(&mut self, raw: &'t RawValue, prefix: &str) -> Result<Value, WireError> {
        Ok(match raw.get().as_bytes().first() {
            Some(b'[') => self.list(raw, List::Items, prefix.to_string())?,
            Some(b'{') => {
                let mut map = Map::new();
                for (key, raw) in object(raw)? {
                    let pointer = format!("{prefix}/{key}");
                    let value = match key.as_str() {
                        "content" => self.list(raw, List::Blocks, pointer)?,
                        "tool_calls" => self.list(raw, List::Entries, pointer)?,
                        "output" => self.list(raw, List::Items, pointer)?,
                        "choices" => self.choices(raw, &pointer)?,
                        _ => whole(raw)?,
                    };
                    map.insert(key, value);
                }
                Value::Object(map)
            }
            _ => whole(raw)?,
        })
    }

    /// The message (the whole text for [`Self::from_str`]), its call lists
    /// cut.
    pub fn message(&self) -> &Value {
        self.head.pointer(&self.base).unwrap_or(&Value::Null)
    }

    /// The whole text's value, call lists cut (for what else it says, such
    /// as a completion's other choices or a line's other fields).
    pub fn head(&self) -> &Value {
        &self.head
    }

    /// The calls of the message in `format` (or the detected one), as
    /// [`detect::parse`] reads them from the whole message; calls past
    /// `keep` carry their id and name and an input error instead of their
    /// input.
    pub fn parse(
        &self,
        format: Option<WireFormat>,
    ) -> Result<(WireFormat, Vec<ToolUse>), WireError> {
        let (format, mut calls) = detect::parse(self.message(), format)?;
        let Some((start, tail)) = self.tail_of(format) else {
            return Ok((format, calls));
        };
        let note = format!(
            "not read: past the first {} calls of the message",
            self.keep
        );
        for (offset, raw) in tail.iter().enumerate() {
            let element = skeleton(raw)?;
            let index = start + offset;
            let call = match format {
                WireFormat::Anthropic => anthropic::message::block_call(index, &element),
                WireFormat::OpenAiChat => Some(openai_chat::message::entry_call(index, &element)),
                WireFormat::OpenAiResponses => {
                    openai_responses::message::item_call(index, &element)
                }
            };
            if let Some(call) = call {
                let mut call = call?;
                call.input = Value::Object(Map::new());
                call.input_error = Some(note.clone());
                calls.push(call);
            }
        }
        Ok((format, calls))
    }

    /// The Responses output items, with those past the cut reduced to what
    /// answering them reads (for [`super::Asked`]).
    pub fn output_items(&self) -> Result<Vec<Value>, WireError> {
        let mut items = openai_responses::message::output_of(self.message())
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        if let Some((_, tail)) = self.tail_of(WireFormat::OpenAiResponses) {
            for raw in tail {
                items.push(skeleton(raw)?);
            }
        }
        Ok(items)
    }

    /// Where the list `format`'s parser reads starts its tail, and the tail.
    /// Mirrors each parser's choice of list.
    fn tail_of(&self, format: WireFormat) -> Option<(usize, &[&'t RawValue])> {
        let message = self.message();
        let list = match format {
            WireFormat::Anthropic => "/content".to_string(),
            WireFormat::OpenAiChat => match message.get("choices").and_then(Value::as_array) {
                Some(choices) => format!(
                    "/choices/{}/message/tool_calls",
                    openai_chat::message::first_choice_at(choices)?
                ),
                None => "/tool_calls".to_string(),
            },
            WireFormat::OpenAiResponses if message.is_array() => String::new(),
            WireFormat::OpenAiResponses => "/output".to_string(),
        };
        let tail = self.tails.get(&format!("{}{list}", self.base))?;
        let start = message.pointer(&list)?.as_array()?.len();
        Some((start, tail))
    }

    /// A list at `pointer`, read whole up to its `keep`-th call.
    fn list(&mut self, raw: &'t RawValue, list: List, pointer: String) -> Result<Value, WireError> {
        if !raw.get().starts_with('[') {
            return whole(raw);
        }
        let elements: Vec<&'t RawValue> = serde_json::from_str(raw.get()).map_err(not_json)?;
        let mut head = Vec::new();
        let mut calls = 0;
        let mut rest = elements.into_iter();
        for element in rest.by_ref() {
            let value = whole(element)?;
            calls += usize::from(list.counts(&value));
            head.push(value);
            if calls == self.keep {
                break;
            }
        }
        let tail: Vec<&'t RawValue> = rest.collect();
        // A repeated key's last list is the one kept, with its own tail.
        if tail.is_empty() {
            self.tails.remove(&pointer);
        } else {
            self.tails.insert(pointer, tail);
        }
        Ok(Value::Array(head))
    }

    /// A completion's `choices`: each choice's `message.tool_calls` is a
    /// call list.
    fn choices(&mut self, raw: &'t RawValue, at: &str) -> Result<Value, WireError> {
        if !raw.get().starts_with('[') {
            return whole(raw);
        }
        let choices: Vec<&'t RawValue> = serde_json::from_str(raw.get()).map_err(not_json)?;
        let mut out = Vec::with_capacity(choices.len());
        for (i, choice) in choices.into_iter().enumerate() {
            if !choice.get().starts_with('{') {
                out.push(whole(choice)?);
                continue;
            }
            let mut map = Map::new();
            for (key, value) in object(choice)? {
                let value = if key == "message" && value.get().starts_with('{') {
                    let mut message = Map::new();
                    for (field, inner) in object(value)? {
                        let pointer = format!("{at}/{i}/message/tool_calls");
                        let inner = match field.as_str() {
                            "tool_calls" => self.list(inner, List::Entries, pointer)?,
                            _ => whole(inner)?,
                        };
                        message.insert(field, inner);
                    }
                    Value::Object(message)
                } else {
                    whole(value)?
                };
                map.insert(key, value);
            }
            out.push(Value::Object(map));
        }
        Ok(Value::Array(out))
    }
}

/// An object's fields in the order of the text. Inserted into a [`Map`]
/// one by one, a repeated key keeps its first place and its last value, as
/// when the object is read into a `Value`.
fn object(raw: &RawValue) -> Result<Vec<(String, &RawValue)>, WireError> {
    struct Fields<'t>(Vec<(String, &'t RawValue)>);
    impl<'de> Deserialize<'de> for Fields<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Fields<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                    let mut fields = Vec::new();
                    while let Some(entry) = map.next_entry()? {
                        fields.push(entry);
                    }
                    Ok(Fields(fields))
                }
            }
            d.deserialize_map(V)
        }
    }
    let fields: Fields = serde_json::from_str(raw.get()).map_err(not_json)?;
    Ok(fields.0)
}

fn whole(raw: &RawValue) -> Result<Value, WireError> {
    serde_json::from_str(raw.get()).map_err(not_json)
}

/// What answering a call past the cut reads: the fields that tell its
/// kind, id and tool, and a shell call's output limit. Any other field is
/// skipped unread.
#[derive(Deserialize)]
struct Lean {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    function: Option<LeanFunction>,
    action: Option<LeanAction>,
}

#[derive(Deserialize)]
struct LeanFunction {
    name: Option<String>,
}

#[derive(Deserialize)]
struct LeanAction {
    max_output_length: Option<u64>,
}

/// An element past the cut as a small `Value` of the fields [`Lean`]
/// keeps. An element those fields do not fit (an id that is a number, a
/// `function` that is text, a repeated field) is read whole, so it gets the
/// whole parse's answer; that costs one element at a time.
fn skeleton(raw: &RawValue) -> Result<Value, WireError> {
    // Only an object: a derived struct would also read a JSON array
    // field by field.
    let lean = match raw.get().starts_with('{') {
        true => serde_json::from_str::<Lean>(raw.get()).ok(),
        false => None,
    };
    let Some(lean) = lean else {
        return whole(raw);
    };
    let mut map = Map::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            map.insert(key.to_string(), Value::String(v));
        }
    };
    put("type", lean.kind);
    put("id", lean.id);
    put("call_id", lean.call_id);
    put("name", lean.name);
    if let Some(function) = lean.function {
        let mut f = Map::new();
        if let Some(name) = function.name {
            f.insert("name".into(), Value::String(name));
        }
        map.insert("function".into(), Value::Object(f));
    }
    if let Some(action) = lean.action {
        let mut a = Map::new();
        if let Some(n) = action.max_output_length {
            a.insert("max_output_length".into(), Value::from(n));
        }
        map.insert("action".into(), Value::Object(a));
    }
    Ok(Value::Object(map))
}

#[cfg(test)]
#[path = "bounded_tests.rs"]
mod tests;
