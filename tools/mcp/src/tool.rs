//! A server's tool as a Baton [`Tool`]: name, description, schema, hints.

use std::sync::Arc;

use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin, ToolOutput, WorkKind,
};
use serde_json::Value;

use crate::naming;
use crate::server::Server;

/// Descriptions are cut here, as Claude Code does, so one server cannot
/// flood every request.
pub const MAX_DESCRIPTION_CHARS: usize = 2_048;
/// Highest result threshold a tool may ask for with
/// `_meta["anthropic/maxResultSizeChars"]`.
pub const MAX_RESULT_SIZE_CEILING: usize = 500_000;
/// Characters per token when `MAX_MCP_OUTPUT_TOKENS` becomes a char limit.
const CHARS_PER_TOKEN: usize = 4;

struct McpToolLogic {
    server: Arc<Server>,
    tool: String,
    display: String,
    read_only: bool,
    destructive: bool,
    open_world: bool,
}

#[async_trait]
impl ToolLogic<Value> for McpToolLogic {
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_destructive(&self, _input: &Value) -> bool {
        self.destructive
    }

    fn is_open_world(&self, _input: &Value) -> bool {
        self.open_world
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        crate::call::call_tool(&self.server, &self.tool, &self.display, input, &ctx).await
    }
}

/// Builds the pool tool for one entry of the server's `tools/list`, or says
/// why it is left out.
pub(crate) fn build(
    server: &Arc<Server>,
    tool: &Value,
    max_output_tokens: usize,
) -> Result<Tool, String> {
    let raw_name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let server_name = &server.spec.name;
    if raw_name.is_empty() {
        return Err(format!(
            "MCP server \"{server_name}\" listed a tool without a name"
        ));
    }
    let name = naming::tool_name(server_name, raw_name).ok_or_else(|| {
        format!(
            "MCP tool \"{raw_name}\" of server \"{server_name}\" is left out: its name would be longer than {} characters",
            naming::MAX_TOOL_NAME
        )
    })?;
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .or_else(|| tool.get("title").and_then(Value::as_str))
        .unwrap_or("");
    let annotations = tool.get("annotations").cloned().unwrap_or(Value::Null);
    let hint = |key: &str| annotations.get(key).and_then(Value::as_bool);
    let read_only = server.spec.read_only.decide(raw_name, hint("readOnlyHint"));
    // MCP's own defaults for missing hints are the cautious ones.
    let destructive = !read_only && hint("destructiveHint").unwrap_or(true);
    let open_world = hint("openWorldHint").unwrap_or(true);
    let output_limit = max_output_tokens.saturating_mul(CHARS_PER_TOKEN);
    let asked = tool
        .get("_meta")
        .and_then(|m| m.get("anthropic/maxResultSizeChars"))
        .and_then(Value::as_u64)
        .map(|n| (n as usize).min(MAX_RESULT_SIZE_CEILING));
    let max_chars = asked.unwrap_or(output_limit).max(1);
    let mut def = ToolDef::new(name.clone(), cut(description, MAX_DESCRIPTION_CHARS))
        .origin(ToolOrigin::Mcp {
            server: server_name.clone(),
        })
        .should_defer(true)
        .always_load(server.spec.always_load)
        .max_result_size_chars(Some(max_chars))
        // A request to a server that is already running (a stdio server was
        // started at connect time): the call itself only waits.
        .work_kind(WorkKind::Wait);
    if let Some(schema) = tool.get("outputSchema").filter(|v| v.is_object()) {
        def = def.output_schema(schema.clone());
    }
    let schema = match tool.get("inputSchema") {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => serde_json::json!({"type": "object"}),
    };
    let logic = McpToolLogic {
        server: Arc::clone(server),
        tool: raw_name.to_string(),
        display: name,
        read_only,
        destructive,
        open_world,
    };
    Tool::raw(def, schema, logic).map_err(|e| {
        format!("MCP tool \"{raw_name}\" of server \"{server_name}\" is left out: its input schema is not usable ({e})")
    })
}

/// `text` cut to `max` characters, marked when cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((i, _)) => format!("{}… [description cut at {max} characters]", &text[..i]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("héllo", 10), "héllo");
        let long = "é".repeat(3000);
        let c = cut(&long, MAX_DESCRIPTION_CHARS);
        assert!(c.starts_with(&"é".repeat(MAX_DESCRIPTION_CHARS)));
        assert!(!c.starts_with(&"é".repeat(MAX_DESCRIPTION_CHARS + 1)));
    }
}
