//! `baton agent` against a model stream that stalls: the idle limit ends
//! each attempt, retries follow, and the run ends with its own exit code
//! (3) and a clear reason. Also: `retry-after-ms` and 429s are obeyed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use baton_test_support::model_server;
use futures::StreamExt;
use serde_json::{json, Value};

#[derive(Clone)]
enum Reply {
    /// These events, then nothing, with the connection held open.
    Stall(Vec<Value>),
    /// A status with headers.
    Status(u16, Vec<(&'static str, &'static str)>),
    /// A whole stream.
    Events(Vec<Value>),
    /// These events, a pause, then those.
    Paused(Vec<Value>, Duration, Vec<Value>),
}

#[derive(Clone, Default)]
struct Mock {
    replies: Arc<Mutex<Vec<Reply>>>,
    times: Arc<Mutex<Vec<Instant>>>,
}

fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect::<String>()
        .into_bytes()
}

async fn handle(State(mock): State<Mock>) -> Response {
    mock.times.lock().unwrap().push(Instant::now());
    let reply = {
        let mut r = mock.replies.lock().unwrap();
        if r.is_empty() {
            Reply::Status(400, vec![])
        } else {
            r.remove(0)
        }
    };
    match reply {
        Reply::Stall(events) => {
            let head = futures::stream::iter([Ok::<_, std::io::Error>(sse(&events))]);
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(head.chain(futures::stream::pending())))
                .unwrap()
        }
        Reply::Status(code, headers) => {
            let mut r = (
                axum::http::StatusCode::from_u16(code).unwrap(),
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
            )
                .into_response();
            for (k, v) in headers {
                r.headers_mut().insert(k, v.parse().unwrap());
            }
            r
        }
        Reply::Paused(before, pause, after) => {
            let head = futures::stream::iter([Ok::<_, std::io::Error>(sse(&before))]);
            let tail = futures::stream::once(async move {
                tokio::time::sleep(pause).await;
                Ok::<_, std::io::Error>(sse(&after))
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(head.chain(tail)))
                .unwrap()
        }
        Reply::Events(events) => {
            ([("content-type", "text/event-stream")], sse(&events)).into_response()
        }
    }
}

fn start(replies: Vec<Reply>) -> (Mock, String) {
    let mock = Mock {
        replies: Arc::new(Mutex::new(replies)),
        ..Mock::default()
    };
    let base = model_server::serve_post(handle, mock.clone());
    (mock, base)
}

fn agent(base: &str, extra: &[&str]) -> (Option<i32>, Vec<Value>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = crate::support::baton()
        .args([
            "agent",
            "--provider",
            "anthropic",
            "--base-url",
            base,
            "--events",
        ])
        .args(extra)
        .arg("--cwd")
        .arg(dir.path())
        .arg("hello")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code(), lines, started.elapsed())
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
        "content": [], "model": "x", "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 0}}})
}

fn whole_answer() -> Vec<Value> {
    vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ]
}

#[test]
fn a_stream_that_stalls_after_message_start_ends_with_exit_3() {
    let (mock, base) = start(vec![
        Reply::Stall(vec![message_start()]),
        Reply::Stall(vec![message_start()]),
    ]);
    let (code, lines, took) = agent(&base, &["--stream-idle-timeout", "1", "--max-retries", "1"]);
    assert_eq!(code, Some(3), "{lines:#?}");
    let end = lines.iter().rev().find(|l| l["type"] == "end").unwrap();
    assert_eq!(end["reason"], "stalled");
    assert!(
        end["error"].as_str().unwrap().contains("idle limit"),
        "{end}"
    );
    assert!(lines.iter().any(|l| l["type"] == "retry"));
    assert_eq!(mock.times.lock().unwrap().len(), 2);
    // Two 1 s idle limits, not forever (generous bound for a loaded machine).
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn the_total_limit_ends_a_stream_that_trickles() {
    // Events keep coming (no idle stall) but the stream never ends: the
    // total limit stops it. The stall here is after the first event, so
    // the idle limit is larger than the total.
    let (_mock, base) = start(vec![Reply::Stall(vec![message_start()])]);
    let (code, lines, _) = agent(
        &base,
        &[
            "--stream-idle-timeout",
            "100",
            "--stream-timeout",
            "1",
            "--max-retries",
            "0",
        ],
    );
    assert_eq!(code, Some(3), "{lines:#?}");
    let end = lines.iter().rev().find(|l| l["type"] == "end").unwrap();
    assert!(
        end["error"].as_str().unwrap().contains("total limit"),
        "{end}"
    );
}

#[test]
fn rate_limits_wait_as_the_server_says_then_succeed() {
    let (mock, base) = start(vec![
        Reply::Status(429, vec![("retry-after-ms", "700")]),
        Reply::Status(529, vec![]),
        Reply::Events(whole_answer()),
    ]);
    let (code, lines, _) = agent(&base, &[]);
    assert_eq!(code, Some(0), "{lines:#?}");
    let retries: Vec<&Value> = lines.iter().filter(|l| l["type"] == "retry").collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["wait_ms"], 700);
    let times = mock.times.lock().unwrap().clone();
    assert!(times[1] - times[0] >= Duration::from_millis(650));
    // A 400 with x-should-retry: true is retried too; without it, not.
    let (mock, base) = start(vec![
        Reply::Status(400, vec![("x-should-retry", "true")]),
        Reply::Events(whole_answer()),
    ]);
    let (code, _, _) = agent(&base, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(mock.times.lock().unwrap().len(), 2);
    let (mock, base) = start(vec![Reply::Status(400, vec![])]);
    let (code, lines, _) = agent(&base, &[]);
    assert_eq!(code, Some(1), "{lines:#?}");
    assert_eq!(mock.times.lock().unwrap().len(), 1);
}

/// `--events` shows a call's result while the model is still streaming:
/// the stream pauses for seconds after a complete call, and the result
/// line comes before the turn's `assistant` line.
#[test]
fn events_stream_while_the_model_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seen.txt");
    std::fs::write(&path, "visible\n").unwrap();
    let call = json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
        "input": {}});
    let before = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": call}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
            "partial_json": json!({"file_path": path}).to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    let after = vec![
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    let (_mock, base) = start(vec![
        Reply::Paused(before, Duration::from_secs(4), after),
        Reply::Events(whole_answer()),
    ]);
    let (code, lines, _) = agent(&base, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(code, Some(0), "{lines:#?}");
    let at = |kind: &str| lines.iter().position(|l| l["type"] == kind);
    let result = at("result").expect("a result line");
    let assistant = at("assistant").expect("an assistant line");
    assert!(result < assistant, "{lines:#?}");
    assert!(
        lines[result].to_string().contains("visible"),
        "{}",
        lines[result]
    );
}
