//! `RefreshMcpTools {server?}`: re-lists the tools of connected servers
//! (all, or one) and says what changed, in Claude Code's output shape
//! (`[{server, status, toolCount?, added?, removed?, error?}]`).
//!
//! For servers that change their tools without sending
//! `tools/list_changed`. The new list replaces the server's; the pool the
//! model sees is rebuilt by the host's next refresh between messages (the
//! same path a `tools/list_changed` notification takes), so a batch never
//! has its pool changed under it. The tool never dials: a server without a
//! live connection is reported `not_connected`.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use baton_engine::{async_trait, Tool, ToolContext, ToolOutput};
use serde_json::{json, Value};

use crate::client_tools::{self, chosen, Answer, OverServers};
use crate::naming::tool_name;
use crate::server::Server;

struct Refresh;

#[async_trait]
impl OverServers for Refresh {
    async fn run(&self, servers: &[Arc<Server>], input: Value, _: ToolContext) -> Answer {
        let servers = chosen(servers, &input)?;
        let results = futures::future::join_all(servers.into_iter().map(refresh_one)).await;
        Ok(ToolOutput::json(Value::Array(results)))
    }
}

/// The pool names of a tool list.
fn names(server: &str, tools: &[Value]) -> BTreeSet<String> {
    tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter_map(|t| tool_name(server, t))
        .collect()
}

async fn refresh_one(server: &Arc<Server>) -> Value {
    let name = server.name().to_string();
    let Some(live) = server.live_now() else {
        return json!({
            "server": name,
            "status": "not_connected",
            "error": format!("the server is {}", server.state().label()),
        });
    };
    let limit = server.options().connect_timeout;
    let listed = match tokio::time::timeout(limit, live.peer().list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            return json!({
                "server": name,
                "status": "error",
                "error": format!("tools/list failed: {}; the previous tools are kept", crate::sentence::describe(&e)),
            })
        }
        Err(_) => {
            return json!({
                "server": name,
                "status": "error",
                "error": format!("tools/list did not answer within {} s (MCP_TIMEOUT); the previous tools are kept", limit.as_secs_f64()),
            })
        }
    };
    let fresh: Vec<Value> = listed
        .into_iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    let before = names(&name, &server.tools.lock());
    let after = names(&name, &fresh);
    let added: Vec<&String> = after.difference(&before).collect();
    let removed: Vec<&String> = before.difference(&after).collect();
    let changed = *server.tools.lock() != fresh;
    let count = fresh.len();
    *server.tools.lock() = fresh;
    if changed {
        server.pool_stale.store(true, Ordering::Release);
    }
    json!({
        "server": name,
        "status": "refreshed",
        "toolCount": count,
        "added": added,
        "removed": removed,
    })
}

/// The tool over `servers`.
pub(crate) fn tool(servers: &[Arc<Server>]) -> Option<Tool> {
    client_tools::tool(
        "RefreshMcpTools",
        "Re-lists the tools of connected MCP servers (all, or only `server`) and reports per server: status (refreshed, error, not_connected), toolCount, and the tool names added and removed. The changed tools are offered from the next message on. Never connects a server that is not connected.",
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Optional server name: refresh only this server. Omit to refresh all connected servers."}
            },
            "additionalProperties": false
        }),
        servers,
        Refresh,
    )
}
