//! The engine owns the MCP servers it was built with
//! ([`crate::EngineBuilder::mcp`]): their tool lists are refreshed between
//! messages when a server announced a change, and the servers stop with
//! the engine, so no host can leave a stdio server process behind.

use std::sync::Arc;

use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::{Tool, ToolOrigin};
use baton_mcp::McpClients;

use crate::Engine;

/// The pool changed after [`Engine::refresh_tools`].
#[derive(Clone, Debug, Default)]
pub struct ToolsRefreshed {
    /// Tools left out of the new pool (bad or clashing names).
    pub problems: Vec<String>,
}

impl Engine {
    /// The MCP servers this engine owns, if it was given any.
    pub fn mcp(&self) -> Option<Arc<McpClients>> {
        self.runtime().session().slots().get::<McpClients>()
    }

    /// The pool the next batch runs with (and whose definitions the next
    /// model request should carry).
    pub fn pool(&self) -> ToolPool {
        self.runtime().pipeline().pool().clone()
    }

    /// Re-lists the tools of servers that sent `tools/list_changed` and, if
    /// any did, offers the new pool from the next batch on (SPEC §3 order,
    /// the same deny rules). Call it between messages, before building the
    /// next request: a running batch keeps its pool. Cheap when nothing
    /// changed (no request is made).
    pub async fn refresh_tools(&self) -> Option<ToolsRefreshed> {
        let mcp = self.mcp()?;
        if !mcp.refresh().await {
            return None;
        }
        let pipeline = self.runtime().pipeline();
        let (fresh, problems) = mcp.tools();
        let replaced = |t: &Tool| match t.def().tool_origin() {
            ToolOrigin::Mcp { server } => mcp.server(server).is_some(),
            _ => fresh.iter().any(|f| f.name() == t.name()),
        };
        let mut builtins = Vec::new();
        let mut others = Vec::new();
        for tool in pipeline.pool().tools() {
            if replaced(tool) {
                continue;
            }
            match tool.def().tool_origin() {
                ToolOrigin::BuiltIn => builtins.push(Arc::clone(tool)),
                _ => others.push(Arc::clone(tool)),
            }
        }
        others.extend(fresh);
        let pool = ToolPool::assemble(
            PoolSpec {
                builtins,
                others,
                ..Default::default()
            },
            &**pipeline.policy(),
        );
        self.runtime().replace_pool(pool);
        Some(ToolsRefreshed { problems })
    }

    /// Stops the MCP servers: SIGTERM, grace, SIGKILL to each stdio
    /// server's group. [`Engine::shutdown`] starts this without waiting;
    /// await it to be sure they are gone.
    pub async fn stop_mcp_servers(&self) {
        if let Some(mcp) = self.mcp() {
            mcp.shutdown().await;
        }
    }

    /// Starts stopping the MCP servers from a synchronous shutdown. If the
    /// task is cut short (the runtime ends), dropping a server process kills
    /// its group, so nothing outlives the engine either way.
    pub(crate) fn begin_stopping_mcp_servers(&self) {
        let Some(mcp) = self.mcp() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move { mcp.shutdown().await });
            }
            Err(_) => mcp.kill_now(),
        }
    }
}
