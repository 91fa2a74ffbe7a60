//! Anthropic and OpenAI wire formats.

use baton_engine::wire::{anthropic, openai_chat as openai, WireError};
use baton_engine::{CallResult, ContentBlock, Outcome, ToolPool};
use serde_json::json;

use crate::common;

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
    // Strict: the optional `times` is required and nullable.
    assert_eq!(oa[0]["function"]["strict"], json!(true));
    assert_eq!(
        oa[0]["function"]["parameters"]["required"],
        json!(["text", "times"])
    );
    let resp = openai_responses::tool_definitions(&pool);
    assert_eq!(resp[0]["name"], "Echo");
    assert_eq!(resp[0]["strict"], json!(true));
    // `times` is an `Option`, whose schema accepts null itself: its null
    // stays (see wire_schema.rs for fields whose null must go).
    let tools = wire::WireTools::new(&pool, WireFormat::OpenAiChat);
    let call = tools.resolve(baton_engine::ToolUse::new(
        "c",
        "Echo",
        json!({"text": "a", "times": null}),
    ));
    assert_eq!(call.input, json!({"text": "a", "times": null}));
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

use baton_engine::wire::{self, openai_responses, WireFormat};

#[test]
fn detection_tells_the_formats_apart_and_refuses_to_guess() {
    let anthropic_msg = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "X", "input": {}}]});
    let chat_msg = json!({"role": "assistant", "content": [], "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "X", "arguments": "{}"}}]});
    let responses = json!({"object": "response", "output": [
        {"type": "function_call", "call_id": "r", "name": "X", "arguments": "{}"}]});
    let items = json!([{"type": "function_call", "call_id": "r", "name": "X", "arguments": "{}"}]);
    assert_eq!(wire::detect(&anthropic_msg).unwrap(), WireFormat::Anthropic);
    assert_eq!(wire::detect(&chat_msg).unwrap(), WireFormat::OpenAiChat);
    assert_eq!(
        wire::detect(&responses).unwrap(),
        WireFormat::OpenAiResponses
    );
    assert_eq!(wire::detect(&items).unwrap(), WireFormat::OpenAiResponses);
    // No calls in any format: nothing can be lost.
    let plain = json!({"role": "assistant", "content": "done"});
    assert_eq!(wire::parse(&plain, None).unwrap().1.len(), 0);
    // Both formats' calls: refused, not half-read.
    let both = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "X", "input": {}}],
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "X", "arguments": "{}"}}]});
    assert!(wire::detect(&both).is_err());
    // The bug this guards against: OpenAI calls read as Anthropic were dropped.
    let err = wire::parse(&chat_msg, Some(WireFormat::Anthropic)).unwrap_err();
    assert!(err.to_string().contains("openai-chat"), "{err}");
    let (f, calls) = wire::parse(&chat_msg, None).unwrap();
    assert_eq!((f, calls.len()), (WireFormat::OpenAiChat, 1));
    for format in WireFormat::ALL {
        assert_eq!(format.name().parse::<WireFormat>().unwrap(), format);
    }
}

#[test]
fn blocks_of_the_provider_are_passed_over_never_executed() {
    let msg = json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "…", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {}},
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": "s", "input": {}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": []},
        {"type": "container_upload", "file_id": "f"},
        {"type": "compaction", "content": "summary"},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_2"}}
    ]});
    let calls = anthropic::parse_tool_uses(&msg).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "toolu_1");
    assert!(calls[0].is_programmatic());
    assert_eq!(calls[0].caller.as_ref().unwrap()["tool_id"], "srvtoolu_2");

    let response = json!({"output": [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "mcp_call", "id": "mcp_1", "name": "x", "arguments": "{}", "server_label": "s"},
        {"type": "message", "id": "m", "role": "assistant", "content": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "Read", "arguments": "{}",
         "caller": {"type": "program", "caller_id": "ci_1"}}
    ]});
    let calls = openai_responses::parse_tool_uses(&response).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].id, "call_1",
        "the call_id answers, not the item id"
    );
    assert!(calls[0].is_programmatic());
}

#[test]
fn results_in_each_format_carry_images_where_the_format_can() {
    let mut img = result("a", "see", false);
    img.content.push(ContentBlock::image("image/png", "aGk="));
    let results = [img, result("b", "bad", true)];
    let chat = openai::tool_messages(&results);
    let chat = chat.as_array().unwrap();
    assert_eq!(
        chat.len(),
        3,
        "two tool messages and one user message with the image"
    );
    assert_eq!(chat[0]["role"], "tool");
    assert_eq!(chat[1]["tool_call_id"], "b");
    assert_eq!(chat[2]["role"], "user");
    assert_eq!(
        chat[2]["content"][1]["image_url"]["url"],
        "data:image/png;base64,aGk="
    );
    let items = openai_responses::output_items(&results);
    assert_eq!(
        items[0]["output"][1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,aGk="})
    );
    assert_eq!(
        items[1],
        json!({"type": "function_call_output", "call_id": "b", "output": "bad"})
    );
}

#[test]
fn chat_rejects_the_legacy_single_function_call() {
    let msg = json!({"role": "assistant", "content": null, "function_call": {"name": "X", "arguments": "{}"}});
    assert!(openai::parse_tool_uses(&msg).is_err());
}
