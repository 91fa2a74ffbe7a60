//! `baton agent` with deferred tools, a real MCP server and a subagent, in
//! every wire format: the main agent loads an MCP tool with ToolSearch,
//! calls it beside an Agent call, and the subagent (the same loop, nested
//! under the Agent call) runs real bash and answers. The mock model routes
//! each request by the prompt that opened its conversation, so the main
//! agent's and the subagent's requests may interleave.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use baton::engine::wire::WireFormat;
use baton_test_support::sdk_check::sdk_check;
use baton_test_support::{model_server, procs, scenario};
use scenario::{turn, Scenario};
use serde_json::{json, Value};

/// Which conversation a request belongs to: `main` or `sub`, by its prompt.
fn conversation_of(format: WireFormat, request: &Value) -> &'static str {
    let first_user = match format {
        WireFormat::Anthropic => request["messages"].as_array(),
        WireFormat::OpenAiChat => request["messages"].as_array(),
        _ => request["input"].as_array(),
    }
    .and_then(|items| items.iter().find(|m| m["role"] == "user"))
    .cloned()
    .unwrap_or(Value::Null);
    let text = match &first_user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .last()
            .and_then(|p| p["text"].as_str())
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    };
    if text.starts_with("SUB:") {
        "sub"
    } else {
        "main"
    }
}

#[derive(Clone)]
struct Mock {
    format: WireFormat,
    /// Per conversation, the answers to its requests in order.
    script: Arc<Mutex<HashMap<&'static str, Vec<Scenario>>>>,
    /// Every request with its conversation, in arrival order.
    requests: Arc<Mutex<Vec<(&'static str, Value)>>>,
}

async fn handle(State(mock): State<Mock>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let who = conversation_of(mock.format, &request);
    mock.requests.lock().unwrap().push((who, request));
    let next = {
        let mut script = mock.script.lock().unwrap();
        let turns = script.entry(who).or_default();
        (!turns.is_empty()).then(|| turns.remove(0))
    };
    let Some(scenario) = next else {
        return Response::builder()
            .status(400)
            .body(Body::from(format!(
                "the script of `{who}` has no more turns"
            )))
            .unwrap();
    };
    let events = match mock.format {
        WireFormat::Anthropic => scenario::anthropic(&scenario, &[30000]),
        WireFormat::OpenAiChat => scenario::openai_chat(&scenario, &[30000]),
        _ => scenario::openai_responses(&scenario, &[30000]),
    };
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(scenario::sse(&events)))
        .unwrap()
}

fn start(format: WireFormat, script: HashMap<&'static str, Vec<Scenario>>) -> (Mock, String) {
    let mock = Mock {
        format,
        script: Arc::new(Mutex::new(script)),
        requests: Arc::default(),
    };
    let base = model_server::serve_post(handle, mock.clone());
    (mock, base)
}

fn script() -> HashMap<&'static str, Vec<Scenario>> {
    let mut s = HashMap::new();
    s.insert(
        "main",
        vec![
            turn(
                "Loading the notes tool.",
                &[(
                    "call_ts",
                    "ToolSearch",
                    json!({"query": "select:mcp__notes__search"}),
                )],
            ),
            turn(
                "Searching and delegating.",
                &[
                    (
                        "call_mcp",
                        "mcp__notes__search",
                        json!({"query": "parallel"}),
                    ),
                    (
                        "call_agent",
                        "Agent",
                        json!({"description": "echo in a subagent", "prompt": "SUB: run the echo"}),
                    ),
                ],
            ),
            turn("All done.", &[]),
        ],
    );
    s.insert(
        "sub",
        vec![
            turn(
                "Running it.",
                &[(
                    "call_sub_bash",
                    "Bash",
                    json!({"command": "echo sub-ran-$((6*7))"}),
                )],
            ),
            turn("Subagent saw sub-ran-42.", &[]),
        ],
    );
    s
}

/// Tool names of a request, with Anthropic's `defer_loading` mark.
fn tools_of(request: &Value) -> Vec<(String, bool)> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"]
                .as_str()
                .or(t["function"]["name"].as_str())
                .unwrap();
            (name.to_string(), t["defer_loading"] == true)
        })
        .collect()
}

/// The answers a request carries, by call id (content as JSON text).
fn answers(format: WireFormat, request: &Value) -> HashMap<String, String> {
    let items = match format {
        WireFormat::OpenAiResponses => request["input"].as_array(),
        _ => request["messages"].as_array(),
    }
    .unwrap();
    let mut out = HashMap::new();
    for item in items {
        match format {
            WireFormat::Anthropic => {
                for b in item["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_result" {
                        out.insert(
                            b["tool_use_id"].as_str().unwrap().into(),
                            b["content"].to_string(),
                        );
                    }
                }
            }
            WireFormat::OpenAiChat if item["role"] == "tool" => {
                out.insert(
                    item["tool_call_id"].as_str().unwrap().into(),
                    item["content"].to_string(),
                );
            }
            WireFormat::OpenAiResponses if item["type"] == "function_call_output" => {
                out.insert(
                    item["call_id"].as_str().unwrap().into(),
                    item["output"].to_string(),
                );
            }
            _ => {}
        }
    }
    out
}

fn task_in(format: WireFormat) {
    let (mock, base) = start(format, script());
    let dir = tempfile::tempdir().unwrap();
    // A copy of the demo's MCP server (official Python SDK) at a path of
    // this test's own, so its process can be looked for after the run.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = dir.path().join("notes_server.py");
    std::fs::copy(repo.join("examples/demo/mcp/notes_server.py"), &server).unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"notes": {"command": "python3", "args": [&server]}}}).to_string(),
    )
    .unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["mcp__notes", "Bash(echo:*)"]}}).to_string(),
    )
    .unwrap();
    let base = match format {
        WireFormat::Anthropic => base,
        _ => format!("{base}/v1"),
    };
    let out = crate::support::baton()
        .args(["agent", "--provider", format.name(), "--base-url", &base])
        .args(["--events", "--strict-mcp-config", "--mcp-config"])
        .arg(&config)
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(dir.path())
        .arg("MAIN: search the notes and delegate the echo")
        .env("HOME", dir.path())
        .env("MCP_TIMEOUT", "120000")
        .env_remove("ENABLE_TOOL_SEARCH")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = lines.iter().rev().find(|l| l["type"] == "end").unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{format}: {end}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(end["reason"], "done", "{format}");

    let all = mock.requests.lock().unwrap().clone();
    let of = |who: &str| -> Vec<Value> {
        all.iter()
            .filter(|(w, _)| *w == who)
            .map(|(_, r)| r.clone())
            .collect()
    };
    let (main, sub) = (of("main"), of("sub"));
    assert_eq!((main.len(), sub.len()), (3, 2), "{format}: requests");

    // Turn 1: the MCP tool is deferred (named in the reminder, marked for
    // Anthropic, left out for OpenAI); turn 2 carries it in full.
    let search = "mcp__notes__search".to_string();
    let first = tools_of(&main[0]);
    let second = tools_of(&main[1]);
    assert!(
        main[0].to_string().contains("select:<name>"),
        "{format}: no reminder"
    );
    match format {
        WireFormat::Anthropic => {
            assert!(
                first.contains(&(search.clone(), true)),
                "{format}: {first:?}"
            );
            assert!(second.contains(&(search.clone(), true)));
            let loaded = &answers(format, &main[1])["call_ts"];
            assert!(loaded.contains("tool_reference"), "{format}: {loaded}");
            assert!(loaded.contains("mcp__notes__search"), "{format}: {loaded}");
        }
        _ => {
            assert!(
                !first.iter().any(|(n, _)| *n == search),
                "{format}: {first:?}"
            );
            assert_eq!(second.last(), Some(&(search.clone(), false)), "{format}");
            assert_eq!(second.len(), first.len() + 1, "{format}");
        }
    }
    // Turn 3: the MCP server's answer and the subagent's report.
    let third = answers(format, &main[2]);
    assert!(
        third["call_mcp"].contains("in parallel"),
        "{format}: {third:?}"
    );
    let report = &third["call_agent"];
    assert!(
        report.contains("Subagent saw sub-ran-42."),
        "{format}: {report}"
    );
    assert!(report.contains("agentId"), "{format}: {report}");

    // The subagent: its own conversation with the definition's system
    // prompt and real bash output in its second request.
    assert!(
        tools_of(&sub[0]).iter().any(|(n, _)| n == "Bash"),
        "{format}"
    );
    let system = match format {
        WireFormat::Anthropic => sub[0]["system"].as_str(),
        WireFormat::OpenAiChat => sub[0]["messages"][0]["content"].as_str(),
        _ => sub[0]["instructions"].as_str(),
    };
    assert!(
        system.is_some_and(|s| !s.is_empty()),
        "{format}: {}",
        sub[0]
    );
    let echoed = &answers(format, &sub[1])["call_sub_bash"];
    assert!(echoed.contains("sub-ran-42"), "{format}: {echoed}");

    // Its events carry its id; the main agent's do not.
    let nested: Vec<&Value> = lines.iter().filter(|l| l["agent_id"].is_string()).collect();
    assert!(
        nested
            .iter()
            .any(|l| l["type"] == "call" && l["id"] == "call_sub_bash"),
        "{format}: {nested:?}"
    );
    assert!(lines
        .iter()
        .any(|l| l["type"] == "call" && l["id"] == "call_agent" && l["agent_id"].is_null()));

    let requests: Vec<Value> = all.into_iter().map(|(_, r)| r).collect();
    sdk_check(format.name(), &requests);
    let left = procs::pids_with(&server.to_string_lossy());
    assert!(
        left.is_empty(),
        "{format}: MCP server left running: {left:?}"
    );
}

#[test]
fn anthropic_tool_search_mcp_and_a_subagent() {
    task_in(WireFormat::Anthropic);
}

#[test]
fn openai_chat_tool_search_mcp_and_a_subagent() {
    task_in(WireFormat::OpenAiChat);
}

#[test]
fn openai_responses_tool_search_mcp_and_a_subagent() {
    task_in(WireFormat::OpenAiResponses);
}
