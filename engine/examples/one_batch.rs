//! Runs the tool calls of a bundled assistant message through the engine's
//! pipeline, one after another, and prints the user message of results.
//! (The full concurrent runtime is `baton run`; this shows the engine alone.)

use std::sync::Arc;

use baton_engine::schemars::JsonSchema;
use baton_engine::wire::anthropic;
use baton_engine::{
    async_trait, Context, Pipeline, Session, Tool, ToolContext, ToolDef, ToolError, ToolLogic,
    ToolOutput, ToolPool,
};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShoutInput {
    /// Text to upper-case.
    text: String,
}

struct Shout;

#[async_trait]
impl ToolLogic<ShoutInput> for Shout {
    fn is_concurrency_safe(&self, _input: &ShoutInput) -> bool {
        true
    }
    fn is_read_only(&self, _input: &ShoutInput) -> bool {
        true
    }
    async fn call(&self, input: ShoutInput, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text.to_uppercase()))
    }
}

const MESSAGE: &str = r#"{"role": "assistant", "content": [
  {"type": "text", "text": "Three calls: one good, one with a bad input, one to a tool that does not exist."},
  {"type": "tool_use", "id": "toolu_1", "name": "Shout", "input": {"text": "hello"}},
  {"type": "tool_use", "id": "toolu_2", "name": "Shout", "input": {"txt": 3}},
  {"type": "tool_use", "id": "toolu_3", "name": "Whisper", "input": {}}
]}"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shout = Tool::typed::<ShoutInput, _>(ToolDef::new("Shout", "Upper-cases text."), Shout)?;
    let pipeline = Pipeline::new(ToolPool::of(vec![shout]));
    let state = std::env::temp_dir().join(format!("baton-example-{}", std::process::id()));
    let session = Session::new("example", &state);
    let context = Context::new(std::env::current_dir()?);

    let mut results = Vec::new();
    for call in anthropic::parse_tool_uses_str(MESSAGE)? {
        let ctx = ToolContext::standalone(call.id.clone(), context.clone(), Arc::clone(&session));
        results.push(pipeline.run(pipeline.prepare(call), ctx).await);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&anthropic::user_message(&results))?
    );
    Ok(())
}
