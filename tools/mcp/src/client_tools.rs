//! What the client's own tools share (`ListMcpResourcesTool`,
//! `ReadMcpResourceTool`, `ReadMcpResourceDirTool`, `RefreshMcpTools`,
//! `WaitForMcpServers`): each works over the session's servers, changes
//! nothing on the machine, so it is read-only and safe beside any other
//! call, and mostly waits on servers. They differ only in their name,
//! description, input schema and what they do ([`OverServers`]).

use std::sync::Arc;

use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin, ToolOutput, WorkKind,
};
use serde_json::Value;

use crate::server::{Live, Server};

/// A tool's answer.
pub(crate) type Answer = Result<ToolOutput, ToolError>;

/// What one of the client's tools does with its input.
#[async_trait]
pub(crate) trait OverServers: Send + Sync + 'static {
    async fn run(&self, servers: &[Arc<Server>], input: Value, ctx: ToolContext) -> Answer;
}

struct Logic<T> {
    servers: Vec<Arc<Server>>,
    run: T,
}

#[async_trait]
impl<T: OverServers> ToolLogic<Value> for Logic<T> {
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    fn is_read_only(&self, _: &Value) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Answer {
        self.run.run(&self.servers, input, ctx).await
    }
}

/// The tool `name` over `servers`; `None` only if `schema` does not
/// compile (a bug in this crate, caught by its tests).
pub(crate) fn tool(
    name: &str,
    description: &str,
    schema: Value,
    servers: &[Arc<Server>],
    run: impl OverServers,
) -> Option<Tool> {
    let def = ToolDef::new(name, description)
        .origin(ToolOrigin::Host)
        .work_kind(WorkKind::Wait);
    let logic = Logic {
        servers: servers.to_vec(),
        run,
    };
    Tool::raw(def, schema, logic).ok()
}

/// The server named `name`, or an error listing the servers there are.
pub(crate) fn find<'a>(
    servers: &'a [Arc<Server>],
    name: &str,
) -> Result<&'a Arc<Server>, ToolError> {
    servers.iter().find(|s| s.name() == name).ok_or_else(|| {
        let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
        ToolError::new(format!(
            "no MCP server named \"{name}\"; the servers are: {}",
            names.join(", ")
        ))
    })
}

/// The servers a call is about: the one its `server` names, else all.
pub(crate) fn chosen<'a>(
    servers: &'a [Arc<Server>],
    input: &Value,
) -> Result<Vec<&'a Arc<Server>>, ToolError> {
    match input.get("server").and_then(Value::as_str) {
        Some(name) => Ok(vec![find(servers, name)?]),
        None => Ok(servers.iter().collect()),
    }
}

/// The resource a call names (`server` and `uri`), with its server's
/// connection (waited for if it is still connecting).
pub(crate) struct Resource<'a> {
    pub name: &'a str,
    pub uri: &'a str,
    pub live: Arc<Live>,
}

impl<'a> Resource<'a> {
    pub(crate) async fn of(servers: &[Arc<Server>], input: &'a Value) -> Result<Self, ToolError> {
        let name = input.get("server").and_then(Value::as_str).unwrap_or("");
        let uri = input.get("uri").and_then(Value::as_str).unwrap_or("");
        let live = find(servers, name)?
            .live()
            .await
            .map_err(|why| ToolError::new(format!("MCP server \"{name}\": {why}")))?;
        Ok(Resource { name, uri, live })
    }
}
