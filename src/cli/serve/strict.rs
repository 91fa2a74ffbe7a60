//! The shape of every line the host sends, checked before the line acts.
//!
//! A field the host misspelled used to be ignored: `{"type":"interrupt",
//! "batchh":"A"}` interrupted the latest batch instead of `A`. Each line
//! type here is a struct that refuses unknown fields and fields of the
//! wrong type, so such a line becomes an `error` line naming the field and
//! does nothing: Baton never acts on a guessed target.
//!
//! A new line type gets one struct and one arm in [`check`] (and, for lines
//! naming an `agent_id`, in [`check_agent`]). Deep payloads (a `tool_use`
//! block, a whole message, a stream event) are checked for their kind
//! here (object, text) and in detail by the parsers that read them.

// The structs check and document each line's shape. The lines in
// [`Checked`] reach their handlers as structs, parsed once; the others'
// handlers still read the line itself, so their fields are never read here.
#![allow(dead_code)]

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// Every line type the host may send without an `agent_id`, as the
/// unknown-type error lists them (tests/docs_true.rs holds
/// docs/serve-protocol.md to this list). A new type is added here too.
pub(super) const HOST_LINES: &[&str] = &[
    "add",
    "message",
    "stream",
    "end",
    "interrupt",
    "cancel",
    "background",
    "tasks",
    "task_stop",
    "task_output",
    "approve",
    "elicitation",
    "question_answer",
    "hook_answer",
    "hook_event",
    "tools",
    "reset_tools",
    "shutdown",
];

/// The line types that name an `agent_id` (a subagent's message).
pub(super) const AGENT_LINES: &[&str] = &["add", "end", "subagent_result"];

/// The error for a line of no known type.
pub(super) fn unknown_type(kind: &str) -> String {
    format!(
        "unknown message type `{kind}` (expected one of: {}; with `agent_id`: {})",
        HOST_LINES.join(", "),
        AGENT_LINES.join(", ")
    )
}

/// A line checked against its struct and kept, for the handlers that take
/// the struct instead of reading the line again.
#[derive(Debug)]
pub(super) enum Checked {
    Interrupt(InterruptLine),
    Cancel(CancelLine),
    Background(BackgroundLine),
    Approve(ApproveLine),
    Tasks,
    TaskStop(TaskLine),
    TaskOutput(TaskLine),
    /// Checked; its handler reads the line itself.
    Line,
}

/// Checks line `msg` of type `kind` against its struct. Types not listed
/// are left to the dispatcher (which reports unknown ones).
pub(super) fn check(kind: &str, msg: &Value) -> Result<Checked, String> {
    match kind {
        "add" => parse::<AddLine>(kind, msg).map(|_| Checked::Line),
        "end" => parse::<EndLine>(kind, msg).map(|_| Checked::Line),
        "message" => parse::<MessageLine>(kind, msg).map(|_| Checked::Line),
        "stream" => parse::<StreamLine>(kind, msg).map(|_| Checked::Line),
        "interrupt" => parse(kind, msg).map(Checked::Interrupt),
        "cancel" => parse(kind, msg).map(Checked::Cancel),
        "background" => parse(kind, msg).map(Checked::Background),
        "approve" => parse(kind, msg).map(Checked::Approve),
        "elicitation" => parse::<ElicitationLine>(kind, msg).map(|_| Checked::Line),
        "question_answer" => parse::<QuestionAnswerLine>(kind, msg).map(|_| Checked::Line),
        "hook_answer" => parse::<HookAnswerLine>(kind, msg).map(|_| Checked::Line),
        "hook_event" => parse::<HookEventLine>(kind, msg).map(|_| Checked::Line),
        "tools" => parse::<ToolsLine>(kind, msg).map(|_| Checked::Line),
        "tasks" => parse::<BareLine>(kind, msg).map(|_| Checked::Tasks),
        "reset_tools" | "shutdown" => parse::<BareLine>(kind, msg).map(|_| Checked::Line),
        "task_stop" => parse(kind, msg).map(Checked::TaskStop),
        "task_output" => parse(kind, msg).map(Checked::TaskOutput),
        _ => Ok(Checked::Line),
    }
}

/// Checks a line that names an `agent_id` (a subagent's message).
pub(super) fn check_agent(kind: &str, msg: &Value) -> Result<(), String> {
    match kind {
        "add" => parse::<AgentAddLine>(kind, msg).map(drop),
        "end" => parse::<AgentEndLine>(kind, msg).map(drop),
        "subagent_result" => parse::<SubagentResultLine>(kind, msg).map(drop),
        _ => Ok(()),
    }
}

/// Deserializes `msg` as `T`; the error names the field and the line type.
pub(super) fn parse<T: DeserializeOwned>(kind: &str, msg: &Value) -> Result<T, String> {
    // `&Value` is a borrowing deserializer: nothing of the line is copied
    // except the small fields the structs keep.
    match serde_path_to_error::deserialize::<_, T>(msg) {
        Ok(line) => Ok(line),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let place = if path == "." || path.is_empty() {
                String::new()
            } else {
                format!("field `{path}`: ")
            };
            Err(format!(
                "bad `{kind}` line: {place}{inner}; the line was ignored"
            ))
        }
    }
}

/// A batch as lines name it: Baton's number or the host's own name.
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "a batch number or the host's batch name (a string)"
)]
pub(super) enum BatchRef {
    Number(u64),
    Name(String),
}

/// A JSON object whose content another parser reads.
#[derive(Debug)]
pub(super) struct Object;

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Object;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Object)
            }
        }
        d.deserialize_map(V)
    }
}

/// A stream event: the SSE data as an object, or as text (`[DONE]`).
#[derive(Debug, Deserialize)]
#[serde(untagged, expecting = "an object or a string (the SSE data)")]
pub(super) enum StreamEvent {
    Object(Object),
    Text(String),
}

/// A tool's input: an object, or JSON text (the model's raw arguments).
#[derive(Debug, Deserialize)]
#[serde(untagged, expecting = "an object or JSON text")]
pub(super) enum Input {
    Object(Object),
    Text(String),
}

/// The `type` field, already read by the dispatcher.
type Kind = IgnoredAny;

/// `add`: one call, wrapped (`tool_use`, `tool_call`, `item`) or with the
/// call's own fields at the top level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AddLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub batch: Option<String>,
    pub tool_use: Option<Object>,
    pub tool_call: Option<Object>,
    pub item: Option<Object>,
    /// A per-call deadline from the host, beside the tool's own timeout.
    pub timeout_ms: Option<u64>,
    // A call at the top level: Anthropic (`id`, `name`, `input`), Chat
    // Completions (`id`, `function`), Responses (`call_id`, `name`,
    // `arguments`, `status`).
    pub id: Option<String>,
    pub name: Option<String>,
    pub input: Option<Input>,
    pub function: Option<Object>,
    pub call_id: Option<String>,
    pub arguments: Option<String>,
    pub status: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EndLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub batch: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MessageLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub message: MessageBody,
    pub format: Option<String>,
    pub batch: Option<String>,
}

/// A whole message (an object) or a Responses output (a list of items).
///
/// Not `#[serde(untagged)]`: an untagged enum first copies the whole value
/// into serde's buffer to try each variant, which for a message of 10,000
/// calls is a second tree of the message on every line. The shape is told
/// from the first token instead.
#[derive(Debug)]
pub(super) enum MessageBody {
    Object(Object),
    Items(Vec<Object>),
}

impl<'de> Deserialize<'de> for MessageBody {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MessageBody;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an assistant message (an object) or a list of output items")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MessageBody, A::Error> {
                Object::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(MessageBody::Object)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<MessageBody, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Object>()? {
                    items.push(item);
                }
                Ok(MessageBody::Items(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StreamLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub event: StreamEvent,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InterruptLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    #[serde(rename = "kind")]
    pub interrupt: Option<String>,
    pub batch: Option<BatchRef>,
}

/// `cancel`: stops one call, by id, in the named batch or any running one.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CancelLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub id: String,
    pub batch: Option<BatchRef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BackgroundLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub call_id: Option<String>,
    pub batch: Option<BatchRef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApproveLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub request_id: u64,
    pub decision: String,
    /// Kept whole: the call runs with it (see `approve::approval`).
    pub updated_input: Option<serde_json::Map<String, Value>>,
    pub remember: Option<bool>,
    pub reason: Option<String>,
    pub interrupt: Option<bool>,
    /// The mode to switch to, answering a `plan_approval` request.
    pub mode: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ElicitationLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub request_id: u64,
    pub action: String,
    pub content: Option<Object>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub task_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QuestionAnswerLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub request_id: u64,
    pub decision: String,
    pub answers: Option<serde_json::Map<String, Value>>,
    pub annotations: Option<Object>,
    pub response: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HookAnswerLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub request_id: String,
    pub answer: Option<IgnoredAny>,
    pub error: Option<String>,
}

/// The event's own fields are checked against Claude Code's types by
/// `hook_event::parse`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HookEventLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub event: String,
    pub input: Option<Object>,
    /// Echoed in the `hook_event_result` line.
    pub id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub format: Option<String>,
    /// Anthropic mid-conversation tool changes instead of a rewritten list.
    pub changes: Option<bool>,
}

/// `reset_tools`, `shutdown`: nothing but the type.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BareLine {
    #[serde(rename = "type")]
    pub kind: Kind,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentAddLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub agent_id: String,
    pub tool_use: Option<Object>,
    pub id: Option<String>,
    pub name: Option<String>,
    pub input: Option<Input>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentEndLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub agent_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SubagentResultLine {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub agent_id: String,
    pub text: Option<String>,
    pub usage: Option<Usage>,
    pub model: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_misspelled_field_is_named() {
        let e = check("interrupt", &json!({"type": "interrupt", "batchh": "A"})).unwrap_err();
        assert!(e.contains("`batchh`"), "{e}");
    }

    #[test]
    fn a_mistyped_field_is_named() {
        let e = check(
            "approve",
            &json!({"type": "approve", "request_id": "1", "decision": "allow"}),
        )
        .unwrap_err();
        assert!(e.contains("`request_id`"), "{e}");
        let e = check(
            "add",
            &json!({"type": "add", "tool_use": {}, "timeout_ms": -1}),
        )
        .unwrap_err();
        assert!(e.contains("`timeout_ms`"), "{e}");
    }

    #[test]
    fn good_lines_pass() {
        for (kind, line) in [
            (
                "add",
                json!({"type": "add", "id": "t", "name": "Read", "input": "{}"}),
            ),
            (
                "add",
                json!({"type": "add", "tool_use": {"id": "t"}, "batch": "A", "timeout_ms": 5}),
            ),
            (
                "message",
                json!({"type": "message", "message": [{"type": "function_call"}]}),
            ),
            ("stream", json!({"type": "stream", "event": "[DONE]"})),
            (
                "interrupt",
                json!({"type": "interrupt", "kind": "cancel", "batch": 2}),
            ),
            ("cancel", json!({"type": "cancel", "id": "t", "batch": "A"})),
            ("shutdown", json!({"type": "shutdown"})),
        ] {
            assert!(check(kind, &line).is_ok(), "{line}");
        }
    }
}
