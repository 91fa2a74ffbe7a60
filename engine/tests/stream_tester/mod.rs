//! One tester for the three stream parsers: every scenario, rendered in
//! every format, streamed with random delta cuts and random byte chunk
//! boundaries (decoded by the SSE crate the agent uses), must hand over
//! the same calls in the same order, each at the right moment, and leave a
//! message the non-streaming parser reads the same way.

use std::convert::Infallible;

use baton_engine::wire::{anthropic, openai_chat, openai_responses};
use baton_engine::wire::{Completed, StreamError, StreamParser, StreamSink, WireFormat};
use baton_engine::ToolUse;
use baton_test_support::scenario;
use futures::StreamExt;
use proptest::prelude::*;
use scenario::{Call, Scenario};
use serde_json::{json, Value};

/// Records calls, and how many events had been fed when each arrived.
#[derive(Default)]
struct Recorder {
    calls: Vec<(ToolUse, usize)>,
    fed: usize,
    text: String,
}

impl StreamSink for Recorder {
    type Error = Infallible;
    fn call(&mut self, call: ToolUse) -> Result<(), Infallible> {
        self.calls.push((call, self.fed));
        Ok(())
    }
    fn text(&mut self, delta: &str) -> Result<(), Infallible> {
        self.text.push_str(delta);
        Ok(())
    }
}

fn events(format: WireFormat, s: &Scenario, cuts: &[u16]) -> Vec<Value> {
    match format {
        WireFormat::Anthropic => scenario::anthropic(s, cuts),
        WireFormat::OpenAiChat => scenario::openai_chat(s, cuts),
        _ => scenario::openai_responses(s, cuts),
    }
}

/// Streams `body` in chunks of the given sizes through sse-stream, then
/// the parser.
fn replay(format: WireFormat, body: &str, sizes: &[usize]) -> (Recorder, Completed) {
    let bytes = body.as_bytes().to_vec();
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < bytes.len() {
        let n = sizes
            .get(i % sizes.len().max(1))
            .copied()
            .unwrap_or(7)
            .max(1);
        let end = (at + n).min(bytes.len());
        chunks.push(Ok::<_, std::io::Error>(bytes::Bytes::copy_from_slice(
            &bytes[at..end],
        )));
        at = end;
        i += 1;
    }
    let mut sse = sse_stream::SseByteStream::new(futures::stream::iter(chunks));
    let mut parser = StreamParser::new(format);
    let mut rec = Recorder::default();
    futures::executor::block_on(async {
        while let Some(event) = sse.next().await {
            let event = event.expect("valid SSE");
            if let Some(data) = event.data {
                parser.feed(&data, &mut rec).expect("valid stream");
                rec.fed += 1;
            }
        }
    });
    let done = parser.finish(&mut rec).expect("finish");
    (rec, done)
}

fn key(c: &ToolUse) -> (String, String, Value, bool) {
    (
        c.id.clone(),
        c.name.clone(),
        c.input.clone(),
        c.input_error.is_some(),
    )
}

fn expected(s: &Scenario) -> Vec<(String, String, Value, bool)> {
    s.calls
        .iter()
        .map(|c| key(&ToolUse::from_json_text(&c.id, &c.name, &c.args)))
        .collect()
}

fn check(s: &Scenario, cuts: &[u16], sizes: &[usize]) -> Result<(), TestCaseError> {
    for format in WireFormat::ALL {
        let evs = events(format, s, cuts);
        let (rec, done) = replay(format, &scenario::sse(&evs), sizes);
        let got: Vec<_> = rec.calls.iter().map(|(c, _)| key(c)).collect();
        prop_assert_eq!(&got, &expected(s), "{} calls", format);
        prop_assert!(done.complete, "{} not complete", format);
        prop_assert_eq!(done.calls, s.calls.len());
        prop_assert_eq!(
            &rec.text,
            &s.text.clone().unwrap_or_default(),
            "{} text",
            format
        );
        // Each call is handed over before the stream's last event, and in
        // Anthropic and Responses before the next call's first fragment.
        for (i, (_, at)) in rec.calls.iter().enumerate() {
            prop_assert!(*at < evs.len(), "{format}: call {i} only at the end");
        }
        // The message kept for the conversation reads back to the same
        // calls (inputs of invalid JSON are `{}` there).
        let again = format
            .parse_tool_uses(&done.message)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again.len(), s.calls.len());
        for (a, e) in again.iter().zip(&expected(s)) {
            prop_assert_eq!(&a.id, &e.0);
            prop_assert_eq!(&a.name, &e.1);
            if !e.3 {
                prop_assert_eq!(&a.input, &e.2);
            }
        }
    }
    Ok(())
}

fn args_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<u32>(), "[a-zA-Zé€😀 \"\\\\/]{0,24}").prop_map(|(n, s)| json!({"n": n, "s": s, "nested": {"list": [1, 2.5, null, true]}}).to_string()),
        1 => Just(String::new()),
        1 => Just("{\"command\": \"ls".to_string()),
    ]
}

fn scenario_strategy() -> impl Strategy<Value = Scenario> {
    (
        proptest::option::of("[a-z .é😀]{0,40}"),
        proptest::option::of("[a-z ]{1,30}"),
        any::<bool>(),
        proptest::collection::vec(args_strategy(), 0..6),
    )
        .prop_map(|(text, thinking, server_tool, args)| Scenario {
            text,
            thinking,
            server_tool,
            calls: args
                .into_iter()
                .enumerate()
                .map(|(i, args)| Call {
                    id: format!("call_{i}"),
                    name: format!("Tool{}", i % 3),
                    args,
                })
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn every_scenario_through_every_parser(
        s in scenario_strategy(),
        cuts in proptest::collection::vec(any::<u16>(), 0..6),
        sizes in proptest::collection::vec(1usize..64, 1..8),
    ) {
        check(&s, &cuts, &sizes)?;
    }
}

fn two_calls() -> Scenario {
    Scenario {
        text: Some("Looking.".into()),
        thinking: Some("think".into()),
        server_tool: true,
        calls: vec![
            Call {
                id: "a".into(),
                name: "Read".into(),
                args: r#"{"file_path": "/x"}"#.into(),
            },
            Call {
                id: "b".into(),
                name: "Bash".into(),
                args: r#"{"command": "ls"}"#.into(),
            },
        ],
    }
}

#[test]
fn each_call_is_handed_over_the_moment_it_is_complete() {
    let s = two_calls();
    for format in WireFormat::ALL {
        let evs = events(format, &s, &[]);
        let mut parser = StreamParser::new(format);
        let mut rec = Recorder::default();
        for e in &evs {
            let data = match e {
                Value::String(s) => s.clone(),
                _ => e.to_string(),
            };
            parser.feed(&data, &mut rec).unwrap();
            rec.fed += 1;
        }
        let at: Vec<usize> = rec.calls.iter().map(|(_, at)| *at).collect();
        // The event that completes call `a` in each format.
        let complete_a = |e: &Value| match format {
            WireFormat::Anthropic => {
                e["type"] == "content_block_stop"
                    && evs
                        .iter()
                        .any(|x| x["content_block"]["id"] == "a" && x["index"] == e["index"])
            }
            WireFormat::OpenAiChat => e["choices"][0]["delta"]["tool_calls"][0]["index"] == 1,
            _ => e["type"] == "response.function_call_arguments.done" && e["item_id"] == "fc_0",
        };
        let first = evs.iter().position(complete_a).unwrap();
        assert_eq!(
            at[0], first,
            "{format}: call a handed over after event {}",
            at[0]
        );
        assert!(
            at[1] < evs.len() - 1,
            "{format}: call b before the last event"
        );
    }
}

#[test]
fn kept_message_preserves_provider_blocks() {
    let s = two_calls();
    let evs = scenario::anthropic(&s, &[1000, 30000]);
    let (_, done) = replay(WireFormat::Anthropic, &scenario::sse(&evs), &[5]);
    let content = done.message["content"].as_array().unwrap();
    let types: Vec<&str> = content
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "thinking",
            "server_tool_use",
            "web_search_tool_result",
            "text",
            "tool_use",
            "tool_use"
        ]
    );
    assert_eq!(content[0]["signature"], "EqQBCgIYAhIM1gbcDa9GJwZA2b3h");
    assert_eq!(content[0]["thinking"], "think");
    assert_eq!(content[1]["input"], json!({"query": "baton"}));
    assert_eq!(content[2]["content"][0]["encrypted_content"], "abc");
    assert_eq!(done.stop_reason.as_deref(), Some("tool_use"));
    // The server tool is the provider's: never handed over as a call.
    assert_eq!(anthropic::parse_tool_uses(&done.message).unwrap().len(), 2);
    let evs = scenario::openai_responses(&s, &[]);
    let (_, done) = replay(WireFormat::OpenAiResponses, &scenario::sse(&evs), &[9]);
    assert_eq!(done.message[0]["encrypted_content"], "gAAAAB");
    assert_eq!(
        openai_responses::parse_tool_uses(&done.message)
            .unwrap()
            .len(),
        2
    );
    let evs = scenario::openai_chat(&s, &[]);
    let (_, done) = replay(WireFormat::OpenAiChat, &scenario::sse(&evs), &[9]);
    assert_eq!(done.message["content"], "Looking.");
    assert_eq!(
        openai_chat::parse_tool_uses(&done.message).unwrap().len(),
        2
    );
}

#[test]
fn a_cut_stream_hands_over_only_complete_calls() {
    let s = two_calls();
    for format in WireFormat::ALL {
        let evs = events(format, &s, &[20000, 40000]);
        // Cut inside call b's arguments.
        let start_b = evs
            .iter()
            .position(|e| {
                let t = e.to_string();
                t.contains(r#""id":"b""#) || t.contains(r#""call_id":"b""#)
            })
            .unwrap();
        let cut = start_b + 2; // b's start and its first fragment
        let mut parser = StreamParser::new(format);
        let mut rec = Recorder::default();
        for e in &evs[..cut] {
            let data = match e {
                Value::String(s) => s.clone(),
                _ => e.to_string(),
            };
            parser.feed(&data, &mut rec).unwrap();
        }
        let done = parser.finish(&mut rec).unwrap();
        assert!(!done.complete, "{format}");
        let ids: Vec<&str> = rec.calls.iter().map(|(c, _)| c.id.as_str()).collect();
        assert_eq!(ids, ["a"], "{format}");
        assert_eq!(
            format.parse_tool_uses(&done.message).unwrap().len(),
            1,
            "{format}: {}",
            done.message
        );
    }
}

#[test]
fn provider_errors_in_the_stream_are_reported() {
    let cases = [
        (
            WireFormat::Anthropic,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        (
            WireFormat::OpenAiResponses,
            json!({"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "x"}}}),
        ),
        (
            WireFormat::OpenAiChat,
            json!({"error": {"message": "x", "type": "server_error"}}),
        ),
    ];
    for (format, event) in cases {
        let mut parser = StreamParser::new(format);
        let err = parser
            .feed(&event.to_string(), &mut Recorder::default())
            .unwrap_err();
        assert!(matches!(err, StreamError::Provider(_)), "{format}: {err}");
    }
    let mut parser = StreamParser::new(WireFormat::Anthropic);
    assert!(matches!(
        parser.feed("{not json", &mut Recorder::default()),
        Err(StreamError::BadEvent(_))
    ));
}
