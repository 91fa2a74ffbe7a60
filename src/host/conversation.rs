//! The conversation in the provider's own shapes, and the request body.
//!
//! What the model produced is kept exactly as the stream parser rebuilt it
//! (thinking blocks with their signatures, server tool blocks, reasoning
//! items with their encrypted content): the provider checks some of them
//! when they come back.

use baton_engine::wire::WireFormat;
use baton_engine::CallResult;
use serde_json::{json, Value};

use super::AgentOptions;

/// The messages (or Responses input items) so far.
#[derive(Clone, Debug)]
pub struct Conversation {
    format: WireFormat,
    items: Vec<Value>,
}

impl Conversation {
    /// A conversation opened by the user's `prompt`.
    pub fn new(format: WireFormat, prompt: &str) -> Self {
        Conversation {
            format,
            items: vec![json!({"role": "user", "content": prompt})],
        }
    }

    /// The same, with `reminder` (the deferred tools' names, SPEC §10) as a
    /// text part before the prompt. It stays where it is for the whole
    /// conversation: tools loaded later are added to the request's `tools`,
    /// and the prefix of the conversation (a provider's prompt cache) never
    /// changes.
    pub fn with_reminder(format: WireFormat, prompt: &str, reminder: Option<&str>) -> Self {
        let Some(reminder) = reminder else {
            return Conversation::new(format, prompt);
        };
        let kind = match format {
            WireFormat::OpenAiResponses => "input_text",
            _ => "text",
        };
        let content = json!([
            {"type": kind, "text": reminder},
            {"type": kind, "text": prompt},
        ]);
        Conversation {
            format,
            items: vec![json!({"role": "user", "content": content})],
        }
    }

    /// A conversation continued from `items` (a transcript this loop
    /// produced earlier) with `message` as the next user message.
    pub fn resumed(format: WireFormat, items: Vec<Value>, message: &str) -> Self {
        let mut conversation = Conversation { format, items };
        if conversation.items.is_empty() {
            return Conversation::new(format, message);
        }
        conversation.push_notices(&[message.to_string()]);
        conversation
    }

    /// The conversation's items, as the provider's format has them.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// Appends what the model said (a parser's `Completed::message`).
    pub fn push_assistant(&mut self, message: Value) {
        match (self.format, message) {
            // Responses: a list of output items, each an input item next time.
            (WireFormat::OpenAiResponses, Value::Array(items)) => self.items.extend(items),
            (_, message) => self.items.push(strip_response_fields(message)),
        }
    }

    /// Appends a user message of plain text (a Stop hook's reason to go on).
    pub fn push_user(&mut self, text: &str) {
        self.items.push(json!({"role": "user", "content": text}));
    }

    /// Appends the answer to a batch.
    pub fn push_results(&mut self, results: &[CallResult]) {
        // The conversation's items hold the calls, so native local tools
        // (`shell_call`, …) are answered in their own output types.
        let answer = match self.format {
            WireFormat::OpenAiResponses => {
                baton_engine::wire::openai_responses::answer_items_in(&self.items, results)
            }
            other => other.results_message(results.iter()),
        };
        match answer {
            Value::Array(items) => self.items.extend(items),
            message => self.items.push(message),
        }
    }

    /// Appends notifications for the model (see `notices`) as user text:
    /// in the message that carries the tool results when it is last
    /// (Anthropic), else as a user message of their own.
    pub fn push_notices(&mut self, notices: &[String]) {
        if notices.is_empty() {
            return;
        }
        let text = notices.join("\n");
        let kind = match self.format {
            WireFormat::OpenAiResponses => "input_text",
            _ => "text",
        };
        if self.format == WireFormat::Anthropic {
            if let Some(content) = self
                .items
                .last_mut()
                .filter(|m| m["role"] == "user")
                .and_then(|m| m.get_mut("content"))
                .and_then(Value::as_array_mut)
            {
                content.push(json!({"type": "text", "text": text}));
                return;
            }
        }
        let item = match self.format {
            WireFormat::OpenAiResponses => {
                json!({"type": "message", "role": "user", "content": [{"type": kind, "text": text}]})
            }
            _ => json!({"role": "user", "content": text}),
        };
        self.items.push(item);
    }

    /// Appends Anthropic mid-conversation tool changes (`tool_addition` /
    /// `tool_removal` blocks) in a `role: "system"` message of their own.
    pub fn push_tool_changes(&mut self, changes: Vec<Value>) {
        if !changes.is_empty() {
            use baton_engine::wire::tool_changes::system_message;
            self.items.push(system_message(changes));
        }
    }

    /// Takes the tool change messages out again (the provider refused the
    /// beta; the request's `tools` carries the whole list instead).
    pub fn drop_tool_changes(&mut self) {
        use baton_engine::wire::tool_changes::is_change_message;
        self.items.retain(|m| !is_change_message(m));
    }

    /// The body of the next request, with `defs` as its `tools`.
    pub fn request(&self, options: &AgentOptions, defs: Value) -> Value {
        let has_tools = defs.as_array().is_some_and(|d| !d.is_empty());
        match self.format {
            WireFormat::Anthropic => {
                let mut body = json!({
                    "model": options.model,
                    "max_tokens": options.max_tokens,
                    "messages": self.items,
                    "stream": true,
                });
                if has_tools {
                    body["tools"] = defs;
                }
                if let Some(s) = &options.system {
                    body["system"] = json!(s);
                }
                body
            }
            WireFormat::OpenAiChat => {
                let mut messages = Vec::new();
                if let Some(s) = &options.system {
                    messages.push(json!({"role": "system", "content": s}));
                }
                messages.extend(self.items.iter().cloned());
                let mut body = json!({
                    "model": options.model,
                    "messages": messages,
                    "stream": true,
                    "stream_options": {"include_usage": true},
                    "max_completion_tokens": options.max_tokens,
                });
                if has_tools {
                    body["tools"] = defs;
                    body["parallel_tool_calls"] = json!(true);
                }
                body
            }
            _ => {
                let mut body = json!({
                    "model": options.model,
                    "input": self.items,
                    "stream": true,
                    // Nothing is stored at the provider, so reasoning items
                    // travel back with their encrypted content.
                    "store": false,
                    "include": ["reasoning.encrypted_content"],
                    "max_output_tokens": options.max_tokens,
                });
                if has_tools {
                    body["tools"] = defs;
                    body["parallel_tool_calls"] = json!(true);
                }
                if let Some(s) = &options.system {
                    body["instructions"] = json!(s);
                }
                body
            }
        }
    }
}

/// A rebuilt Anthropic message carries response-only fields (`id`,
/// `model`, `stop_reason`, `usage`, …); a request message has only `role`
/// and `content`. Chat messages keep `role`, `content`, `refusal` and
/// `tool_calls`.
fn strip_response_fields(message: Value) -> Value {
    let Value::Object(mut obj) = message else {
        return message;
    };
    obj.retain(|k, _| matches!(k.as_str(), "role" | "content" | "tool_calls" | "refusal"));
    if obj.get("refusal").is_some_and(Value::is_null) {
        obj.remove("refusal");
    }
    Value::Object(obj)
}
