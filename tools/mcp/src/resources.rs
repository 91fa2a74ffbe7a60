//! `ListMcpResourcesTool` and `ReadMcpResourceTool` (Claude Code's names;
//! the older `ListMcpResources`/`ReadMcpResource` are aliases): the servers' resources as two
//! read-only tools.

use std::sync::Arc;

use baton_engine::{async_trait, ContentBlock, Tool, ToolContext, ToolError, ToolOutput};
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams};
use serde_json::{json, Value};

use crate::client_tools::{self, chosen, Answer, OverServers, Resource};
use crate::server::Server;

struct ListResources;

struct ReadResource;

#[async_trait]
impl OverServers for ListResources {
    async fn run(&self, servers: &[Arc<Server>], input: Value, _: ToolContext) -> Answer {
        let servers = chosen(servers, &input)?;
        let mut all = Vec::new();
        let mut problems = Vec::new();
        for server in servers {
            let live = match server.live().await {
                Ok(live) => live,
                Err(why) => {
                    problems.push(format!("{}: {why}", server.name()));
                    continue;
                }
            };
            let mut cursor = None;
            loop {
                let mut params = PaginatedRequestParams::default();
                params.cursor = cursor.take();
                match live.peer().list_resources(Some(params)).await {
                    Ok(page) => {
                        for r in page.resources {
                            let mut v = serde_json::to_value(&r).unwrap_or(Value::Null);
                            v["server"] = json!(server.name());
                            all.push(v);
                        }
                        match page.next_cursor {
                            Some(next) => cursor = Some(next),
                            None => break,
                        }
                    }
                    Err(e) => {
                        problems.push(format!(
                            "{}: {}",
                            server.name(),
                            crate::sentence::describe(&e)
                        ));
                        break;
                    }
                }
            }
        }
        let mut out = ToolOutput::json(Value::Array(all));
        if !problems.is_empty() {
            out = out.with_block(ContentBlock::text(format!(
                "Some servers could not list resources:\n{}",
                problems.join("\n")
            )));
        }
        Ok(out)
    }
}

#[async_trait]
impl OverServers for ReadResource {
    async fn run(&self, servers: &[Arc<Server>], input: Value, ctx: ToolContext) -> Answer {
        let Resource { name, uri, live } = Resource::of(servers, &input).await?;
        let result = live
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| {
                ToolError::new(format!(
                    "MCP server \"{name}\" could not read {uri}: {}",
                    crate::sentence::describe(&e)
                ))
            })?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let items = value
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(ToolOutput::json(crate::blob::contents(
            &items,
            name,
            ctx.session.state_dir(),
        )))
    }
}

/// The two resource tools over `servers`.
pub(crate) fn tools(servers: &[Arc<Server>]) -> Vec<Tool> {
    let list = client_tools::tool(
        "ListMcpResourcesTool",
        "Lists the resources the connected MCP servers offer (uri, name, mimeType, server). Give `server` to list only one server's.",
        json!({"type": "object", "properties": {"server": {"type": "string", "description": "Only this server's resources"}}, "additionalProperties": false}),
        servers,
        ListResources,
    );
    let read = client_tools::tool(
        "ReadMcpResourceTool",
        "Reads one resource of an MCP server by its URI (see ListMcpResourcesTool). Text comes back as `text`; binary contents are saved to a file whose path is `blobSavedTo`.",
        json!({"type": "object", "properties": {"server": {"type": "string"}, "uri": {"type": "string"}}, "required": ["server", "uri"], "additionalProperties": false}),
        servers,
        ReadResource,
    );
    [list, read].into_iter().flatten().collect()
}
