//! Deferred tools end to end (SPEC §10): the hint path, discovery across
//! messages, the next request's tool list per format, the modes.

use std::sync::Arc;

use baton::engine::deferred::{ToolSearchMode, ToolSearchSettings};
use baton::engine::wire::anthropic;
use baton::engine::wire::WireFormat;
use baton::engine::{
    async_trait, PoolSpec, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin,
    ToolOutput, ToolPool,
};
use baton::{CallResult, Engine, Outcome, ToolUse};
use baton_test_support::mcp_like;
use serde_json::{json, Value};

struct Created;

#[async_trait]
impl ToolLogic<Value> for Created {
    async fn call(&self, input: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("created {}", input["title"])))
    }
}

fn jira(name: &str) -> Arc<Tool> {
    let schema = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    });
    let def = ToolDef::new(format!("mcp__jira__{name}"), "Creates a Jira issue.").origin(
        ToolOrigin::Mcp {
            server: "jira".into(),
        },
    );
    Arc::new(Tool::raw(def, schema, Created).unwrap())
}

fn pool() -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others: vec![jira("create_issue"), jira("delete_issue")],
            ..Default::default()
        },
        &baton::engine::AllowAllUnsafe,
    )
}

fn engine(dir: &std::path::Path, settings: ToolSearchSettings) -> Engine {
    Engine::builder(pool())
        .cwd(dir)
        .state_dir(dir.join("state"))
        .tool_search(settings)
        .allow_all_unsafe()
        .build()
        .expect("the engine builds")
}

async fn message(engine: &Engine, calls: Vec<(&str, Value)>) -> Vec<CallResult> {
    let batch = engine.open_batch().await.unwrap();
    for (i, (name, input)) in calls.into_iter().enumerate() {
        batch
            .add(ToolUse::new(format!("toolu_{i}"), name, input))
            .unwrap();
    }
    batch.finish().await.0
}

fn names(tools: &[Value], format: WireFormat) -> Vec<String> {
    tools
        .iter()
        .map(|t| {
            let name = match format {
                WireFormat::OpenAiChat => &t["function"]["name"],
                _ => &t["name"],
            };
            name.as_str().unwrap().to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_call_then_select_then_valid_call_across_messages() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), ToolSearchSettings::default());

    // 1. The model guesses TodoWrite's input without its definition.
    let r = message(&engine, vec![("TodoWrite", json!({"items": []}))]).await;
    assert_eq!(r[0].outcome, Outcome::InvalidInput);
    assert!(
        r[0].text()
            .contains("ToolSearch with query \"select:TodoWrite\""),
        "{}",
        r[0].text()
    );

    // 2. It follows the hint, in the next message.
    let r = message(
        &engine,
        vec![("ToolSearch", json!({"query": "select:TodoWrite"}))],
    )
    .await;
    assert_eq!(r[0].outcome, Outcome::Success);
    let user = anthropic::user_message(r.iter());
    assert_eq!(
        user["content"][0]["content"],
        json!([{"type": "tool_reference", "tool_name": "TodoWrite"}])
    );
    assert_eq!(engine.loaded_tools(), ["TodoWrite"]);

    // 3. A later message: the valid call runs; a bad one no longer hints.
    let r = message(
        &engine,
        vec![
            ("TodoWrite", json!({"todos": []})),
            ("TodoWrite", json!({"items": []})),
        ],
    )
    .await;
    assert_eq!(r[0].outcome, Outcome::Success, "{}", r[0].text());
    assert_eq!(r[1].outcome, Outcome::InvalidInput);
    assert!(!r[1].text().contains("select:"), "{}", r[1].text());

    // A deferred tool called with valid input runs even if never loaded.
    let r = message(
        &engine,
        vec![("mcp__jira__delete_issue", json!({"title": "x"}))],
    )
    .await;
    assert_eq!(r[0].outcome, Outcome::Success, "{}", r[0].text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_list_is_stable_and_marks_deferred_tools() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), ToolSearchSettings::default());
    let before = engine.request_tools(WireFormat::Anthropic);
    let deferred: Vec<String> = before
        .tools
        .iter()
        .filter(|t| t["defer_loading"] == json!(true))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        deferred,
        [
            "EnterWorktree",
            "ExitWorktree",
            "ListAgents",
            "Monitor",
            "NotebookEdit",
            "SendMessage",
            "Sleep",
            "TaskOutput",
            "TaskStop",
            "TodoWrite",
            "WebFetch",
            "exec_command",
            "write_stdin",
            "mcp__jira__create_issue",
            "mcp__jira__delete_issue"
        ]
    );
    assert_eq!(before.deferred, deferred);
    assert!(before
        .reminder
        .as_deref()
        .unwrap()
        .contains("mcp__jira__create_issue"));
    let r = message(
        &engine,
        vec![("ToolSearch", json!({"query": "jira create"}))],
    )
    .await;
    assert_eq!(
        anthropic::tool_result_block(&r[0])["content"],
        json!([
            {"type": "tool_reference", "tool_name": "mcp__jira__create_issue"},
            {"type": "tool_reference", "tool_name": "mcp__jira__delete_issue"}
        ])
    );
    let after = engine.request_tools(WireFormat::Anthropic);
    // The tool list does not change (prompt cache); the names do.
    assert_eq!(after.tools, before.tools);
    assert_eq!(
        after.loaded,
        ["mcp__jira__create_issue", "mcp__jira__delete_issue"]
    );
    assert!(!after.deferred.iter().any(|n| n.starts_with("mcp__")));
    assert_eq!(engine.deferred_tools(), after.deferred);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_lists_grow_by_the_loaded_tools_at_the_end_and_reset() {
    for format in [WireFormat::OpenAiChat, WireFormat::OpenAiResponses] {
        let dir = tempfile::tempdir().unwrap();
        let settings = ToolSearchSettings::default().format(format);
        let engine = engine(dir.path(), settings);
        let before = engine.request_tools(format);
        let listed = names(&before.tools, format);
        assert!(listed.contains(&"ToolSearch".to_string()));
        assert!(!listed
            .iter()
            .any(|n| n == "TodoWrite" || n.starts_with("mcp__")));
        assert!(before
            .reminder
            .as_deref()
            .unwrap()
            .contains("\nTodoWrite\n"));

        let r = message(
            &engine,
            vec![(
                "ToolSearch",
                json!({"query": "select:mcp__jira__create_issue,TodoWrite"}),
            )],
        )
        .await;
        // No references in these formats: the definitions come as text.
        assert!(r[0].text().contains("<function>"), "{}", r[0].text());
        let after = engine.request_tools(format);
        let grown = names(&after.tools, format);
        assert_eq!(
            grown[..listed.len()],
            listed[..],
            "the old list is a prefix"
        );
        assert_eq!(
            grown[listed.len()..],
            ["mcp__jira__create_issue", "TodoWrite"]
        );
        assert!(!after.reminder.as_deref().unwrap().contains("\nTodoWrite\n"));

        engine.reset_loaded_tools();
        assert_eq!(engine.request_tools(format), before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_without_references_behaves_like_openai() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(
        dir.path(),
        ToolSearchSettings::default().tool_references(false),
    );
    let before = engine.request_tools(WireFormat::Anthropic);
    assert!(before
        .tools
        .iter()
        .all(|t| t.get("defer_loading").is_none()));
    assert!(!names(&before.tools, WireFormat::Anthropic).contains(&"WebFetch".into()));
    let r = message(
        &engine,
        vec![("ToolSearch", json!({"query": "select:WebFetch"}))],
    )
    .await;
    assert!(r[0].text().contains("\"input_schema\""), "{}", r[0].text());
    let after = engine.request_tools(WireFormat::Anthropic);
    assert_eq!(
        names(&after.tools, WireFormat::Anthropic).last().unwrap(),
        "WebFetch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modes_decide_whether_anything_is_deferred() {
    let dir = tempfile::tempdir().unwrap();
    let off = engine(
        dir.path(),
        ToolSearchSettings::default().mode(ToolSearchMode::Off),
    );
    let list = off.request_tools(WireFormat::OpenAiChat);
    let listed = names(&list.tools, WireFormat::OpenAiChat);
    assert!(!listed.contains(&"ToolSearch".into()), "nothing to search");
    assert!(listed.contains(&"mcp__jira__create_issue".into()));
    assert!(list.deferred.is_empty() && list.reminder.is_none());
    let r = message(&off, vec![("TodoWrite", json!({}))]).await;
    assert!(!r[0].text().contains("select:"), "{}", r[0].text());

    // auto:N compares the deferrable definitions with N % of the window.
    let tokens = off.deferral().deferrable_tokens;
    assert!(tokens > 500, "estimate {tokens}");
    let auto = |window: u64| {
        engine(
            dir.path(),
            ToolSearchSettings::default()
                .mode(ToolSearchMode::Auto { percent: 10 })
                .context_window_tokens(window),
        )
    };
    // Just below the threshold: inactive; just above: active.
    assert!(!auto(tokens * 10).deferral().active);
    assert!(auto(tokens * 10 - 10).deferral().active);
    assert!(auto(tokens * 10 - 10).deferred_tools().len() == 15);
    assert!(auto(tokens * 10).deferred_tools().is_empty());
}

/// Built-ins plus 500 MCP-like tools: what deferral saves per request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferral_shrinks_the_request_tenfold_for_500_mcp_tools() {
    let dir = tempfile::tempdir().unwrap();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others: mcp_like::tools(500),
            ..Default::default()
        },
        &baton::engine::AllowAllUnsafe,
    );
    let build = |mode| {
        Engine::builder(pool.clone())
            .cwd(dir.path())
            .state_dir(dir.path().join("state"))
            .tool_search(ToolSearchSettings::default().mode(mode))
            .allow_all_unsafe()
            .build()
            .expect("the engine builds")
    };
    let bytes = |tools: &[Value]| -> usize {
        tools
            .iter()
            .filter(|t| t.get("defer_loading").is_none())
            .map(|t| t.to_string().len())
            .sum()
    };
    let full = build(ToolSearchMode::Off).request_tools(WireFormat::OpenAiChat);
    let on = build(ToolSearchMode::Always);
    let chat = on.request_tools(WireFormat::OpenAiChat);
    let anthropic = on.request_tools(WireFormat::Anthropic);
    // Off: the built-ins without ToolSearch, and the 500.
    let builtins = baton::BuiltinConfig::default().tools().unwrap().len();
    assert_eq!(full.tools.len(), builtins - 1 + 500);
    assert_eq!(chat.deferred.len(), 513);
    let deferred_cost = bytes(&chat.tools) + chat.reminder.as_ref().unwrap().len();
    assert!(
        deferred_cost * 10 < bytes(&full.tools),
        "{deferred_cost} vs {}",
        bytes(&full.tools)
    );
    // Anthropic lists everything, but only the loaded tools reach the prompt.
    assert_eq!(anthropic.tools.len(), builtins + 500);
    assert!(bytes(&anthropic.tools) * 10 < bytes(&full.tools));
    // auto:10 of 200,000 tokens: 500 such tools are well above the line.
    let auto = Engine::builder(pool.clone())
        .cwd(dir.path())
        .tool_search(ToolSearchSettings::default().mode(ToolSearchMode::Auto { percent: 10 }))
        .allow_all_unsafe()
        .build()
        .expect("the engine builds");
    assert!(auto.deferral().active, "{:?}", auto.deferral());
}
