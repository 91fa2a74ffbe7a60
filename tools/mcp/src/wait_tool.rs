//! `WaitForMcpServers {server?, timeout_ms?}`: waits, for a bounded time,
//! until no server (or the one named) is still connecting or restarting,
//! then reports each server's state with Claude Code's status words
//! (`connected`, `pending`, `failed`, `needs-auth`).
//!
//! Claude Code publishes no input schema for this tool; Baton's takes an
//! optional server and an optional limit (default 30 s, at most 5 minutes).
//! The output is `{"servers": [{server, status, error?}], "timedOut"}`.
//! Waiting ends early when the call is cancelled.

use std::sync::Arc;
use std::time::Duration;

use baton_engine::{async_trait, Tool, ToolContext, ToolOutput};
use serde_json::{json, Value};

use crate::client_tools::{self, chosen, Answer, OverServers};
use crate::server::{Server, ServerState};

const DEFAULT_WAIT: Duration = Duration::from_secs(30);
const MAX_WAIT: Duration = Duration::from_secs(300);

struct Wait;

/// Still on its way: connecting, restarting, or "ready" with a connection
/// that has just died (the supervisor has not noticed yet).
fn pending(server: &Server) -> bool {
    match server.state() {
        ServerState::Connecting | ServerState::Restarting { .. } => true,
        ServerState::Ready => server.live_now().is_none(),
        ServerState::Failed(_) | ServerState::Stopped => false,
    }
}

/// One server's state in Claude Code's words.
fn report(server: &Server) -> Value {
    let state = server.state();
    let (status, error) = match &state {
        ServerState::Ready if pending(server) => ("pending", None),
        ServerState::Ready => ("connected", None),
        ServerState::Connecting | ServerState::Restarting { .. } => ("pending", None),
        ServerState::Failed(why) if why.contains("baton mcp login") => {
            ("needs-auth", Some(why.clone()))
        }
        ServerState::Failed(why) => ("failed", Some(why.clone())),
        ServerState::Stopped => ("failed", Some("the server has been stopped".into())),
    };
    let mut out = json!({"server": server.name(), "status": status, "state": state.label()});
    if let Some(error) = error {
        out["error"] = json!(error);
    }
    out
}

#[async_trait]
impl OverServers for Wait {
    async fn run(&self, servers: &[Arc<Server>], input: Value, ctx: ToolContext) -> Answer {
        let servers = chosen(servers, &input)?;
        let limit = input
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_WAIT)
            .min(MAX_WAIT);
        let deadline = tokio::time::Instant::now() + limit;
        let mut watches: Vec<_> = servers.iter().map(|s| s.watch_state()).collect();
        let timed_out = loop {
            for w in watches.iter_mut() {
                w.borrow_and_update();
            }
            if !servers.iter().any(|s| pending(s)) {
                break false;
            }
            // Wake on any server's state change (a closed channel counts:
            // the server is gone and will not change again).
            let changes = watches.iter_mut().map(|w| Box::pin(w.changed()));
            tokio::select! {
                _ = futures::future::select_all(changes) => {}
                // A dead connection is noticed without a state change.
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                _ = tokio::time::sleep_until(deadline) => break true,
                _ = ctx.cancel.cancelled() => break true,
            }
        };
        let reports: Vec<Value> = servers.iter().map(|s| report(s)).collect();
        Ok(ToolOutput::json(
            json!({"servers": reports, "timedOut": timed_out}),
        ))
    }
}

/// The tool over `servers`.
pub(crate) fn tool(servers: &[Arc<Server>]) -> Option<Tool> {
    client_tools::tool(
        "WaitForMcpServers",
        "Waits until MCP servers that are still connecting (or restarting after a crash) are ready or have failed, at most `timeout_ms` (default 30000, at most 300000), then reports each server's status: connected, pending, failed or needs-auth. Give `server` to wait for one server only.",
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Only wait for this server"},
                "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 300000, "description": "How long to wait at most, in milliseconds (default 30000)"}
            },
            "additionalProperties": false
        }),
        servers,
        Wait,
    )
}
