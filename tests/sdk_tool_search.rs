//! Tool-search output in every wire format, checked by the official SDKs'
//! request types (Python `anthropic` and `openai`, strict, unknown keys
//! forbidden): the tool list with deferred markers, the reminder, the
//! ToolSearch result. Broken variants must be rejected, so the check can
//! fail.

use std::path::Path;
use std::process::Command;

use baton::engine::deferred::ToolSearchSettings;
use baton::engine::wire::WireFormat;
use baton::engine::wire::{anthropic, openai_chat as openai};
use baton::engine::{PoolSpec, ToolPool};
use baton::{CallResult, Engine, ToolUse};
use baton_test_support::mcp_like;
use serde_json::{json, Value};

fn engine(dir: &Path, format: WireFormat, references: bool) -> Engine {
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others: mcp_like::tools(30),
            ..Default::default()
        },
        &baton::engine::AllowAllUnsafe,
    );
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join("state"))
        .tool_search(
            ToolSearchSettings::default()
                .format(format)
                .tool_references(references),
        )
        .allow_all_unsafe()
        .build()
        .expect("the engine builds")
}

const QUERY: &str = "select:WebFetch,mcp__slack__get_issue,Read";

async fn search(engine: &Engine) -> Vec<CallResult> {
    let batch = engine.open_batch().await.unwrap();
    batch
        .add(ToolUse::new(
            "call_1",
            "ToolSearch",
            json!({ "query": QUERY }),
        ))
        .unwrap();
    batch
        .add(ToolUse::new(
            "call_2",
            "ToolSearch",
            json!({"query": "+github issue", "max_results": 3}),
        ))
        .unwrap();
    batch.finish().await.0
}

/// One case per format: what a host sends after a search.
async fn document(dir: &Path) -> Value {
    let mut doc = serde_json::Map::new();
    for (case, format, references) in [
        ("anthropic_references", WireFormat::Anthropic, true),
        ("anthropic_definitions", WireFormat::Anthropic, false),
        ("openai_chat", WireFormat::OpenAiChat, false),
        ("openai_responses", WireFormat::OpenAiResponses, false),
    ] {
        let engine = engine(&dir.join(case), format, references);
        std::fs::create_dir_all(dir.join(case)).unwrap();
        let before = engine.request_tools(format);
        let results = search(&engine).await;
        let after = engine.request_tools(format);
        assert_ne!(
            before.deferred, after.deferred,
            "{case}: the search loaded nothing"
        );
        let reminder = before.reminder.clone().unwrap();
        let mut tools = before.tools.clone();
        tools.extend(after.tools);
        let messages: Vec<Value> = match format {
            WireFormat::Anthropic => vec![
                json!({"role": "user", "content": [{"type": "text", "text": reminder}]}),
                json!({"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_1", "name": "ToolSearch", "input": {"query": QUERY}}
                ]}),
                anthropic::user_message(results.iter()),
            ],
            WireFormat::OpenAiChat => {
                let mut m = vec![
                    json!({"role": "system", "content": reminder}),
                    json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "ToolSearch", "arguments": json!({"query": QUERY}).to_string()}}
                    ]}),
                ];
                m.extend(
                    openai::tool_messages(results.iter())
                        .as_array()
                        .unwrap()
                        .clone(),
                );
                m
            }
            // Responses (the format is non-exhaustive).
            _ => {
                let mut m = vec![
                    json!({"role": "system", "content": reminder}),
                    json!({"type": "function_call", "call_id": "call_1", "name": "ToolSearch",
                           "arguments": json!({"query": QUERY}).to_string()}),
                ];
                m.extend(results.iter().map(|r| {
                    json!({"type": "function_call_output", "call_id": r.call_id, "output": r.text()})
                }));
                m
            }
        };
        let format_key = serde_json::to_value(format).unwrap();
        doc.insert(
            case.into(),
            json!({"format": format_key, "tools": tools, "messages": messages}),
        );
    }
    Value::Object(doc)
}

/// Runs the SDK check over `docs` in one Python process; per document,
/// how many items were checked and the problems found.
fn validate(dir: &Path, docs: &[Value]) -> Vec<(u64, Vec<String>)> {
    let paths: Vec<_> = docs
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let path = dir.join(format!("doc{i}.json"));
            std::fs::write(&path, doc.to_string()).unwrap();
            path
        })
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/validate_tool_search.py");
    let out = Command::new("python3")
        .arg(script)
        .args(&paths)
        .output()
        .expect("python3 is needed for the SDK checks; run ./.ci/deps");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the SDK check did not run (missing or wrong SDK versions? run ./.ci/deps)\n{stderr}"
    );
    let reports: Vec<(u64, Vec<String>)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let problems = v["problems"].as_array().unwrap();
            (
                v["checked"].as_u64().unwrap(),
                problems
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(reports.len(), docs.len(), "{stderr}");
    reports
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_format_conforms_to_the_official_sdk_types() {
    let dir = tempfile::tempdir().unwrap();
    let doc = document(dir.path()).await;
    // The pieces the check is about are really there.
    let refs = &doc["anthropic_references"];
    assert!(refs["tools"].to_string().contains("\"defer_loading\":true"));
    assert!(refs["messages"].to_string().contains("\"tool_reference\""));
    // The one renderer makes OpenAI schemas strict where it can.
    for case in ["openai_chat", "openai_responses"] {
        assert!(doc[case]["tools"].to_string().contains("\"strict\":true"));
    }

    // Each of these breaks the format in a way the SDK types must catch.
    // (what, the one problem expected, how).
    type Breaker = Box<dyn Fn(&mut Value)>;
    let broken: Vec<(&str, &str, Breaker)> = vec![
        (
            "misspelt defer_loading",
            "anthropic_references: tools[0]",
            Box::new(|d: &mut Value| {
                let tool = &mut d["anthropic_references"]["tools"][0];
                tool["defer_loadin"] = json!(true);
            }),
        ),
        (
            "defer_loading as a string",
            "anthropic_references: tools[",
            Box::new(|d: &mut Value| {
                let tools = d["anthropic_references"]["tools"].as_array_mut().unwrap();
                let t = tools
                    .iter_mut()
                    .find(|t| t.get("defer_loading").is_some())
                    .unwrap();
                t["defer_loading"] = json!("true");
            }),
        ),
        (
            "unknown block type",
            "anthropic_references: messages[2]",
            Box::new(|d: &mut Value| {
                let m = d["anthropic_references"]["messages"][2].to_string();
                d["anthropic_references"]["messages"][2] =
                    serde_json::from_str(&m.replace("\"tool_reference\"", "\"tool_ref\"")).unwrap();
            }),
        ),
        (
            "Responses tool without strict",
            "openai_responses: tools[0]",
            Box::new(|d: &mut Value| {
                d["openai_responses"]["tools"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("strict");
            }),
        ),
        (
            "Chat tool in the Responses shape",
            "openai_chat: tools[0]",
            Box::new(|d: &mut Value| {
                let flat = d["openai_responses"]["tools"][0].clone();
                d["openai_chat"]["tools"][0] = flat;
            }),
        ),
    ];
    let mut docs = vec![doc.clone()];
    for (_, _, break_it) in &broken {
        let mut bad = doc.clone();
        break_it(&mut bad);
        docs.push(bad);
    }
    let reports = validate(dir.path(), &docs);
    let (checked, problems) = &reports[0];
    assert!(problems.is_empty(), "{problems:#?}");
    // Four cases, each with its tools (before and after) and messages.
    assert!(*checked > 100, "only {checked} items checked");
    for ((what, expected, _), (_, problems)) in broken.iter().zip(&reports[1..]) {
        assert_eq!(problems.len(), 1, "{what}: {problems:#?}");
        assert!(problems[0].starts_with(expected), "{what}: {problems:#?}");
    }
}
