//! Scenarios rendered as each format's stream events, in the real shapes.
//!
//! Each delta text (arguments, text, thinking) is cut into pieces at the
//! given positions, so the same scenario can stream in many ways.

use serde_json::{json, Value};

#[derive(Clone, Debug)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// Argument text exactly as streamed (may be invalid JSON).
    pub args: String,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub text: Option<String>,
    pub thinking: Option<String>,
    /// A provider-side tool (web search) before the calls.
    pub server_tool: bool,
    pub calls: Vec<Call>,
}

/// Cuts `text` at char boundaries near the given fractions of its length.
pub fn pieces(text: &str, cuts: &[u16]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| (*c as usize * chars.len()) / u16::MAX as usize)
        .collect();
    at.push(0);
    at.push(chars.len());
    at.sort_unstable();
    at.dedup();
    let out: Vec<String> = at
        .windows(2)
        .map(|w| chars[w[0]..w[1]].iter().collect())
        .collect();
    if out.is_empty() {
        vec![String::new()]
    } else {
        out
    }
}

pub fn anthropic(s: &Scenario, cuts: &[u16]) -> Vec<Value> {
    let mut ev = vec![json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})];
    let mut index = 0;
    if let Some(t) = &s.thinking {
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
        for p in pieces(t, cuts) {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}));
        }
        ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}));
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    if s.server_tool {
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}));
        for p in pieces(r#"{"query": "baton"}"#, cuts) {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}));
        }
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result", "url": "https://example.com", "title": "x", "encrypted_content": "abc"}]}}));
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    if let Some(t) = &s.text {
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
        ev.push(json!({"type": "ping"}));
        for p in pieces(t, cuts) {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}));
        }
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for c in &s.calls {
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}));
        for p in pieces(&c.args, cuts) {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}));
        }
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let reason = if s.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev.push(json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": 42}}));
    ev.push(json!({"type": "message_stop"}));
    ev
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
}

/// Chat Completions chunks, then the `[DONE]` sentinel (as a string).
pub fn openai_chat(s: &Scenario, cuts: &[u16]) -> Vec<Value> {
    let mut ev = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        None,
    )];
    if let Some(t) = &s.text {
        for p in pieces(t, cuts) {
            ev.push(chunk(json!({"content": p}), None));
        }
    }
    for (i, c) in s.calls.iter().enumerate() {
        ev.push(chunk(json!({"tool_calls": [{"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": ""}}]}), None));
        for p in pieces(&c.args, cuts) {
            ev.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                None,
            ));
        }
    }
    let reason = if s.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ev.push(chunk(json!({}), Some(reason)));
    ev.push(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test", "choices": [],
                   "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}));
    ev.push(json!("[DONE]"));
    ev
}

pub fn openai_responses(s: &Scenario, cuts: &[u16]) -> Vec<Value> {
    let mut seq = 0;
    let mut ev = Vec::new();
    let mut push = |mut e: Value| {
        e["sequence_number"] = json!(seq);
        seq += 1;
        ev.push(e);
    };
    push(
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
    );
    let mut out = Vec::new();
    let mut index = 0;
    if let Some(t) = &s.thinking {
        let item = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": t}], "encrypted_content": "gAAAAB"});
        push(
            json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        );
        push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        out.push(item);
        index += 1;
    }
    if s.server_tool {
        let item = json!({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "baton"}});
        push(
            json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}}),
        );
        push(
            json!({"type": "response.web_search_call.completed", "output_index": index, "item_id": "ws_1"}),
        );
        push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        out.push(item);
        index += 1;
    }
    if let Some(t) = &s.text {
        push(
            json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
        );
        push(
            json!({"type": "response.content_part.added", "output_index": index, "item_id": "msg_1", "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        );
        for p in pieces(t, cuts) {
            push(
                json!({"type": "response.output_text.delta", "output_index": index, "item_id": "msg_1", "content_index": 0, "delta": p}),
            );
        }
        push(
            json!({"type": "response.output_text.done", "output_index": index, "item_id": "msg_1", "content_index": 0, "text": t}),
        );
        let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": t, "annotations": []}]});
        push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        out.push(item);
        index += 1;
    }
    for (i, c) in s.calls.iter().enumerate() {
        let item_id = format!("fc_{i}");
        push(
            json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "function_call", "id": item_id, "call_id": c.id, "name": c.name, "arguments": "", "status": "in_progress"}}),
        );
        for p in pieces(&c.args, cuts) {
            push(
                json!({"type": "response.function_call_arguments.delta", "output_index": index, "item_id": item_id, "delta": p}),
            );
        }
        push(
            json!({"type": "response.function_call_arguments.done", "output_index": index, "item_id": item_id, "arguments": c.args}),
        );
        let item = json!({"type": "function_call", "id": item_id, "call_id": c.id, "name": c.name, "arguments": c.args, "status": "completed"});
        push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        out.push(item);
        index += 1;
    }
    push(
        json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "status": "completed", "output": out,
        "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}}),
    );
    ev
}

/// Events as an SSE body (Anthropic and Responses name each event).
pub fn sse(events: &[Value]) -> String {
    let mut body = String::new();
    for e in events {
        match e {
            Value::String(s) => body.push_str(&format!("data: {s}\n\n")),
            _ => {
                if let Some(t) = e.get("type").and_then(Value::as_str) {
                    body.push_str(&format!("event: {t}\n"));
                }
                body.push_str(&format!("data: {e}\n\n"));
            }
        }
    }
    body
}

/// A turn of `text` with `calls` (id, name, input), for the agent tests
/// that script a model.
pub fn turn(text: &str, calls: &[(&str, &str, Value)]) -> Scenario {
    Scenario {
        text: Some(text.into()),
        thinking: None,
        server_tool: false,
        calls: calls
            .iter()
            .map(|(id, name, input)| Call {
                id: id.to_string(),
                name: name.to_string(),
                args: input.to_string(),
            })
            .collect(),
    }
}
