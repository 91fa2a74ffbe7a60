//! Calls start while the model is still streaming: through the Rust API
//! (parser → batch) and through `baton serve`'s `stream` lines.
//!
//! The stream carries `Sleep 500` first, then a second call whose arguments
//! trickle in for well over a second. Started early, the sleep's result
//! arrives before the stream even ends; started at the end, it would come
//! at least 500 ms after the stream's last event.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use baton::engine::wire::{FnSink, StreamParser, WireFormat};
use baton::engine::AllowAllUnsafe;
use baton::{Engine, Event};
use serde_json::{json, Value};

// 3 s of trickle: the early sleep ends ~2.5 s before the stream does, so a
// loaded machine has seconds of slack before the 500 ms bound is at risk.
const TRICKLE: usize = 30;
const STEP: Duration = Duration::from_millis(100);

/// (id, name, argument pieces) rendered as `format`'s stream events.
fn stream(format: WireFormat, calls: &[(&str, &str, Vec<String>)]) -> Vec<Value> {
    let mut ev = Vec::new();
    match format {
        WireFormat::Anthropic => {
            ev.push(json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "x", "usage": {"input_tokens": 1, "output_tokens": 1}}}));
            for (i, (id, name, pieces)) in calls.iter().enumerate() {
                ev.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                for p in pieces {
                    ev.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}}));
                }
                ev.push(json!({"type": "content_block_stop", "index": i}));
            }
            ev.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}));
            ev.push(json!({"type": "message_stop"}));
        }
        WireFormat::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            for (i, (id, name, pieces)) in calls.iter().enumerate() {
                ev.push(chunk(json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
                for p in pieces {
                    ev.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                        Value::Null,
                    ));
                }
            }
            ev.push(chunk(json!({}), json!("tool_calls")));
            ev.push(json!("[DONE]"));
        }
        _ => {
            for (i, (id, name, pieces)) in calls.iter().enumerate() {
                let item_id = format!("fc_{i}");
                ev.push(json!({"type": "response.output_item.added", "output_index": i, "item": {"type": "function_call", "id": item_id, "call_id": id, "name": name, "arguments": ""}}));
                for p in pieces {
                    ev.push(json!({"type": "response.function_call_arguments.delta", "output_index": i, "item_id": item_id, "delta": p}));
                }
                let args: String = pieces.concat();
                ev.push(json!({"type": "response.function_call_arguments.done", "output_index": i, "item_id": item_id, "arguments": args}));
                ev.push(json!({"type": "response.output_item.done", "output_index": i, "item": {"type": "function_call", "id": item_id, "call_id": id, "name": name, "arguments": args, "status": "completed"}}));
            }
            ev.push(json!({"type": "response.completed", "response": {"status": "completed", "output": []}}));
        }
    }
    ev
}

fn slow_stream(format: WireFormat) -> Vec<Value> {
    // Padded with spaces (still JSON) so it splits into TRICKLE pieces.
    let slow_args = format!(r#"{{"duration_ms":{}1}}"#, " ".repeat(TRICKLE));
    let mut trickle: Vec<String> = Vec::new();
    let chars: Vec<char> = slow_args.chars().collect();
    let per = chars.len().div_ceil(TRICKLE);
    for c in chars.chunks(per) {
        trickle.push(c.iter().collect());
    }
    stream(
        format,
        &[
            (
                "first",
                "Sleep",
                vec![r#"{"duration_"#.into(), r#"ms": 500}"#.into()],
            ),
            ("second", "Sleep", trickle),
        ],
    )
}

/// True for the events after which the test waits (the trickle).
fn is_trickle(e: &Value) -> bool {
    let t = e.to_string();
    (t.contains("partial_json") || t.contains("arguments") && !t.contains("output_item"))
        && !t.contains("duration_\"")
        && !t.contains("500")
        && !t.contains("\"first\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_rust_api_a_call_starts_before_the_stream_ends() {
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .allow_all_unsafe()
        .build()
        .expect("the engine builds");
    for format in WireFormat::ALL {
        let batch = engine.open_batch().await.unwrap();
        let (handle, mut events) = batch.split();
        let feeder = tokio::spawn(async move {
            let mut parser = StreamParser::new(format);
            for e in slow_stream(format) {
                if is_trickle(&e) {
                    tokio::time::sleep(STEP).await;
                }
                let data = match &e {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                parser
                    .feed(&data, FnSink(|call| handle.add(call).unwrap()))
                    .unwrap();
            }
            let done = parser
                .finish(FnSink(|call| handle.add(call).unwrap()))
                .unwrap();
            assert!(done.complete);
            let last_event = Instant::now();
            handle.end();
            last_event
        });
        let mut first_result = None;
        use futures::StreamExt;
        while let Some(event) = events.next().await {
            match event {
                Event::Result { result, .. } if result.call_id == "first" => {
                    assert!(!result.is_error, "{}", result.text());
                    first_result = Some(Instant::now());
                }
                Event::Done(_) => break,
                _ => {}
            }
        }
        let last_event = feeder.await.unwrap();
        let first_result = first_result.expect("a result for the first call");
        // Negative (before the end) or well under the sleep's 500 ms.
        let gap = first_result.saturating_duration_since(last_event);
        assert!(
            gap < Duration::from_millis(500),
            "{format}: the Sleep 500 result came {gap:?} after the stream's last event"
        );
    }
}

#[test]
fn through_serve_stream_lines_a_call_starts_before_the_stream_ends() {
    let dir = tempfile::tempdir().unwrap();
    for format in WireFormat::ALL {
        let mut child = crate::support::baton()
            .args(["serve", "--cwd", dir.path().to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in stdout.lines() {
                let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
                let _ = tx.send((Instant::now(), line));
            }
        });
        let mut last_event = Instant::now();
        for e in slow_stream(format) {
            if is_trickle(&e) {
                std::thread::sleep(STEP);
            }
            writeln!(stdin, "{}", json!({"type": "stream", "event": e})).unwrap();
            stdin.flush().unwrap();
            last_event = Instant::now();
        }
        drop(stdin);
        let lines: Vec<(Instant, Value)> = rx.iter().collect();
        reader.join().unwrap();
        assert!(child.wait().unwrap().success());
        let (at, _) = lines
            .iter()
            .find(|(_, l)| l["type"] == "result" && l["tool_use_id"] == "first")
            .unwrap_or_else(|| panic!("{format}: no result for the first call: {lines:?}"));
        let gap = at.saturating_duration_since(last_event);
        assert!(gap < Duration::from_millis(500), "{format}: {gap:?}");
        let done = lines.iter().find(|(_, l)| l["type"] == "done").unwrap();
        assert_eq!(done.1["summary"]["calls"], 2, "{format}");
        let sd = lines
            .iter()
            .find(|(_, l)| l["type"] == "stream_done")
            .unwrap();
        assert_eq!(sd.1["complete"], true, "{format}: {}", sd.1);
    }
}
