//! `baton agent --tool-changes` against a mock Anthropic server (issue 23,
//! item 5): a tool that ToolSearch loads reaches the model as a
//! `tool_addition` block in a `role: "system"` message, the request's
//! `tools` stays byte for byte what the first request declared, and the
//! beta header is sent. A server that refuses the beta (400 naming it)
//! gets the same conversation with the tool list rewritten instead.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use baton_test_support::{model_server, scenario};
use scenario::{turn, Scenario};
use serde_json::{json, Value};

const BETA: &str = "mid-conversation-tool-changes-2026-07-01";

#[derive(Clone)]
enum Reply {
    /// A 400 whose message names the beta.
    RefuseBeta,
    Stream(Scenario),
}

/// A request's body and its `anthropic-beta` header.
type Seen = (Value, Option<String>);

#[derive(Clone, Default)]
struct Mock {
    replies: Arc<Mutex<Vec<Reply>>>,
    /// Each request's body and its `anthropic-beta` header.
    requests: Arc<Mutex<Vec<Seen>>>,
}

async fn handle(State(mock): State<Mock>, headers: HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let beta = headers
        .get("anthropic-beta")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    mock.requests.lock().unwrap().push((request, beta.clone()));
    let reply = {
        let mut replies = mock.replies.lock().unwrap();
        (!replies.is_empty()).then(|| replies.remove(0))
    };
    match reply {
        Some(Reply::RefuseBeta) if beta.is_some() => (
            StatusCode::BAD_REQUEST,
            format!(
                r#"{{"type":"error","error":{{"type":"invalid_request_error","message":"Unexpected value(s) `{BETA}` for the `anthropic-beta` header."}}}}"#
            ),
        )
            .into_response(),
        Some(Reply::RefuseBeta) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "refusal replayed without the beta").into_response()
        }
        Some(Reply::Stream(s)) => Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(scenario::sse(&scenario::anthropic(&s, &[]))))
            .unwrap(),
        None => (StatusCode::BAD_REQUEST, "no more replies").into_response(),
    }
}

/// Load Sleep (deferred), call it, finish.
fn script() -> Vec<Reply> {
    vec![
        Reply::Stream(turn(
            "Loading Sleep.",
            &[("call_ts", "ToolSearch", json!({"query": "select:Sleep"}))],
        )),
        Reply::Stream(turn(
            "Sleeping.",
            &[("call_sleep", "Sleep", json!({"duration_ms": 1}))],
        )),
        Reply::Stream(turn("Done.", &[])),
    ]
}

/// Runs `baton agent --tool-changes` against a mock with `replies`; the
/// exit code, the event lines and the requests the mock received.
fn run(replies: Vec<Reply>) -> (Option<i32>, Vec<Value>, Vec<Seen>) {
    let mock = Mock {
        replies: Arc::new(Mutex::new(replies)),
        ..Mock::default()
    };
    let base = model_server::serve_post(handle, mock.clone());
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::baton()
        .args(["agent", "--provider", "anthropic", "--tool-changes"])
        .args(["--base-url", &base])
        .args(["--events", "--max-retries", "0", "--cwd"])
        .arg(dir.path())
        .arg("do the task")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ENABLE_TOOL_SEARCH")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let requests = mock.requests.lock().unwrap().clone();
    (out.status.code(), lines, requests)
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .map(|t| t.iter().filter_map(|d| d["name"].as_str()).collect())
        .unwrap_or_default()
}

/// The `role: "system"` messages of a request.
fn system_messages(request: &Value) -> Vec<&Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .collect()
}

fn result_text(request: &Value, id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .map(|b| b["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn a_toolsearch_load_is_followed_by_a_tool_addition_block() {
    let (code, lines, requests) = run(script());
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(requests.len(), 3, "{lines:?}");
    for (_, beta) in &requests {
        assert!(
            beta.as_deref().is_some_and(|b| b.contains(BETA)),
            "beta header missing: {beta:?}"
        );
    }
    let first = &requests[0].0;
    // Deferred tools are not declared (no `defer_loading`, no references).
    assert!(!names(&first["tools"]).contains(&"Sleep"));
    assert!(first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("defer_loading").is_none()));
    for (request, _) in &requests[1..] {
        assert_eq!(request["tools"], first["tools"], "tools was rewritten");
    }
    assert!(system_messages(first).is_empty());
    // After the load: one system message adding Sleep by value.
    let second = &requests[1].0;
    let system = system_messages(second);
    assert_eq!(system.len(), 1, "{second}");
    let blocks = system[0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0]["type"], "tool_addition");
    assert_eq!(blocks[0]["tool"]["type"], "tool_definition");
    let definition = &blocks[0]["tool"]["definition"];
    assert_eq!(definition["name"], "Sleep");
    assert!(definition["input_schema"]["properties"]["duration_ms"].is_object());
    // The block comes after the ToolSearch result it follows.
    let messages = second["messages"].as_array().unwrap();
    let at = |pred: &dyn Fn(&Value) -> bool| messages.iter().position(pred).unwrap();
    let result = at(&|m| m.to_string().contains("\"tool_use_id\":\"call_ts\""));
    let change = at(&|m| m["role"] == "system");
    assert!(result < change, "{messages:?}");
    assert!(!result_text(second, "call_ts").contains("tool_reference"));
    // The loaded tool ran, and nothing changed after it: no new blocks.
    let third = &requests[2].0;
    assert_eq!(system_messages(third).len(), 1);
    assert!(
        !result_text(third, "call_sleep").contains("\"is_error\":true"),
        "{third}"
    );
}

#[test]
fn a_provider_refusing_the_beta_gets_the_tools_rewritten() {
    let mut replies = vec![Reply::RefuseBeta];
    replies.extend(script());
    let (code, lines, requests) = run(replies);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(requests.len(), 4, "{lines:?}");
    assert!(requests[0].1.is_some(), "the first request tries the beta");
    for (request, beta) in &requests[1..] {
        assert!(beta.is_none(), "beta sent after the refusal");
        assert!(system_messages(request).is_empty(), "{request}");
    }
    assert!(lines.iter().any(|l| l
        .to_string()
        .contains("refused the mid-conversation tool changes beta")));
    // Without the beta, the load rewrites `tools` (Sleep appended).
    assert!(!names(&requests[1].0["tools"]).contains(&"Sleep"));
    assert_eq!(names(&requests[2].0["tools"]).last(), Some(&"Sleep"));
}
