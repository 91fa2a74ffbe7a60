//! ToolSearch: every query form and ranking rule of SPEC §10, the index
//! against the linear scan, and the result per host capability.

use std::sync::Arc;

use baton_engine::deferred::{
    set_deferral, Deferral, DiscoveredTools, PoolService, ToolSearchSettings,
};
use baton_engine::wire::WireFormat;
use baton_engine::{
    async_trait, ContentBlock, Context, Pipeline, PoolSpec, Session, Tool, ToolContext, ToolDef,
    ToolError, ToolLogic, ToolOrigin, ToolOutput, ToolPool, ToolUse,
};
use proptest::prelude::*;
use serde_json::{json, Value};

use super::index::{search_linear, SearchIndex};
use super::query::{contains_word, name_parts, Query};

struct Noop;

#[async_trait]
impl ToolLogic<Value> for Noop {
    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ran"))
    }
}

fn raw(def: ToolDef) -> Arc<Tool> {
    let schema =
        json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]});
    Arc::new(Tool::raw(def, schema, Noop).unwrap())
}

/// A deferred built-in.
fn builtin(name: &str, description: &str, hint: Option<&str>) -> Arc<Tool> {
    let mut def = ToolDef::new(name, description).should_defer(true);
    if let Some(h) = hint {
        def = def.search_hint(h);
    }
    raw(def)
}

/// An MCP tool (deferred unless always_load).
fn mcp(name: &str, description: &str) -> Arc<Tool> {
    let server = name.split("__").nth(1).unwrap_or("srv").to_string();
    raw(ToolDef::new(name, description).origin(ToolOrigin::Mcp { server }))
}

fn pool_of(builtins: Vec<Arc<Tool>>, others: Vec<Arc<Tool>>) -> ToolPool {
    let mut builtins = builtins;
    builtins.push(Arc::new(super::tool().unwrap()));
    builtins.push(raw(ToolDef::new("Read", "Reads a file.")));
    ToolPool::assemble(
        PoolSpec {
            builtins,
            others,
            ..Default::default()
        },
        &baton_engine::AllowAllUnsafe,
    )
}

fn scored(pool: &ToolPool, query: &str) -> Vec<(String, u32)> {
    let Query::Keywords { required, optional } = Query::parse(query) else {
        panic!("not a keyword query: {query}");
    };
    let deferral = Deferral::default();
    let index = SearchIndex::build(pool, &deferral);
    let fast = index.search_scored(&required, &optional, 50, pool);
    let slow = search_linear(pool, &deferral, &required, &optional, 50);
    assert_eq!(fast, slow, "index and linear scan disagree on {query:?}");
    fast
}

fn s(name: &str, score: u32) -> (String, u32) {
    (name.to_string(), score)
}

#[test]
fn query_forms_parse() {
    assert_eq!(
        Query::parse("  SELECT: A , B,,A "),
        Query::Select(vec!["A".into(), "B".into()])
    );
    assert_eq!(
        Query::parse("+Slack send  +slack Message"),
        Query::Keywords {
            required: vec!["slack".into()],
            optional: vec!["send".into(), "message".into()],
        }
    );
    assert_eq!(
        Query::parse("+ "),
        Query::Keywords {
            required: vec![],
            optional: vec![],
        }
    );
}

#[test]
fn name_parts_split_on_underscores_and_camel_case() {
    assert_eq!(
        name_parts("mcp__slack__send_message"),
        ["slack", "send", "message"]
    );
    assert_eq!(name_parts("NotebookEdit"), ["notebook", "edit"]);
    assert_eq!(
        name_parts("HTTPServer_getURL"),
        ["http", "server", "get", "url"]
    );
    assert_eq!(
        name_parts("mcp__git-hub__listPRCount"),
        ["git-hub", "list", "pr", "count"]
    );
}

#[test]
fn word_match_needs_boundaries() {
    assert!(contains_word("reads a read-only file", "read-only"));
    assert!(contains_word("send the message.", "message"));
    assert!(!contains_word("messages", "message"));
    assert!(!contains_word("premessage", "message"));
}

#[test]
fn each_rule_scores_its_weight() {
    let pool = pool_of(
        vec![
            builtin("FooEdit", "x", None),                // exact part "edit": 10
            builtin("Editor", "x", None),                 // part contains "edit": 5
            builtin("Bookedits", "x", None),              // part contains: 5
            builtin("Notebook", "x", Some("edit cells")), // hint word: 4
            builtin("Other", "Can edit things", None),    // description word: 2
        ],
        vec![
            mcp("mcp__docs__edit", "x"),    // MCP exact: 12
            mcp("mcp__docs__editing", "x"), // MCP partial: 6
        ],
    );
    assert_eq!(
        scored(&pool, "edit"),
        vec![
            s("mcp__docs__edit", 12),
            s("FooEdit", 10),
            s("mcp__docs__editing", 6),
            s("Bookedits", 5),
            s("Editor", 5),
            s("Notebook", 4),
            s("Other", 2),
        ]
    );
}

#[test]
fn full_name_counts_only_when_no_part_matched() {
    let pool = pool_of(vec![builtin("NoteBookEdit", "x", None)], vec![]);
    // "bookedit" spans two parts: only the full name contains it.
    assert_eq!(scored(&pool, "bookedit"), vec![s("NoteBookEdit", 3)]);
    // "edit" is a part: the full-name rule adds nothing.
    assert_eq!(scored(&pool, "edit"), vec![s("NoteBookEdit", 10)]);
    // A term matching across `__` in an MCP name.
    let pool = pool_of(vec![], vec![mcp("mcp__slack__post", "x")]);
    assert_eq!(scored(&pool, "slack__post"), vec![s("mcp__slack__post", 3)]);
}

#[test]
fn terms_sum_and_ties_keep_pool_order() {
    let pool = pool_of(
        vec![],
        vec![
            mcp("mcp__slack__send_message", "Send a message to a channel"),
            mcp("mcp__slack__read_messages", "Read messages of a channel"),
            mcp("mcp__mail__send", "Send an email message"),
        ],
    );
    // slack: 12 | 12 | 0; send: 12+2 | 0 | 12+2; message: 12+2 | 6 | 2.
    assert_eq!(
        scored(&pool, "slack send message"),
        vec![
            s("mcp__slack__send_message", 40),
            s("mcp__slack__read_messages", 18),
            s("mcp__mail__send", 16),
        ]
    );
    // Equal scores: pool order (sorted by name).
    assert_eq!(
        scored(&pool, "channel"),
        vec![
            s("mcp__slack__read_messages", 2),
            s("mcp__slack__send_message", 2)
        ]
    );
}

#[test]
fn required_terms_filter_by_name_and_others_rank() {
    let pool = pool_of(
        vec![],
        vec![
            mcp("mcp__slack__send_message", "Send a message"),
            mcp("mcp__slack__list_users", "List users"),
            mcp("mcp__mail__send", "Send an email message"),
        ],
    );
    assert_eq!(
        scored(&pool, "+slack send"),
        vec![
            s("mcp__slack__send_message", 14),
            s("mcp__slack__list_users", 0)
        ]
    );
    // Only required terms: they rank too.
    assert_eq!(
        scored(&pool, "+send"),
        vec![s("mcp__mail__send", 14), s("mcp__slack__send_message", 14)]
    );
    assert_eq!(scored(&pool, "+nothing send"), vec![]);
}

#[test]
fn loaded_tools_are_not_searched_by_keywords() {
    let pool = pool_of(vec![builtin("Fetcher", "x", None)], vec![]);
    // Read is loaded (not deferred), so a keyword search never returns it.
    assert_eq!(scored(&pool, "read"), vec![]);
    assert_eq!(scored(&pool, "fetcher"), vec![s("Fetcher", 10)]);
}

fn vocab() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "send", "message", "slack", "read", "file", "edit", "note", "book", "web", "get", "url",
        "list", "user", "Git", "Hub", "PR", "a", "se",
    ])
    .prop_map(str::to_string)
}

fn tool_strategy() -> impl Strategy<Value = (bool, Vec<String>, Vec<String>, Vec<String>)> {
    (
        any::<bool>(),
        prop::collection::vec(vocab(), 1..4),
        prop::collection::vec(vocab(), 0..4),
        prop::collection::vec(vocab(), 0..6),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The index ranks exactly as the straightforward scan, for random
    /// pools and queries.
    #[test]
    fn index_equals_linear_scan(
        tools in prop::collection::vec(tool_strategy(), 1..30),
        terms in prop::collection::vec((any::<bool>(), vocab()), 0..4),
        max in 1usize..8,
    ) {
        let mut builtins = Vec::new();
        let mut others = Vec::new();
        for (i, (is_mcp, name, hint, desc)) in tools.iter().enumerate() {
            let desc = format!("{} {i}", desc.join(" "));
            if *is_mcp {
                let name = format!("mcp__{}__{}_{i}", name[0].to_lowercase(), name.join("_"));
                others.push(mcp(&name, &desc));
            } else {
                let name = format!("{}{i}", name.join(""));
                builtins.push(builtin(&name, &desc, Some(&hint.join(" "))));
            }
        }
        let pool = pool_of(builtins, others);
        let query: Vec<String> = terms
            .iter()
            .map(|(req, t)| if *req { format!("+{t}") } else { t.clone() })
            .collect();
        let Query::Keywords { required, optional } = Query::parse(&query.join(" ")) else {
            unreachable!()
        };
        let deferral = Deferral::default();
        let index = SearchIndex::build(&pool, &deferral);
        prop_assert_eq!(
            index.search_scored(&required, &optional, max, &pool),
            search_linear(&pool, &deferral, &required, &optional, max)
        );
    }
}

/// Runs ToolSearch through the pipeline, as the runtime does.
async fn run(pool: &ToolPool, session: &Arc<Session>, input: Value) -> baton_engine::CallResult {
    let pipeline = Pipeline::allow_all_unsafe(pool.clone());
    let mut ctx = ToolContext::standalone("c1", Context::new("/"), session.clone());
    ctx.services = ctx.services.with(PoolService(pool.clone()));
    pipeline
        .run(
            pipeline.prepare(ToolUse::new("c1", "ToolSearch", input)),
            ctx,
        )
        .await
}

fn session(settings: ToolSearchSettings, pool: &ToolPool) -> Arc<Session> {
    let session = Session::new("s", std::env::temp_dir().join("baton-ts-test"));
    set_deferral(&session, Deferral::resolve(settings, pool));
    session
}

fn references(result: &baton_engine::CallResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolReference { tool_name } => Some(tool_name.clone()),
            _ => None,
        })
        .collect()
}

fn sample_pool() -> ToolPool {
    pool_of(
        vec![builtin(
            "NotebookEdit",
            "Edit a Jupyter notebook",
            Some("jupyter ipynb cell"),
        )],
        (0..8)
            .map(|i| mcp(&format!("mcp__jira__issue_{i}"), "Work with Jira issues"))
            .collect(),
    )
}

#[tokio::test]
async fn select_returns_loaded_and_deferred_tools_and_ignores_max_results() {
    let pool = sample_pool();
    let session = session(ToolSearchSettings::default(), &pool);
    let result = run(
        &pool,
        &session,
        json!({"query": "select:Read,notebookedit,mcp__jira__issue_3,Nope", "max_results": 1}),
    )
    .await;
    assert!(!result.is_error);
    assert_eq!(
        references(&result),
        ["Read", "NotebookEdit", "mcp__jira__issue_3"]
    );
    assert!(result.text().contains("`Nope`"), "{}", result.text());
    let discovered = session.slots().get_or_default::<DiscoveredTools>();
    // Only deferred tools are recorded; Read was never deferred.
    assert_eq!(discovered.names(), ["NotebookEdit", "mcp__jira__issue_3"]);
}

#[tokio::test]
async fn keyword_search_honours_max_results_and_defaults_to_five() {
    let pool = sample_pool();
    let session = session(ToolSearchSettings::default(), &pool);
    let result = run(&pool, &session, json!({"query": "jira"})).await;
    assert_eq!(references(&result).len(), 5);
    let result = run(&pool, &session, json!({"query": "jira", "max_results": 2})).await;
    assert_eq!(
        references(&result),
        ["mcp__jira__issue_0", "mcp__jira__issue_1"]
    );
}

#[tokio::test]
async fn no_match_says_so_clearly() {
    let pool = sample_pool();
    let session = session(ToolSearchSettings::default(), &pool);
    for query in ["kubernetes", "select:Nope", "select:"] {
        let result = run(&pool, &session, json!({ "query": query })).await;
        assert!(!result.is_error);
        assert!(
            result
                .text()
                .starts_with("No matching deferred tools found"),
            "{query}: {}",
            result.text()
        );
        assert!(references(&result).is_empty());
    }
    assert!(session
        .slots()
        .get_or_default::<DiscoveredTools>()
        .names()
        .is_empty());
}

#[tokio::test]
async fn without_references_the_result_carries_definitions_in_the_format() {
    let pool = sample_pool();
    for (format, needle) in [
        (WireFormat::Anthropic, "\"input_schema\""),
        (WireFormat::OpenAiChat, "\"function\":{"),
        (WireFormat::OpenAiResponses, "\"strict\":"),
    ] {
        let settings = ToolSearchSettings::default()
            .format(format)
            .tool_references(false);
        let session = session(settings, &pool);
        let result = run(&pool, &session, json!({"query": "select:NotebookEdit"})).await;
        assert!(references(&result).is_empty());
        let text = result.text();
        assert!(text.contains("<function>"), "{text}");
        assert!(text.contains(needle), "{format:?}: {text}");
        assert!(text.contains("Edit a Jupyter notebook"));
    }
}

#[tokio::test]
async fn a_restricted_pool_hides_its_tools_from_search() {
    let pool = sample_pool().push_restriction(["ToolSearch", "mcp__jira__issue_7"]);
    let session = session(ToolSearchSettings::default(), &pool);
    let result = run(&pool, &session, json!({"query": "jira"})).await;
    assert_eq!(references(&result), ["mcp__jira__issue_7"]);
    let result = run(
        &pool,
        &session,
        json!({"query": "select:mcp__jira__issue_1"}),
    )
    .await;
    assert!(references(&result).is_empty());
}

#[tokio::test]
async fn without_a_pool_service_the_call_fails_clearly() {
    let pool = sample_pool();
    let session = session(ToolSearchSettings::default(), &pool);
    let pipeline = Pipeline::allow_all_unsafe(pool.clone());
    let ctx = ToolContext::standalone("c1", Context::new("/"), session.clone());
    let result = pipeline
        .run(
            pipeline.prepare(ToolUse::new("c1", "ToolSearch", json!({"query": "x"}))),
            ctx,
        )
        .await;
    assert!(result.is_error);
    assert!(result.text().contains("PoolService"), "{}", result.text());
}

#[tokio::test]
async fn one_pool_shared_by_sessions_with_search_on_and_off() {
    let pool = sample_pool();
    let on = session(ToolSearchSettings::default(), &pool);
    let off = session(
        ToolSearchSettings::default().mode(baton_engine::deferred::ToolSearchMode::Off),
        &pool,
    );
    for _ in 0..2 {
        let result = run(&pool, &on, json!({"query": "jupyter"})).await;
        assert_eq!(references(&result), ["NotebookEdit"]);
        // With search off nothing is deferred, so keywords find nothing.
        let result = run(&pool, &off, json!({"query": "jupyter"})).await;
        assert!(
            result.text().starts_with("No matching"),
            "{}",
            result.text()
        );
    }
}
