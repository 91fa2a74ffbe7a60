//! The Chat Completions stream: `chat.completion.chunk` objects whose
//! `choices[0].delta` carries `content`, `refusal` and `tool_calls`
//! fragments, then a `finish_reason`, then `data: [DONE]`.
//!
//! There is no per-call end event. Calls stream one after the other, each
//! under its `index`: the first fragment brings `id` and `function.name`,
//! later ones pieces of `function.arguments`. So a call is complete when a
//! fragment for another index arrives, when a `finish_reason` arrives, or
//! when the stream ends. If the stream is cut (no `finish_reason`, no
//! `[DONE]`), a last call whose arguments do not parse is not handed over:
//! the model never finished it.
//!
//! Baton asks for one choice (`n` = 1). A server that streams several anyway
//! is read for choice 0 only: its text and calls, never a call of another
//! choice (they are alternatives, not parts of one message). The others are
//! named in [`Completed::diagnostics`].

use serde_json::{json, Map, Value};

use crate::stream::{Completed, StreamError, StreamSink};
use baton_tool::call::ToolUse;

#[derive(Debug, Default)]
struct Pending {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// The parser's state for one completion (choice 0).
#[derive(Debug, Default)]
pub struct Parser {
    content: String,
    refusal: Option<String>,
    pending: Option<Pending>,
    /// Calls handed over, as the message keeps them.
    tool_calls: Vec<Value>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    done: bool,
    /// Indexes of choices other than 0 that the stream carried.
    other_choices: std::collections::BTreeSet<u64>,
}

impl Parser {
    /// True after `[DONE]` (a usage chunk may follow the finish reason).
    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// Takes in one chunk (the `data` of an SSE event, parsed); each tool
    /// call goes to `sink` once a later chunk shows it is complete.
    pub fn feed<S: StreamSink>(
        &mut self,
        chunk: &Value,
        mut sink: S,
    ) -> Result<(), StreamError<S::Error>> {
        if let Some(err) = chunk.get("error") {
            return Err(StreamError::Provider(err.clone()));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        // Baton asks for one choice; others (n > 1) are not its to run.
        // A choice without `index` counts as 0 (servers that only ever send
        // one omit it); a second one in the same chunk is another choice.
        let mut choice = None;
        for (position, c) in choices.iter().enumerate() {
            let index = match c.get("index").map(Value::as_u64) {
                Some(Some(i)) => i,
                Some(None) => u64::MAX,
                None if choice.is_none() => 0,
                None => u64::try_from(position).unwrap_or(u64::MAX),
            };
            if index == 0 && choice.is_none() {
                choice = Some(c);
            } else {
                self.other_choices.insert(index);
            }
        }
        let Some(choice) = choice else {
            return Ok(());
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(text);
            sink.text(text).map_err(StreamError::Sink)?;
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.get_or_insert_with(String::new).push_str(text);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for fragment in calls {
                self.fragment(fragment, &mut sink)?;
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
            self.flush(true, &mut sink)?;
        }
        Ok(())
    }

    fn fragment<S: StreamSink>(
        &mut self,
        fragment: &Value,
        sink: &mut S,
    ) -> Result<(), StreamError<S::Error>> {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| StreamError::BadEvent("tool call fragment without `index`".into()))?;
        if self.pending.as_ref().is_some_and(|p| p.index != index) {
            // The next call started: the previous one is complete.
            self.flush(true, sink)?;
        }
        let pending = self.pending.get_or_insert_with(|| Pending {
            index,
            ..Default::default()
        });
        if let Some(id) = fragment.get("id").and_then(Value::as_str) {
            pending.id.push_str(id);
        }
        let function = fragment.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            pending.name.push_str(name);
        }
        if let Some(args) = function.get("arguments").and_then(Value::as_str) {
            pending.arguments.push_str(args);
        }
        Ok(())
    }

    /// Hands the pending call over. `complete`: the model went on past it,
    /// so it is whole; otherwise only arguments that parse are trusted.
    fn flush<S: StreamSink>(
        &mut self,
        complete: bool,
        sink: &mut S,
    ) -> Result<(), StreamError<S::Error>> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let call = ToolUse::from_json_text(&p.id, &p.name, &p.arguments);
        if !complete && call.input_error.is_some() {
            return Ok(());
        }
        self.tool_calls.push(json!({
            "id": p.id,
            "type": "function",
            "function": {"name": p.name, "arguments": p.arguments},
        }));
        sink.call(call).map_err(StreamError::Sink)
    }

    /// `data: [DONE]`.
    pub fn done<S: StreamSink>(&mut self, mut sink: S) -> Result<(), StreamError<S::Error>> {
        self.done = true;
        self.flush(true, &mut sink)
    }

    /// What the stream amounted to, once it ended (or broke off); the call
    /// still open goes to `sink` if the stream completed or its arguments
    /// parse.
    pub fn finish<S: StreamSink>(
        mut self,
        mut sink: S,
    ) -> Result<Completed, StreamError<S::Error>> {
        let complete = self.done || self.finish_reason.is_some();
        self.flush(complete, &mut sink)?;
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            if self.content.is_empty() {
                Value::Null
            } else {
                json!(self.content)
            },
        );
        if let Some(r) = &self.refusal {
            message.insert("refusal".into(), json!(r));
        }
        let calls = self.tool_calls.len();
        if calls > 0 {
            message.insert("tool_calls".into(), Value::Array(self.tool_calls));
        }
        let diagnostics = other_choices_note(&self.other_choices)
            .into_iter()
            .collect();
        Ok(Completed {
            message: Value::Object(message),
            stop_reason: self.finish_reason,
            calls,
            complete,
            usage: self.usage,
            diagnostics,
        })
    }
}

/// What to tell the host when a server sent choices besides 0.
pub(crate) fn other_choices_note(others: &std::collections::BTreeSet<u64>) -> Option<String> {
    if others.is_empty() {
        return None;
    }
    let list: Vec<String> = others
        .iter()
        .map(|i| match *i {
            u64::MAX => "one without a valid index".to_string(),
            i => i.to_string(),
        })
        .collect();
    Some(format!(
        "the server returned {} choices although Baton asks for one (n = 1); only choice 0 \
         was read (its text and tool calls), other choices ignored: {}",
        others.len() + 1,
        list.join(", ")
    ))
}
