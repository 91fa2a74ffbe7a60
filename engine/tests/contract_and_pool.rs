//! Fail-closed defaults of the tool contract and the pool's assembly rules.

use std::sync::Arc;

use baton_engine::permission::PermissionRequest;
use baton_engine::{
    async_trait, InterruptBehavior, PermissionDecision, PermissionPolicy, PoolSpec, Tool,
    ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin, ToolOutput, ToolPool,
};
use common::{echo, EchoInput};
use serde_json::{json, Value};

use crate::common;

fn named(name: &str) -> Tool {
    Tool::raw(
        ToolDef::new(name, "test"),
        json!({"type": "object"}),
        common::Nothing,
    )
    .unwrap()
}

fn external(name: &str) -> Arc<Tool> {
    Arc::new(
        Tool::raw(
            ToolDef::new(name, "external").origin(ToolOrigin::Mcp {
                server: "srv".into(),
            }),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    )
}

#[test]
fn a_tool_that_declares_nothing_is_fail_closed() {
    let tool = echo();
    let input = tool.parse(&json!({"text": "x"})).unwrap();
    assert!(!tool.is_concurrency_safe(&input));
    assert!(!tool.is_read_only(&input));
    assert!(!tool.is_destructive(&input));
    assert!(!tool.is_open_world(&input));
    assert!(tool.is_enabled());
    assert_eq!(tool.def().interrupt_behavior(), InterruptBehavior::Block);
    assert!(!tool.def().is_deferred());
    assert_eq!(tool.def().max_result_chars(), Some(100_000));
    assert!(!tool.def().triggers_sibling_cancel());
    assert_eq!(tool.def().prompt_text(), "Repeats text.");
}

#[test]
fn typed_schema_is_derived_from_the_type() {
    let tool = echo();
    let schema = tool.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert!(schema.get("$schema").is_none());
    let _: Option<EchoInput> = None;
}

#[test]
fn deferral_rules() {
    let mcp = external("mcp__srv__x");
    assert!(mcp.def().is_deferred());
    let loaded = Tool::raw(
        ToolDef::new("mcp__srv__y", "d")
            .origin(ToolOrigin::Mcp {
                server: "srv".into(),
            })
            .always_load(true),
        json!({"type": "object"}),
        common::Nothing,
    )
    .unwrap();
    assert!(!loaded.def().is_deferred());
    let builtin = Tool::raw(
        ToolDef::new("Later", "d").should_defer(true),
        json!({"type": "object"}),
        common::Nothing,
    )
    .unwrap();
    assert!(builtin.def().is_deferred());
}

#[test]
fn pool_orders_builtins_then_others_and_builtins_win() {
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: vec![
                Arc::new(named("Write")),
                Arc::new(named("Bash")),
                Arc::new(named("Read")),
            ],
            others: vec![external("zeta"), external("Bash"), external("alpha")],
            ..Default::default()
        },
        &baton_engine::AllowAllUnsafe,
    );
    assert_eq!(pool.names(), ["Bash", "Read", "Write", "alpha", "zeta"]);
    assert!(!ToolPool::is_external(pool.get("Bash").unwrap()));
}

struct Disabled;
#[async_trait]
impl ToolLogic<Value> for Disabled {
    fn is_enabled(&self) -> bool {
        false
    }
    async fn call(&self, _i: Value, _c: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("never"))
    }
}

struct BlanketDeny(&'static str);
impl PermissionPolicy for BlanketDeny {
    fn decide(&self, _r: &PermissionRequest<'_>) -> PermissionDecision {
        PermissionDecision::Allow
    }
    fn denies_whole_tool(&self, name: &str) -> bool {
        name == self.0
    }
}

#[test]
fn pool_drops_disabled_and_blanket_denied_tools() {
    let off = Tool::raw(
        ToolDef::new("Off", "d"),
        json!({"type": "object"}),
        Disabled,
    )
    .unwrap();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: vec![
                Arc::new(off),
                Arc::new(named("Bash")),
                Arc::new(named("Read")),
            ],
            others: vec![external("mcp__srv__x")],
            ..Default::default()
        },
        &BlanketDeny("Bash"),
    );
    assert_eq!(pool.names(), ["Read", "mcp__srv__x"]);
    let pool = ToolPool::assemble(
        PoolSpec {
            others: vec![external("mcp__srv__x")],
            ..Default::default()
        },
        &BlanketDeny("mcp__srv__x"),
    );
    assert!(pool.names().is_empty());
}

#[test]
fn allow_and_disallow_lists_disallow_wins() {
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: vec![
                Arc::new(named("A")),
                Arc::new(named("B")),
                Arc::new(named("C")),
            ],
            allow: Some(vec!["A".into(), "B".into()]),
            disallow: vec!["B".into()],
            ..Default::default()
        },
        &baton_engine::AllowAllUnsafe,
    );
    assert_eq!(pool.names(), ["A"]);
}

#[test]
fn lookup_by_name_then_alias() {
    let aliased = Tool::raw(
        ToolDef::new("Task", "d").alias("Agent").alias("Old"),
        json!({"type": "object"}),
        common::Nothing,
    )
    .unwrap();
    // A real tool named like another's alias wins over the alias.
    let pool = ToolPool::of(vec![aliased, named("Agent")]);
    assert_eq!(pool.get("Old").unwrap().name(), "Task");
    assert_eq!(pool.get("Agent").unwrap().name(), "Agent");
    assert!(pool.get("task").is_none());
}

#[test]
fn restriction_stack_top_applies_and_pop_restores() {
    let pool = ToolPool::of(vec![named("A"), named("B"), named("C")]);
    let narrow = pool.push_restriction(["A", "B"]);
    assert_eq!(narrow.names(), ["A", "B"]);
    let narrower = narrow.push_restriction(["C"]);
    // Only the top of the stack applies.
    assert_eq!(narrower.names(), ["C"]);
    assert!(narrower.get("A").is_none());
    assert_eq!(narrower.pop_restriction().names(), ["A", "B"]);
    assert_eq!(
        narrower.pop_restriction().pop_restriction().names(),
        ["A", "B", "C"]
    );
    // The original pool never saw the restriction.
    assert_eq!(pool.names(), ["A", "B", "C"]);
}

struct PanickyClassifier;
#[async_trait]
impl ToolLogic<Value> for PanickyClassifier {
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        panic!("classifier bug")
    }
    async fn call(&self, _i: Value, _c: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

#[test]
fn a_panicking_classifier_means_not_safe() {
    let tool = Tool::raw(
        ToolDef::new("P", "d"),
        json!({"type": "object"}),
        PanickyClassifier,
    )
    .unwrap();
    let pipeline = baton_engine::Pipeline::allow_all_unsafe(ToolPool::of(vec![tool]));
    let prepared = pipeline.prepare(baton_engine::ToolUse::new("1", "P", json!({})));
    assert!(!prepared.safe);
    let unknown = pipeline.prepare(baton_engine::ToolUse::new("2", "Nope", json!({})));
    assert!(!unknown.safe);
}
