//! The Anthropic Messages stream: `message_start`, then per content block
//! `content_block_start` / `_delta`s / `content_block_stop`, then
//! `message_delta` (stop reason, usage) and `message_stop`.
//!
//! A `tool_use` block is complete at its `content_block_stop`: its
//! `input_json_delta` fragments are joined and parsed, and the call goes to
//! the sink at once. Every block (text, thinking with its signature,
//! `server_tool_use`, `*_tool_result`, `mcp_tool_use`, `container_upload`,
//! `compaction`, blocks of kinds not known yet) is rebuilt into the message
//! the host keeps; only `tool_use` is Baton's to execute.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::stream::{event_type, provider_error, Completed, StreamError, StreamSink};
use baton_tool::call::ToolUse;

/// A block being streamed.
#[derive(Debug)]
struct Open {
    block: Value,
    /// Joined `input_json_delta` fragments (blocks with a streamed input).
    json: String,
    streamed_json: bool,
}

/// The parser's state for one response.
#[derive(Debug, Default)]
pub struct Parser {
    message: Map<String, Value>,
    open: BTreeMap<usize, Open>,
    /// Finished blocks by index (kept in index order).
    done: BTreeMap<usize, Value>,
    stop_reason: Option<String>,
    usage: Option<Value>,
    calls: usize,
    complete: bool,
}

impl Parser {
    /// Whether the stream's final event arrived.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Takes in one event (the `data` of an SSE event, parsed); each tool
    /// call goes to `sink` the moment it is complete. A provider's `error`
    /// event is an error.
    pub fn feed<S: StreamSink>(
        &mut self,
        event: &Value,
        mut sink: S,
    ) -> Result<(), StreamError<S::Error>> {
        let index = || {
            event
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| StreamError::BadEvent("content block event without `index`".into()))
        };
        match event_type(event) {
            "message_start" => {
                if let Some(Value::Object(m)) = event.get("message") {
                    self.message = m.clone();
                    self.usage = m.get("usage").cloned();
                }
            }
            "content_block_start" => {
                let block = event
                    .get("content_block")
                    .filter(|b| b.is_object())
                    .cloned()
                    .ok_or_else(|| StreamError::BadEvent("no `content_block`".into()))?;
                self.open.insert(
                    index()?,
                    Open {
                        block,
                        json: String::new(),
                        streamed_json: false,
                    },
                );
            }
            "content_block_delta" => {
                let i = index()?;
                let delta = event.get("delta").unwrap_or(&Value::Null);
                let Some(open) = self.open.get_mut(&i) else {
                    return Err(StreamError::BadEvent(format!(
                        "delta for block {i}, which has not started"
                    )));
                };
                apply_delta(open, delta);
                if event_type(delta) == "text_delta" {
                    if let Some(text) = delta.get("text").and_then(Value::as_str) {
                        sink.text(text).map_err(StreamError::Sink)?;
                    }
                }
            }
            "content_block_stop" => {
                let i = index()?;
                let Some(open) = self.open.remove(&i) else {
                    return Err(StreamError::BadEvent(format!(
                        "stop for block {i}, which has not started"
                    )));
                };
                let (block, call) = close(open);
                self.done.insert(i, block);
                if let Some(call) = call {
                    self.calls += 1;
                    sink.call(call).map_err(StreamError::Sink)?;
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(seq) = event.pointer("/delta/stop_sequence") {
                    self.message.insert("stop_sequence".into(), seq.clone());
                }
                if let Some(usage) = event.get("usage") {
                    merge_usage(&mut self.usage, usage);
                }
            }
            "message_stop" => self.complete = true,
            "error" => return Err(provider_error(event)),
            // `ping` and event kinds added later carry nothing to keep.
            _ => {}
        }
        Ok(())
    }

    /// What the stream amounted to, once it ended (or broke off).
    pub fn finish(self) -> Completed {
        let mut message = self.message;
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            Value::Array(self.done.into_values().collect()),
        );
        if let Some(reason) = &self.stop_reason {
            message.insert("stop_reason".into(), json!(reason));
        }
        Completed {
            message: Value::Object(message),
            stop_reason: self.stop_reason,
            calls: self.calls,
            complete: self.complete,
            usage: self.usage,
            diagnostics: Vec::new(),
        }
    }
}

fn apply_delta(open: &mut Open, delta: &Value) {
    let append = |block: &mut Value, field: &str, text: &str| {
        if let Some(obj) = block.as_object_mut() {
            let entry = obj.entry(field).or_insert_with(|| json!(""));
            if let Value::String(s) = entry {
                s.push_str(text);
            } else {
                *entry = json!(text);
            }
        }
    };
    match event_type(delta) {
        "input_json_delta" => {
            open.streamed_json = true;
            if let Some(part) = delta.get("partial_json").and_then(Value::as_str) {
                open.json.push_str(part);
            }
        }
        "text_delta" => {
            if let Some(t) = delta.get("text").and_then(Value::as_str) {
                append(&mut open.block, "text", t);
            }
        }
        "thinking_delta" => {
            if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                append(&mut open.block, "thinking", t);
            }
        }
        "signature_delta" => {
            if let Some(t) = delta.get("signature").and_then(Value::as_str) {
                // A signature arrives whole; it replaces the start's empty one.
                open.block["signature"] = json!(t);
            }
        }
        "citations_delta" => {
            if let Some(c) = delta.get("citation") {
                if let Some(obj) = open.block.as_object_mut() {
                    let list = obj.entry("citations").or_insert_with(|| json!([]));
                    if let Value::Array(items) = list {
                        items.push(c.clone());
                    } else {
                        *list = json!([c]);
                    }
                }
            }
        }
        // A delta kind not known yet: append its string fields to the
        // block's fields of the same name, so nothing streamed is lost.
        _ => {
            if let Some(fields) = delta.as_object() {
                for (k, v) in fields {
                    if let (true, Some(t)) = (k != "type", v.as_str()) {
                        append(&mut open.block, k, t);
                    }
                }
            }
        }
    }
}

/// The finished block, and the call it makes if it is a `tool_use`.
fn close(open: Open) -> (Value, Option<ToolUse>) {
    let Open {
        mut block,
        json,
        streamed_json,
    } = open;
    let is_tool_use = event_type(&block) == "tool_use";
    let mut input_error = None;
    if streamed_json {
        // A block whose input streamed: its start carried `input: {}`.
        let input = if json.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(&json)
        };
        match input {
            Ok(v) => block["input"] = v,
            Err(e) => {
                // The message the host keeps needs an object here; the call
                // itself is answered with the parse error.
                block["input"] = json!({});
                input_error = Some((e.to_string(), json));
            }
        }
    }
    if !is_tool_use {
        return (block, None);
    }
    let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut call = match &input_error {
        Some((_, text)) => ToolUse::from_json_text(id, name, text),
        None => ToolUse::new(id, name, block.get("input").cloned().unwrap_or(json!({}))),
    };
    call.caller = block.get("caller").filter(|c| !c.is_null()).cloned();
    (block, Some(call))
}

/// `message_delta` usage counts are cumulative: later values win.
fn merge_usage(into: &mut Option<Value>, usage: &Value) {
    match (
        into.as_mut().and_then(Value::as_object_mut),
        usage.as_object(),
    ) {
        (Some(have), Some(new)) => {
            for (k, v) in new {
                have.insert(k.clone(), v.clone());
            }
        }
        _ => *into = Some(usage.clone()),
    }
}
