//! The bounded read against the whole parse: the same format, the same
//! calls in the same order (ids and names), the same inputs up to the cut,
//! the same errors, on messages of every format with malformed elements
//! mixed in.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::BoundedMessage;
use crate::{detect, openai_responses::native, WireError, WireFormat};
use baton_tool::call::{CallResult, Outcome};

/// One element of a call list, in the shape of `format`, or a stray one.
fn element(format: usize, i: usize, shape: u8) -> Value {
    let id = format!("c{i}");
    match (format, shape) {
        // Well-formed calls.
        (0, 0..=5) => json!({"type": "tool_use", "id": id, "name": "Sleep",
                             "input": {"duration_ms": i, "pad": [1, {"k": "v"}]}}),
        (1, 0..=5) => json!({"id": id, "type": "function",
                             "function": {"name": "Sleep", "arguments": format!("{{\"duration_ms\":{i}}}")}}),
        (2, 0..=3) => json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": id,
                             "name": "Sleep", "arguments": "{\"duration_ms\":1}"}),
        (2, 4) => json!({"type": "shell_call", "call_id": id,
                         "action": {"commands": ["ls"], "max_output_length": i}}),
        (2, 5) => json!({"type": "custom_tool_call", "call_id": id, "name": "apply_patch",
                         "input": "*** Begin Patch\n*** End Patch\n"}),
        // Not calls.
        (_, 6) => json!({"type": "text", "text": "hi"}),
        (_, 7) => json!("a string"),
        (_, 8) => json!(["tool_use", id, "Sleep"]),
        // Malformed calls.
        (0, 9) => json!({"type": "tool_use", "id": 5, "name": "Sleep"}),
        (1, 9) => json!({"id": id, "function": "Sleep"}),
        (2, 9) => json!({"type": "function_call", "call_id": "", "name": "Sleep"}),
        (_, _) => json!({"type": "reasoning", "id": id, "summary": []}),
    }
}

fn message(format: usize, elements: Vec<Value>, wrap: u8) -> Value {
    match (format, wrap % 2) {
        (0, _) => json!({"role": "assistant", "content": elements}),
        (1, 0) => json!({"role": "assistant", "content": null, "tool_calls": elements}),
        (1, _) => json!({"object": "chat.completion", "choices": [
            {"index": 1, "message": {"role": "assistant", "tool_calls": [elements[0].clone()]}},
            {"index": 0, "message": {"role": "assistant", "tool_calls": elements}}]}),
        (_, 0) => json!({"object": "response", "output": elements}),
        (_, _) => Value::Array(elements),
    }
}

/// Compares the two reads of `text`.
/// With `field`, `text` is a protocol line whose `field` is the message.
fn same(
    text: &str,
    keep: usize,
    format: Option<WireFormat>,
    field: Option<&str>,
) -> Result<(), TestCaseError> {
    let whole: Result<Value, _> = serde_json::from_str(text);
    let line = whole.as_ref().ok().cloned();
    let whole = whole.map(|w| match field {
        Some(f) => w.get(f).cloned().unwrap_or(Value::Null),
        None => w,
    });
    let bounded = match field {
        Some(f) => BoundedMessage::from_field(text, f, keep),
        None => BoundedMessage::from_str(text, keep),
    };
    let (whole, bounded) = match (whole, bounded) {
        (Ok(w), Ok(b)) => (w, b),
        (Err(_), Err(WireError::NotJson(_))) => return Ok(()),
        (w, b) => {
            return Err(TestCaseError::fail(format!(
                "whole {:?}, bounded {:?}",
                w.is_ok(),
                b.err()
            )))
        }
    };
    if let (Some(field), Some(Value::Object(line))) = (field, &line) {
        // The line's other fields are read whole.
        for (key, value) in line.iter().filter(|(k, _)| *k != field) {
            prop_assert_eq!(&bounded.head()[key], value);
        }
    }
    let expected = detect::parse(&whole, format);
    let got = bounded.parse(format);
    let ((wf, wc), (bf, bc)) = match (expected, got) {
        (Ok(w), Ok(b)) => (w, b),
        (Err(w), Err(b)) => {
            prop_assert_eq!(w, b);
            return Ok(());
        }
        (w, b) => return Err(TestCaseError::fail(format!("whole {w:?}\nbounded {b:?}"))),
    };
    prop_assert_eq!(wf, bf);
    prop_assert_eq!(wc.len(), bc.len());
    for (i, (w, b)) in wc.iter().zip(&bc).enumerate() {
        prop_assert_eq!(&w.id, &b.id);
        prop_assert_eq!(&w.name, &b.name);
        if i < keep.max(1) {
            prop_assert_eq!(&w.input, &b.input);
            prop_assert_eq!(&w.input_error, &b.input_error);
            prop_assert_eq!(&w.caller, &b.caller);
        } else {
            prop_assert_eq!(&b.input, &json!({}));
            prop_assert!(b.input_error.is_some(), "call {i} past the cut runs");
        }
    }
    if wf == WireFormat::OpenAiResponses {
        // Every native item is answered in its own type and limit.
        let items = bounded
            .output_items()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let full = crate::openai_responses::message::output_of(&whole)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(items.len(), full.len());
        for (cut, item) in items.iter().zip(full) {
            let Some(kind) = item.get("type").and_then(Value::as_str) else {
                continue;
            };
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or("x");
            let result = CallResult::new(id, "Bash", vec![], true, Outcome::InvalidInput);
            prop_assert_eq!(
                native::answer(kind, cut, &result),
                native::answer(kind, item, &result)
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_bounded_read_gives_the_whole_reads_calls(
        format in 0usize..3,
        shapes in prop::collection::vec(prop_oneof![8 => 0u8..6, 1 => 6u8..9, 1 => 9u8..11], 1..40),
        keep in 0usize..12,
        wrap in 0u8..2,
        pretty in any::<bool>(),
        force in any::<bool>(),
        line in any::<bool>(),
    ) {
        let elements = shapes.iter().enumerate().map(|(i, s)| element(format, i, *s)).collect();
        let mut msg = message(format, elements, wrap);
        if line {
            msg = json!({"type": "message", "batch": "b", "message": msg, "content": [msg.clone()]});
        }
        let text = if pretty {
            serde_json::to_string_pretty(&msg).unwrap()
        } else {
            serde_json::to_string(&msg).unwrap()
        };
        let named = force.then_some(WireFormat::ALL[format]);
        same(&text, keep, named, line.then_some("message"))?;
    }
}

#[test]
fn texts_a_value_would_read_differently_are_read_alike() {
    let cases = [
        // A repeated list: the last one counts, without the first's tail.
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"X","input":{}},{"type":"tool_use","id":"b","name":"X","input":{}}],"content":[{"type":"tool_use","id":"c","name":"Y","input":{"k":1}}]}"#,
        // Repeated fields past the cut, escaped keys, whitespace everywhere.
        r#" { "role" : "assistant" , "content" : [ {"type":"tool_use","id":"a","name":"X","input":{}} ,
            {"type":"tool_use","id":"b","id":"b2","name":"X","input":{}} ,
            {"\u0074ype":"tool_use","\u0069d":"c","name":"Z"} ] } "#,
        // A repeated field with a wrong type first.
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"X"},{"type":"tool_use","id":7,"id":"b","name":"X"}]}"#,
        // Not JSON, or not a message.
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"X"},"#,
        r#"[1, 2, 3]"#,
        r#""text""#,
        r#"{"role":"user","content":[]}"#,
        // Markers of two formats.
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"X"}],"tool_calls":[]}"#,
    ];
    for text in cases {
        for keep in 0..4 {
            for format in [None, Some(WireFormat::Anthropic)] {
                if let Err(e) = same(text, keep, format, None) {
                    panic!("{text} (keep {keep}): {e}");
                }
                let line = format!(r#"{{"message":{text},"message":{text},"other":{text}}}"#);
                if let Err(e) = same(&line, keep, format, Some("message")) {
                    panic!("{line} (keep {keep}): {e}");
                }
            }
        }
    }
}

#[test]
fn calls_past_the_cut_are_not_built() {
    let blocks: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"type": "tool_use", "id": format!("t{i}"), "name": "Sleep",
                        "input": {"big": "x".repeat(1000)}})
        })
        .collect();
    let text = json!({"role": "assistant", "content": blocks}).to_string();
    let message = BoundedMessage::from_str(&text, 10).unwrap();
    assert_eq!(message.head()["content"].as_array().unwrap().len(), 10);
    let (_, calls) = message.parse(None).unwrap();
    assert_eq!(calls.len(), 1000);
    assert_eq!(calls[999].id, "t999");
    assert_eq!(calls[9].input["big"].as_str().unwrap().len(), 1000);
    assert_eq!(calls[10].input, json!({}));
    let note = calls[10].input_error.as_deref().unwrap();
    assert!(note.contains("past the first 10 calls"), "{note}");
}
