//! Small tools and helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use baton_engine::schemars::JsonSchema;
use baton_engine::{
    async_trait, CallResult, Context, Pipeline, Session, Tool, ToolContext, ToolDef, ToolError,
    ToolLogic, ToolOutput, ToolPool, ToolUse,
};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoInput {
    pub text: String,
    #[serde(default)]
    pub times: Option<u32>,
}

/// Typed tool: repeats `text`. Declares nothing but `call`, so it keeps every
/// fail-closed default.
pub struct Echo;

#[async_trait]
impl ToolLogic<EchoInput> for Echo {
    async fn call(&self, input: EchoInput, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(
            input.text.repeat(input.times.unwrap_or(1) as usize),
        ))
    }
}

pub fn echo() -> Tool {
    Tool::typed::<EchoInput, _>(ToolDef::new("Echo", "Repeats text."), Echo).unwrap()
}

/// Raw tool that does nothing: for tests about everything but the call.
pub struct Nothing;

#[async_trait]
impl ToolLogic<Value> for Nothing {
    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("unused"))
    }
}

/// Raw tool whose behaviour is chosen by its input's `mode`.
pub struct Scripted;

#[async_trait]
impl ToolLogic<Value> for Scripted {
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        input.get("safe").and_then(Value::as_bool).unwrap_or(false)
    }

    fn is_read_only(&self, input: &Value) -> bool {
        input.get("mode").and_then(Value::as_str) == Some("read")
    }

    async fn validate_input(&self, input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        match input.get("mode").and_then(Value::as_str) {
            Some("invalid") => Err("mode `invalid` is not allowed here".into()),
            _ => Ok(()),
        }
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match input.get("mode").and_then(Value::as_str).unwrap_or("ok") {
            "panic" => panic!("scripted panic"),
            "err" => Err(ToolError::new("the scripted tool failed")),
            "is_error" => Ok(ToolOutput::error("reported failure")),
            "empty" => Ok(ToolOutput::text("")),
            "big" => Ok(ToolOutput::text("x".repeat(60_000))),
            "cd" => Ok(ToolOutput::text("moved").with_modifier(
                baton_engine::ContextModifier::new(|mut c: Context| {
                    c.cwd = c.cwd.join("sub");
                    c
                }),
            )),
            "hang" => {
                ctx.cancel.cancelled().await;
                Ok(ToolOutput::text("partial output"))
            }
            _ => Ok(ToolOutput::text(format!("ran with {input}"))),
        }
    }
}

pub fn scripted() -> Tool {
    Tool::raw(
        ToolDef::new("Scripted", "Behaves as told."),
        serde_json::json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string"},
                "safe": {"type": "boolean"},
                "n": {"type": "integer"}
            },
            "additionalProperties": false
        }),
        Scripted,
    )
    .unwrap()
}

pub struct Harness {
    pub pipeline: Pipeline,
    pub session: Arc<Session>,
    pub dir: tempfile::TempDir,
}

impl Harness {
    pub fn new(pipeline: Pipeline) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("test-session", dir.path().join("state"));
        Harness {
            pipeline,
            session,
            dir,
        }
    }

    pub fn default_tools() -> Self {
        Harness::new(Pipeline::allow_all_unsafe(ToolPool::of(vec![
            echo(),
            scripted(),
        ])))
    }

    pub fn ctx(&self, id: &str) -> ToolContext {
        ToolContext::standalone(id, Context::new(self.dir.path()), self.session.clone())
    }

    pub async fn run(&self, call: ToolUse) -> CallResult {
        let ctx = self.ctx(&call.id);
        self.pipeline.run(self.pipeline.prepare(call), ctx).await
    }

    pub async fn run_json(&self, name: &str, input: Value) -> CallResult {
        self.run(ToolUse::new("call_1", name, input)).await
    }
}
