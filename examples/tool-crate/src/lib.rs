//! A third party's tool, on the tool contract alone: `LineStats` counts the
//! lines, words and characters of a text the model passes in. A host adds
//! `line_stats()` to its pool beside Baton's built-ins.

use baton_tool::schemars::JsonSchema;
use baton_tool::{async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput};
use serde::Deserialize;

/// The input; its JSON Schema is derived from this type.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "baton_tool::schemars")]
#[serde(deny_unknown_fields)]
pub struct LineStatsInput {
    /// The text to measure.
    pub text: String,
}

struct LineStats;

#[async_trait]
impl ToolLogic<LineStatsInput> for LineStats {
    // Pure computation: safe beside any other call, and it changes nothing.
    fn is_concurrency_safe(&self, _input: &LineStatsInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &LineStatsInput) -> bool {
        true
    }

    async fn call(
        &self,
        input: LineStatsInput,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let lines = input.text.lines().count();
        let words = input.text.split_whitespace().count();
        let chars = input.text.chars().count();
        Ok(ToolOutput::text(format!(
            "{lines} lines, {words} words, {chars} characters"
        )))
    }
}

/// The tool, ready for a pool.
pub fn line_stats() -> Result<Tool, baton_tool::schema::InvalidSchema> {
    let def = ToolDef::new(
        "LineStats",
        "Counts the lines, words and characters of `text`.",
    );
    Tool::typed::<LineStatsInput, _>(def, LineStats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_tool::{Context, Session};

    #[tokio::test]
    async fn it_runs_on_the_contract_alone() {
        let tool = line_stats().unwrap();
        let input = tool.parse(&serde_json::json!({"text": "a b\nc"})).unwrap();
        assert!(tool.is_read_only(&input));
        let session = Session::new("s", std::env::temp_dir());
        let ctx = ToolContext::standalone("c1", Context::new("/"), session);
        let out = tool.call(input, ctx).await.unwrap();
        assert_eq!(
            baton_tool::content::joined_text(&out.content),
            "2 lines, 3 words, 5 characters"
        );
        assert!(tool.parse(&serde_json::json!({"txt": 1})).is_err());
    }
}
