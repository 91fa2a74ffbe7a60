//! The streamed answer against the `Value` renderers, byte for byte, in
//! every format (Anthropic, Chat Completions, Responses with function calls
//! and with codex's native items).

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{AnswerWriter, Asked};
use crate::{anthropic, openai_chat, openai_responses, WireFormat};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::content::ContentBlock;

fn result(id: &str, content: Vec<ContentBlock>, is_error: bool) -> CallResult {
    CallResult::new(id, "Tool", content, is_error, Outcome::Success)
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text { text: t.into() }
}

fn image() -> ContentBlock {
    ContentBlock::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

/// Results that reach every branch: plain, error, empty, JSON, a deferred
/// tool's reference (with a name the APIs forbid), images, and text that
/// needs escaping.
fn results() -> Vec<CallResult> {
    let mut shell = result("call_shell", vec![text("out\n")], false);
    shell.response = Some(json!({"stdout": "out\n", "exitCode": 0, "timedOut": false}));
    let mut long_shell = result("call_long", vec![text("0123456789")], true);
    long_shell.response = Some(json!({"stdout": "0123456789", "exitCode": 2}));
    vec![
        result("toolu_1", vec![text("plain")], false),
        result(
            "toolu_2",
            vec![text("it \"failed\"\\\n\t\u{1}\u{7f} é 🙂 </script>")],
            true,
        ),
        result("toolu_3", vec![], false),
        result(
            "toolu_4",
            vec![ContentBlock::Json {
                value: json!({"b": 1, "a": [true, null, 1.5, "x"]}),
            }],
            false,
        ),
        result(
            "toolu_5",
            vec![ContentBlock::ToolReference {
                tool_name: "mcp__srv__do.thing".into(),
            }],
            false,
        ),
        result("toolu_6", vec![text("see"), image(), image()], false),
        result("toolu_7", vec![image()], true),
        shell,
        long_shell,
        result("call_patch", vec![text("Done!")], false),
        result("call_patch_bad", vec![text("no such file")], true),
        result("call_local", vec![text("local out")], false),
        result("call_custom", vec![text("custom out")], false),
        result("call_custom_img", vec![text("pic"), image()], false),
        result("call_dup", vec![text("dup")], false),
    ]
}

/// Responses output items asking for the results above: function calls,
/// every native kind, a shell call with an output limit, and one call id
/// asked twice (the later item answers).
fn response() -> Value {
    json!({"object": "response", "output": [
        {"type": "reasoning", "id": "rs_1"},
        {"type": "function_call", "call_id": "toolu_1", "name": "Read", "arguments": "{}"},
        {"type": "shell_call", "call_id": "call_shell", "action": {"commands": ["ls"]}},
        {"type": "shell_call", "call_id": "call_long",
         "action": {"commands": ["seq 10"], "max_output_length": 4}},
        {"type": "apply_patch_call", "call_id": "call_patch",
         "operation": {"type": "delete_file", "path": "a"}},
        {"type": "apply_patch_call", "call_id": "call_patch_bad",
         "operation": {"type": "delete_file", "path": "b"}},
        {"type": "local_shell_call", "call_id": "call_local",
         "action": {"type": "exec", "command": ["ls"]}},
        {"type": "custom_tool_call", "call_id": "call_custom", "name": "apply_patch", "input": "x"},
        {"type": "custom_tool_call", "call_id": "call_custom_img", "name": "view", "input": "y"},
        {"type": "function_call", "call_id": "call_dup", "name": "Read", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "call_dup", "name": "t", "input": "z"},
    ]})
}

/// The `Value` rendering, as `baton run` printed it before streaming.
fn reference(
    format: WireFormat,
    calls: &Value,
    results: &[CallResult],
    context: &[String],
) -> String {
    let value = match format {
        WireFormat::Anthropic => {
            let mut message = anthropic::user_message(results);
            if let Some(content) = message["content"].as_array_mut() {
                content.extend(context.iter().map(|t| json!({"type": "text", "text": t})));
            }
            message
        }
        WireFormat::OpenAiChat => openai_chat::tool_messages(results),
        _ => openai_responses::answer_items(calls, results),
    };
    value.to_string()
}

fn streamed(
    format: WireFormat,
    calls: &Value,
    results: &[CallResult],
    context: &[String],
) -> String {
    let asked = Asked::from_calls(calls);
    let mut writer = AnswerWriter::new(format, &asked, Vec::new());
    for r in results {
        writer.push(r).expect("writing to memory");
    }
    assert_eq!(writer.written(), results.len());
    let bytes = writer.finish(context).expect("writing to memory");
    String::from_utf8(bytes).expect("JSON is UTF-8")
}

fn same_everywhere(calls: &Value, results: &[CallResult], context: &[String]) {
    for format in WireFormat::ALL {
        let old = reference(format, calls, results, context);
        let new = streamed(format, calls, results, context);
        assert_eq!(new, old, "{format}: streamed answer differs");
        let _: Value = serde_json::from_str(&new).expect("the streamed answer is JSON");
    }
}

#[test]
fn every_format_writes_the_reference_bytes() {
    let calls = response();
    let all = results();
    let context = ["hook context".to_string(), "more \"context\"".to_string()];
    same_everywhere(&calls, &all, &context);
    same_everywhere(&calls, &all, &[]);
    // One result, and each result alone (a first result of each kind).
    for one in all.chunks(1) {
        same_everywhere(&calls, one, &context);
    }
}

#[test]
fn codex_items_are_answered_in_their_own_types() {
    let text = streamed(WireFormat::OpenAiResponses, &response(), &results(), &[]);
    for kind in [
        "shell_call_output",
        "local_shell_call_output",
        "apply_patch_call_output",
        "custom_tool_call_output",
        "function_call_output",
    ] {
        assert!(text.contains(kind), "{kind} missing from {text}");
    }
}

#[test]
fn an_answer_without_results_is_still_whole() {
    same_everywhere(&response(), &[], &[]);
    same_everywhere(&response(), &[], &["only context".to_string()]);
    same_everywhere(&Value::Null, &[], &[]);
}

proptest! {
    /// Any text, id and error flag: the same bytes as the reference.
    #[test]
    fn arbitrary_text_is_escaped_like_serde_json(
        texts in proptest::collection::vec(any::<String>(), 0..4),
        id in any::<String>(),
        is_error in any::<bool>(),
        context in proptest::collection::vec(any::<String>(), 0..2),
    ) {
        let r = result(&id, texts.iter().map(|t| text(t)).collect(), is_error);
        let results = [r];
        for format in WireFormat::ALL {
            let old = reference(format, &Value::Null, &results, &context);
            prop_assert_eq!(streamed(format, &Value::Null, &results, &context), old);
        }
    }
}

/// The answer's bytes for every result kind, in each format, as recorded
/// when the tree renderers were still separate code: a tree and a stream
/// of one answer now come from the one writer, so this is what keeps its
/// bytes from moving.
#[test]
fn every_format_keeps_its_recorded_bytes() {
    let context = ["hook context".to_string(), "more \"context\"".to_string()];
    for format in WireFormat::ALL {
        let bytes = streamed(format, &response(), &results(), &context);
        insta::assert_snapshot!(format!("answer_{format}"), bytes);
    }
}
