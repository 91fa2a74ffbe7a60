//! Anthropic and OpenAI wire formats.

mod common;

use baton_engine::wire::{anthropic, openai_chat as openai, WireError};
use baton_engine::{CallResult, ContentBlock, Outcome, ToolPool};
use serde_json::json;

#[test]
fn parses_an_assistant_message_and_skips_other_blocks() {
    let msg = json!({
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "thinking", "thinking": "hmm"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "some_future_block"},
            {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": "{\"command\": \"ls\"}"}
        ]
    });
    let uses = anthropic::parse_tool_uses(&msg).unwrap();
    assert_eq!(uses.len(), 2);
    assert_eq!(uses[0].id, "toolu_1");
    assert_eq!(uses[0].input, json!({"file_path": "/a"}));
    assert_eq!(uses[1].input, json!({"command": "ls"}));
}

#[test]
fn parses_an_api_response_object() {
    let resp = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": "t", "name": "X", "input": {}}],
        "stop_reason": "tool_use"
    });
    assert_eq!(anthropic::parse_tool_uses(&resp).unwrap().len(), 1);
}

#[test]
fn rejects_what_is_not_an_assistant_message() {
    assert!(matches!(
        anthropic::parse_tool_uses_str("not json"),
        Err(WireError::NotJson(_))
    ));
    assert!(matches!(
        anthropic::parse_tool_uses(&json!({"role": "user", "content": []})),
        Err(WireError::NotAMessage(_))
    ));
    assert!(matches!(
        anthropic::parse_tool_uses(&json!([1, 2])),
        Err(WireError::NotAMessage(_))
    ));
    assert!(matches!(
        anthropic::parse_tool_uses(
            &json!({"role": "assistant", "content": [{"type": "tool_use", "name": "X"}]})
        ),
        Err(WireError::BadToolCall { index: 0, .. })
    ));
}

fn result(id: &str, text: &str, is_error: bool) -> CallResult {
    CallResult::new(
        id,
        "X",
        vec![ContentBlock::text(text)],
        is_error,
        Outcome::Success,
    )
}

#[test]
fn builds_the_user_message_in_order() {
    let mut with_image = result("b", "see image", false);
    with_image
        .content
        .push(ContentBlock::image("image/png", "aGk="));
    let results = [
        result("a", "first", false),
        with_image,
        result("c", "bad", true),
    ];
    let msg = anthropic::user_message(&results);
    assert_eq!(
        msg,
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "first"}]},
            {"type": "tool_result", "tool_use_id": "b", "content": [
                {"type": "text", "text": "see image"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
            ]},
            {"type": "tool_result", "tool_use_id": "c", "content": [{"type": "text", "text": "bad"}], "is_error": true}
        ]})
    );
}

#[test]
fn renders_tool_definitions() {
    let pool = ToolPool::of(vec![common::echo()]);
    let defs = anthropic::tool_definitions(&pool);
    assert_eq!(defs[0]["name"], "Echo");
    assert_eq!(defs[0]["description"], "Repeats text.");
    assert_eq!(defs[0]["input_schema"]["type"], "object");
    let oa = openai::tool_definitions(&pool);
    assert_eq!(oa[0]["type"], "function");
    assert_eq!(oa[0]["function"]["parameters"]["required"], json!(["text"]));
}

#[test]
fn openai_round_trip() {
    let msg = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "Echo", "arguments": "{\"text\":\"hi\"}"}},
        {"id": "call_2", "type": "function", "function": {"name": "Echo", "arguments": "{broken"}}
    ]}}]});
    let uses = openai::parse_tool_uses(&msg).unwrap();
    assert_eq!(uses[0].input, json!({"text": "hi"}));
    assert_eq!(uses[1].input, json!({}));
    assert!(uses[1].input_error.is_some());
    let out = openai::tool_messages(&[result("call_1", "hi", false)]);
    assert_eq!(
        out,
        json!([{"role": "tool", "tool_call_id": "call_1", "content": "hi"}])
    );
}
