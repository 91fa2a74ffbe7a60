//! `baton agent` against mock providers on 127.0.0.1 (axum), streaming
//! events in the real shapes, with faults; the requests it sends are
//! checked against the official Python SDKs' types.

use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use baton::engine::wire::WireFormat;
use baton_test_support::sdk_check::sdk_check;
use baton_test_support::{model_server, scenario};
use scenario::{Call, Scenario};
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Clone)]
enum Reply {
    Status(u16),
    /// SSE events; `cut`: the connection breaks after this many.
    Stream {
        events: Vec<Value>,
        cut: Option<usize>,
    },
}

#[derive(Clone, Default)]
struct Mock {
    replies: Arc<Mutex<Vec<Reply>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn handle(State(mock): State<Mock>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    mock.requests.lock().unwrap().push(request);
    let reply = {
        let mut replies = mock.replies.lock().unwrap();
        if replies.is_empty() {
            Reply::Status(500)
        } else {
            replies.remove(0)
        }
    };
    match reply {
        Reply::Status(code) => (
            StatusCode::from_u16(code).unwrap(),
            [("retry-after", "0")],
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
            .into_response(),
        Reply::Stream { events, cut } => {
            let text = scenario::sse(&events[..cut.unwrap_or(events.len())]);
            let mut chunks: Vec<Result<Vec<u8>, std::io::Error>> = text
                .into_bytes()
                .chunks(97)
                .map(|c| Ok(c.to_vec()))
                .collect();
            if cut.is_some() {
                chunks.push(Err(std::io::Error::other("cut")));
            }
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap()
        }
    }
}

/// Starts the mock on its own thread and runtime; returns its base URL.
fn start(replies: Vec<Reply>) -> (Mock, String) {
    let mock = Mock {
        replies: Arc::new(Mutex::new(replies)),
        ..Mock::default()
    };
    let base = model_server::serve_post(handle, mock.clone());
    (mock, base)
}

fn events(format: WireFormat, s: &Scenario) -> Vec<Value> {
    match format {
        WireFormat::Anthropic => scenario::anthropic(s, &[20000, 45000]),
        WireFormat::OpenAiChat => scenario::openai_chat(s, &[20000, 45000]),
        _ => scenario::openai_responses(s, &[20000, 45000]),
    }
}

fn calls(s: &[(&str, &str)]) -> Scenario {
    Scenario {
        text: Some("Working on it.".into()),
        thinking: None,
        server_tool: false,
        calls: s
            .iter()
            .map(|(id, args)| Call {
                id: id.to_string(),
                name: "Sleep".into(),
                args: args.to_string(),
            })
            .collect(),
    }
}

fn finish() -> Scenario {
    Scenario {
        text: Some("All done.".into()),
        thinking: None,
        server_tool: false,
        calls: vec![],
    }
}

/// Runs `baton agent --events`; returns the exit code and its JSON lines.
fn agent(format: WireFormat, base: &str) -> (Option<i32>, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let base = match format {
        WireFormat::Anthropic => base.to_string(),
        _ => format!("{base}/v1"),
    };
    let out = crate::support::baton()
        .args([
            "agent",
            "--provider",
            format.name(),
            "--base-url",
            &base,
            "--events",
            "--cwd",
        ])
        .arg(dir.path())
        .arg("do the task")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code(), lines)
}

fn end_of(lines: &[Value]) -> &Value {
    lines
        .iter()
        .rev()
        .find(|l| l["type"] == "end")
        .expect("an end line")
}

/// The answers to turn 1 as the second request carries them, by call id.
fn answered(format: WireFormat, request: &Value) -> Vec<(String, String)> {
    match format {
        WireFormat::Anthropic => request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().unwrap().to_string(),
                    b["content"][0]["text"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        WireFormat::OpenAiChat => request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap().to_string(),
                    m["content"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        _ => request["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| {
                (
                    i["call_id"].as_str().unwrap().to_string(),
                    i["output"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
    }
}

#[test]
fn a_scripted_task_in_every_format_with_overload_and_bad_arguments() {
    for format in WireFormat::ALL {
        let turn1 = calls(&[
            ("call_a", r#"{"duration_ms": 1}"#),
            ("call_bad", r#"{"duration_ms": 1"#),
        ]);
        let (mock, base) = start(vec![
            Reply::Status(529),
            Reply::Stream {
                events: events(format, &turn1),
                cut: None,
            },
            Reply::Stream {
                events: events(format, &finish()),
                cut: None,
            },
        ]);
        let (code, lines) = agent(format, &base);
        assert_eq!(code, Some(0), "{format}: {lines:?}");
        assert_eq!(end_of(&lines)["reason"], "done", "{format}");
        assert!(
            lines.iter().any(|l| l["type"] == "retry"),
            "{format}: no retry after 529"
        );
        let requests = mock.requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 3, "{format}");
        let got = answered(format, &requests[2]);
        assert_eq!(got.len(), 2, "{format}: {got:?}");
        assert_eq!(
            got[0],
            ("call_a".to_string(), "Slept for 1 ms.".to_string()),
            "{format}"
        );
        assert_eq!(got[1].0, "call_bad");
        assert!(
            got[1].1.contains("JSON") || got[1].1.contains("json"),
            "{format}: {}",
            got[1].1
        );
        // Loaded tools in full; deferred ones (SPEC §10) marked for
        // Anthropic, left out for OpenAI until ToolSearch loads them.
        let tools = requests[0]["tools"].as_array().unwrap();
        let named = |n: &str| {
            tools
                .iter()
                .find(|t| t["name"] == n || t["function"]["name"] == n)
                .cloned()
        };
        for name in ["Bash", "Read", "Edit", "ToolSearch", "Agent"] {
            assert!(named(name).is_some(), "{format}: {name} not sent");
        }
        match format {
            WireFormat::Anthropic => {
                assert_eq!(named("WebFetch").unwrap()["defer_loading"], true);
                assert_eq!(named("Sleep").unwrap()["defer_loading"], true);
            }
            _ => assert!(
                named("WebFetch").is_none() && named("Sleep").is_none(),
                "{format}: deferred tool sent"
            ),
        }
        sdk_check(format.name(), &requests);
    }
}

#[test]
fn a_stream_cut_mid_call_runs_what_was_complete_and_goes_on() {
    let format = WireFormat::Anthropic;
    let turn1 = calls(&[
        ("call_a", r#"{"duration_ms": 1}"#),
        ("call_b", r#"{"duration_ms": 1}"#),
    ]);
    let evs = events(format, &turn1);
    let b_start = evs
        .iter()
        .position(|e| e["content_block"]["id"] == "call_b")
        .unwrap();
    let (mock, base) = start(vec![
        Reply::Stream {
            events: evs.clone(),
            cut: Some(b_start + 2),
        },
        Reply::Stream {
            events: events(format, &finish()),
            cut: None,
        },
    ]);
    let (code, lines) = agent(format, &base);
    assert_eq!(code, Some(0), "{lines:?}");
    let requests = mock.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let ids: Vec<String> = answered(format, &requests[1])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        ids,
        ["call_a"],
        "only the complete call ran and was answered"
    );
    // The system message (the default prompt) comes first.
    let assistant = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    let uses: Vec<&Value> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1, "{assistant}");
    sdk_check(format.name(), &requests);
}

#[test]
fn a_hundred_parallel_calls_in_one_turn() {
    let format = WireFormat::OpenAiChat;
    let ids: Vec<String> = (0..100).map(|i| format!("call_{i:03}")).collect();
    let list: Vec<(&str, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), r#"{"duration_ms": 20}"#))
        .collect();
    let (mock, base) = start(vec![
        Reply::Stream {
            events: events(format, &calls(&list)),
            cut: None,
        },
        Reply::Stream {
            events: events(format, &finish()),
            cut: None,
        },
    ]);
    let (code, lines) = agent(format, &base);
    assert_eq!(code, Some(0), "{:?}", end_of(&lines));
    let requests = mock.requests.lock().unwrap().clone();
    let got: Vec<String> = answered(format, &requests[1])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(got, ids, "100 answers, in call order");
}

#[test]
fn the_sdk_check_can_fail() {
    let bad = vec![
        json!({"model": "m", "max_tokens": "many", "messages": [{"role": "robot", "content": "x"}], "stream": true}),
    ];
    let path = std::env::temp_dir().join(format!("baton-agent-bad-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk_check.py");
    for format in WireFormat::ALL {
        let out = Command::new("python3")
            .args([script, format.name()])
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{format}: a bad request passed");
    }
    let _ = std::fs::remove_file(&path);
}

/// A Chat Completions server that ignores `n` = 1 and streams two choices,
/// each with a call: only choice 0's call runs and is answered, the turn's
/// message keeps only its calls, and a diagnostic says what was ignored.
#[test]
fn several_chat_choices_run_choice_zero_and_say_so() {
    let format = WireFormat::OpenAiChat;
    let two = |choices: Vec<Value>| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
               "model": "gpt-test", "choices": choices})
    };
    let call_in = |choice: u64, id: &str| {
        json!({"index": choice, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": id,
            "type": "function", "function": {"name": "Sleep", "arguments": "{\"duration_ms\": 1}"}}]},
            "finish_reason": null})
    };
    let end_of = |choice: u64| json!({"index": choice, "delta": {}, "finish_reason": "tool_calls"});
    let turn1 = vec![
        two(vec![call_in(1, "call_other")]),
        two(vec![call_in(0, "call_zero")]),
        two(vec![end_of(0), end_of(1)]),
        json!("[DONE]"),
    ];
    let (mock, base) = start(vec![
        Reply::Stream {
            events: turn1,
            cut: None,
        },
        Reply::Stream {
            events: events(format, &finish()),
            cut: None,
        },
    ]);
    let (code, lines) = agent(format, &base);
    assert_eq!(code, Some(0), "{lines:?}");
    let requests = mock.requests.lock().unwrap().clone();
    let ids: Vec<String> = answered(format, &requests[1])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["call_zero"]);
    // The system message (the default prompt) comes first.
    let assistant = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(assistant["tool_calls"][0]["id"], "call_zero");
    let notes: Vec<&Value> = lines.iter().filter(|l| l["type"] == "diagnostic").collect();
    assert_eq!(notes.len(), 1, "{lines:?}");
    assert!(notes[0]["message"]
        .as_str()
        .unwrap()
        .contains("only choice 0"));
    sdk_check(format.name(), &requests);
}
