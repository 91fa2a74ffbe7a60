//! Helpers for the MCP client tests: the test servers as server specs, a
//! client set, and calling a pool tool the way the pipeline does. Their
//! scripts' paths and the HTTP server child are shared with the root
//! package's tests (`baton_test_support::mcp_servers`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::{
    CancelScope, Context, ProgressSink, Session, Tool, ToolContext, ToolError, ToolOutput,
};
use baton_mcp::{ClientOptions, McpClients, ServerSpec};
use serde_json::Value;

pub use baton_test_support::mcp_servers::HttpChild;
pub use baton_test_support::procs::alive;
pub use baton_test_support::workspace;

/// The Python test server (official `mcp` SDK).
pub fn python_server(args: &[&str]) -> ServerSpec {
    let mut all = vec!["-u".to_string(), script("misbehaving.py")];
    all.extend(args.iter().map(|s| s.to_string()));
    ServerSpec::stdio("py", "python3", all)
}

/// A binary installed by `.ci/deps.d/30-mcp.sh`; fails (never skips) when
/// missing.
pub fn node_bin(name: &str) -> String {
    let path = workspace()
        .join(".ci/node/mcp/node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run ./.ci/deps to install the pinned MCP test servers",
        path.display()
    );
    path.display().to_string()
}

pub fn options(dir: &Path) -> ClientOptions {
    let mut opts = ClientOptions::from_env(dir, &|_| None);
    // A cold Python on a loaded machine can take long to start.
    opts.connect_timeout = Duration::from_secs(120);
    opts
}

pub async fn start(specs: Vec<ServerSpec>, dir: &Path) -> McpClients {
    McpClients::start(specs, options(dir)).await
}

pub fn find(tools: &[Arc<Tool>], name: &str) -> Arc<Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no tool {name}; have {:?}",
                tools.iter().map(|t| t.name()).collect::<Vec<_>>()
            )
        })
}

pub fn ctx(dir: &Path) -> ToolContext {
    ToolContext::standalone(
        "toolu_test",
        Context::new(dir),
        Session::new("s", dir.join("state")),
    )
}

pub async fn call_with(
    tool: &Tool,
    input: Value,
    ctx: ToolContext,
) -> Result<ToolOutput, ToolError> {
    let parsed = tool
        .parse(&input)
        .unwrap_or_else(|p| panic!("schema: {p:?}"));
    tool.call(parsed, ctx).await
}

pub async fn call(
    tools: &[Arc<Tool>],
    name: &str,
    input: Value,
    dir: &Path,
) -> Result<ToolOutput, ToolError> {
    call_with(&find(tools, name), input, ctx(dir)).await
}

pub fn text(out: &ToolOutput) -> String {
    baton_engine::content::joined_text(&out.content)
}

pub fn ctx_with(dir: &Path, cancel: CancelScope, progress: ProgressSink) -> ToolContext {
    let mut c = ctx(dir);
    c.cancel = cancel;
    c.progress = progress;
    c
}

/// A test server script under tests/servers.
pub fn script(name: &str) -> String {
    baton_test_support::mcp_servers::script(name)
        .display()
        .to_string()
}

/// servers/oversized.py over stdio, named `name`.
pub fn oversized(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, "python3", vec!["-u".into(), script("oversized.py")])
}

/// The outcome of a call as text, error or not.
pub fn outcome(r: &Result<ToolOutput, ToolError>) -> String {
    match r {
        Ok(out) => text(out),
        Err(e) => e.message.clone(),
    }
}
