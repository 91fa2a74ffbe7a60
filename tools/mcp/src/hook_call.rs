//! `mcp_tool` hooks: the engine's [`McpToolCaller`] served by the started
//! servers. The hook names the server as configured and the tool by the
//! server's own name (not `mcp__server__tool`), as Claude Code does.

use std::time::Duration;

use async_trait::async_trait;
use baton_engine::hooks::{McpToolCaller, McpToolReply};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};

use crate::McpClients;

#[async_trait]
impl McpToolCaller for McpClients {
    async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<McpToolReply, String> {
        let Some(found) = self.server(server) else {
            let known: Vec<&str> = self.servers().iter().map(|s| s.name()).collect();
            return Err(format!(
                "names MCP server \"{server}\", which is not configured (configured: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        let work = async {
            let live = found
                .live()
                .await
                .map_err(|why| format!("cannot reach MCP server \"{server}\": {why}"))?;
            let mut params = CallToolRequestParams::new(tool.to_string());
            params.arguments = Some(arguments);
            // Dropped on timeout: rmcp then cancels this one request.
            live.peer()
                .call_tool(params)
                .await
                .map_err(|e| format!("call of {tool} on \"{server}\" failed: {e}"))
        };
        let result = tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| format!("{tool} on \"{server}\" gave no answer in time"))??;
        let value = serde_json::to_value(&result).map_err(|e| e.to_string())?;
        let text = value["content"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Ok(McpToolReply {
            text,
            is_error: value["isError"].as_bool().unwrap_or(false),
        })
    }
}
