//! Chat Completions with several choices (a server ignoring `n` = 1): only
//! choice 0 is read, calls of different choices never mix, and the others
//! are named in a diagnostic. Streams and whole responses alike.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_engine::wire::{openai_chat, FnSink, StreamParser, WireFormat};
use serde_json::{json, Value};

fn chunk(choices: Vec<Value>) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
           "model": "gpt-test", "choices": choices})
    .to_string()
}

fn call_start(choice: u64, id: &str, name: &str) -> Value {
    json!({"index": choice, "delta": {"tool_calls": [
        {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]},
        "finish_reason": null})
}

fn args(choice: u64, text: &str) -> Value {
    json!({"index": choice, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": text}}]}, "finish_reason": null})
}

fn text(choice: u64, text: &str) -> Value {
    json!({"index": choice, "delta": {"content": text}, "finish_reason": null})
}

fn finish(choice: u64) -> Value {
    json!({"index": choice, "delta": {}, "finish_reason": "tool_calls"})
}

/// Two choices interleaved chunk by chunk (and sometimes in one chunk),
/// each with a call at tool-call index 0: the sink sees only choice 0's.
#[test]
fn a_stream_of_two_choices_runs_choice_zero_only() {
    let data = vec![
        chunk(vec![text(0, "A: "), text(1, "B: ")]),
        chunk(vec![call_start(1, "call_b", "Write")]),
        chunk(vec![call_start(0, "call_a", "Read")]),
        chunk(vec![args(1, r#"{"file_path": "/b", "#)]),
        chunk(vec![
            args(0, r#"{"file_path": "/a"}"#),
            args(1, r#""content": "x"}"#),
        ]),
        chunk(vec![finish(1)]),
        chunk(vec![finish(0)]),
        "[DONE]".to_string(),
    ];
    let mut parser = StreamParser::new(WireFormat::OpenAiChat);
    let mut calls = Vec::new();
    for d in &data {
        parser.feed(d, FnSink(|c| calls.push(c))).unwrap();
    }
    let done = parser.finish(FnSink(|c| calls.push(c))).unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].id, "call_a");
    assert_eq!(calls[0].name, "Read");
    assert_eq!(calls[0].input, json!({"file_path": "/a"}));
    assert_eq!(done.message["content"], "A: ");
    let kept = done.message["tool_calls"].as_array().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["id"], "call_a");
    assert_eq!(done.diagnostics.len(), 1, "{:?}", done.diagnostics);
    assert!(done.diagnostics[0].contains("only choice 0"));
    assert!(
        done.diagnostics[0].ends_with(": 1"),
        "{}",
        done.diagnostics[0]
    );
}

#[test]
fn one_choice_gives_no_diagnostic() {
    let mut parser = StreamParser::new(WireFormat::OpenAiChat);
    for d in [
        chunk(vec![call_start(0, "call_a", "Read")]),
        chunk(vec![args(0, r#"{"file_path": "/a"}"#)]),
        chunk(vec![finish(0)]),
    ] {
        parser.feed(&d, FnSink(|_| {})).unwrap();
    }
    let done = parser.finish(FnSink(|_| {})).unwrap();
    assert!(done.diagnostics.is_empty(), "{:?}", done.diagnostics);
}

/// A whole response whose choice 0 is not first in the array.
#[test]
fn a_response_of_two_choices_uses_index_zero() {
    let message = |id: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\": \"/x\"}"}}]})
    };
    let response = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [
        {"index": 1, "message": message("call_other"), "finish_reason": "tool_calls"},
        {"index": 0, "message": message("call_zero"), "finish_reason": "tool_calls"},
    ]});
    let calls = openai_chat::parse_tool_uses(&response).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_zero"]);
    let note = openai_chat::choices_note(&response).expect("a note");
    assert!(
        note.contains("2 choices") && note.ends_with(": 1"),
        "{note}"
    );

    let single = json!({"choices": [{"index": 0, "message": message("call_zero")}]});
    assert_eq!(openai_chat::choices_note(&single), None);
}
