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

/// Processes started as `exec -a <marker> …`, the marker unique to one
/// test: the way a test counts what a server left running. Whatever still
/// runs is killed on drop, so a failing test leaves nothing behind.
pub struct Marked(pub String);

impl Marked {
    pub fn new(what: &str) -> Marked {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        Marked(format!("baton-test-{what}-{}-{nanos}", std::process::id()))
    }

    /// A shell command that starts a daemon in a session of its own
    /// (`setsid`, so out of the starter's process group), named by the
    /// marker, with its own stdio.
    pub fn daemon(&self) -> String {
        format!(
            "setsid bash -c 'exec -a {} sleep 3600' </dev/null >/dev/null 2>&1 &",
            self.0
        )
    }

    /// Running processes whose `argv[0]` is the marker.
    pub fn pids(&self) -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).next() == Some(self.0.as_bytes()))
            })
            .collect()
    }

    /// Polls until `want` processes carry the marker or `within` has
    /// passed; returns how many carry it then.
    pub async fn settle(&self, want: usize, within: Duration) -> usize {
        let deadline = std::time::Instant::now() + within;
        loop {
            let n = self.pids().len();
            if n == want || std::time::Instant::now() >= deadline {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
