//! The Responses stream: `response.created`, then per output item
//! `response.output_item.added`, its deltas and `response.output_item.done`,
//! then `response.completed` (or `.incomplete` / `.failed`).
//!
//! A `function_call` item is complete at
//! `response.function_call_arguments.done`, which carries the final
//! arguments; the call goes to the sink at once with the `call_id` and name
//! its `output_item.added` announced. The items the host keeps are the
//! `output_item.done` items, verbatim (reasoning with its encrypted
//! content, provider tool calls, messages).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::native;
use crate::stream::{event_type, provider_error, Completed, StreamError, StreamSink};
use baton_tool::call::ToolUse;

#[derive(Debug)]
struct Item {
    item: Value,
    arguments: String,
    handed: bool,
}

/// The parser's state for one response.
#[derive(Debug, Default)]
pub struct Parser {
    /// Items by `output_index`.
    items: BTreeMap<u64, Item>,
    /// Finished items by `output_index`.
    done: BTreeMap<u64, Value>,
    status: Option<String>,
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
        let output_index = || {
            event
                .get("output_index")
                .and_then(Value::as_u64)
                .ok_or_else(|| StreamError::BadEvent("event without `output_index`".into()))
        };
        match event_type(event) {
            "response.output_item.added" => {
                let item = event.get("item").cloned().unwrap_or(Value::Null);
                self.items.insert(
                    output_index()?,
                    Item {
                        item,
                        arguments: String::new(),
                        handed: false,
                    },
                );
            }
            "response.function_call_arguments.delta" => {
                if let Some(item) = self.items.get_mut(&output_index()?) {
                    if let Some(d) = event.get("delta").and_then(Value::as_str) {
                        item.arguments.push_str(d);
                    }
                }
            }
            "response.function_call_arguments.done" => {
                let i = output_index()?;
                let Some(item) = self.items.get_mut(&i) else {
                    return Err(StreamError::BadEvent(format!(
                        "arguments for item {i}, which was never added"
                    )));
                };
                if let Some(a) = event.get("arguments").and_then(Value::as_str) {
                    item.arguments = a.to_string();
                }
                item.item["arguments"] = json!(item.arguments);
                if event_type(&item.item) == "function_call" && !item.handed {
                    item.handed = true;
                    let call = call_of(&item.item, &item.arguments);
                    // Kept now, so a stream cut before `output_item.done`
                    // still leaves the executed call in the history.
                    let mut kept = item.item.clone();
                    kept["status"] = json!("completed");
                    self.done.insert(i, kept);
                    self.calls += 1;
                    sink.call(call).map_err(StreamError::Sink)?;
                }
            }
            "response.custom_tool_call_input.delta" => {
                if let Some(item) = self.items.get_mut(&output_index()?) {
                    if let Some(d) = event.get("delta").and_then(Value::as_str) {
                        item.arguments.push_str(d);
                    }
                }
            }
            // A freeform call is complete when its input is.
            "response.custom_tool_call_input.done" => {
                let i = output_index()?;
                let Some(item) = self.items.get_mut(&i) else {
                    return Err(StreamError::BadEvent(format!(
                        "input for item {i}, which was never added"
                    )));
                };
                if let Some(a) = event.get("input").and_then(Value::as_str) {
                    item.arguments = a.to_string();
                }
                item.item["input"] = json!(item.arguments);
                if !item.handed {
                    if let Some(call) = native::call_of(&item.item) {
                        let call = call.map_err(StreamError::BadEvent)?;
                        item.handed = true;
                        self.done.insert(i, item.item.clone());
                        self.calls += 1;
                        sink.call(call).map_err(StreamError::Sink)?;
                    }
                }
            }
            "response.output_text.delta" => {
                if let Some(d) = event.get("delta").and_then(Value::as_str) {
                    sink.text(d).map_err(StreamError::Sink)?;
                }
            }
            "response.output_item.done" => {
                let i = output_index()?;
                let item = event.get("item").cloned().unwrap_or(Value::Null);
                // A function call whose arguments never got their own done
                // event is complete now.
                let handed = self.items.get(&i).is_some_and(|it| it.handed);
                if event_type(&item) == "function_call" && !handed {
                    let args = item.get("arguments").and_then(Value::as_str).unwrap_or("");
                    self.calls += 1;
                    sink.call(call_of(&item, args)).map_err(StreamError::Sink)?;
                }
                // Shell and patch calls are complete with their item.
                if !handed {
                    if let Some(call) = native::call_of(&item) {
                        let call = call.map_err(StreamError::BadEvent)?;
                        self.calls += 1;
                        sink.call(call).map_err(StreamError::Sink)?;
                    }
                }
                self.items.remove(&i);
                self.done.insert(i, item);
            }
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").unwrap_or(&Value::Null);
                self.status = response
                    .get("status")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| Some(event_type(event).trim_start_matches("response.").into()));
                if event_type(event) == "response.incomplete" {
                    if let Some(r) = response.pointer("/incomplete_details/reason") {
                        self.status = r.as_str().map(|r| format!("incomplete:{r}"));
                    }
                }
                self.usage = response.get("usage").cloned();
                self.complete = true;
            }
            "response.failed" => {
                let err = event
                    .pointer("/response/error")
                    .cloned()
                    .unwrap_or_else(|| event.clone());
                return Err(StreamError::Provider(err));
            }
            "error" => return Err(provider_error(event)),
            _ => {}
        }
        Ok(())
    }

    /// What the stream amounted to, once it ended (or broke off).
    pub fn finish(self) -> Completed {
        Completed {
            message: Value::Array(self.done.into_values().collect()),
            stop_reason: self.status,
            calls: self.calls,
            complete: self.complete,
            usage: self.usage,
            diagnostics: Vec::new(),
        }
    }
}

fn call_of(item: &Value, arguments: &str) -> ToolUse {
    let id = item
        .get("call_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
    ToolUse::from_json_text(id, name, arguments)
        .with_caller(item.get("caller").filter(|c| !c.is_null()).cloned())
}
