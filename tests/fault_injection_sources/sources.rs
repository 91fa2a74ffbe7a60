//! The fault sources of tests/fault_injection_sources.rs, real ones: a
//! command hook for every event of the batch path (one script that
//! misbehaves when the call's input asks it to), an MCP server process
//! (support/fault_mcp.py) with short call limits, and Bash on real
//! `baton mcp serve --http` workers under its own name (`WorkerBash`), so
//! one batch mixes local and remote shells.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use baton::engine::hooks::ToolNameMatcher;
use baton::engine::permission::{PermissionTarget, ToolPermission};
use baton::engine::tool::{InterruptBehavior, ToolDef, ToolLogic, WorkKind};
use baton::engine::{CommandHook, Hook, HookEvent, HookRegistry};
use baton::engine::{Tool, ToolContext, ToolError, ToolOutput};
use baton::mcp::{ClientOptions, McpClients, ServerSpec};
use serde_json::Value;

/// The events whose hooks a batch can run, each with the script's name
/// for it (the marker a call carries to make that hook misbehave).
pub const EVENTS: [HookEvent; 6] = [
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::PostToolUseFailure,
    HookEvent::PermissionRequest,
    HookEvent::PermissionDenied,
    HookEvent::PostToolBatch,
];

/// How long a hook may run: short, so a hanging hook costs a case little.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(2);

/// The hook of every event. `$1` is the event, `$2` the case's marker
/// (also the length of its sleeps, so they can be counted in /proc). It
/// misbehaves only when the hook's input (which holds the call's input)
/// contains `@<event>:<fault>@`: faults stay on the calls that ask.
const HOOK_SCRIPT: &str = r#"ev=$1; mark=$2
input=$(cat)
has() { case "$input" in *"@$ev:$1@"*) return 0;; esac; return 1; }
if has hang; then sleep "$mark" & sleep "$mark"; wait; fi
if has block; then echo "blocked by the test's $ev hook" >&2; exit 2; fi
if has crash; then kill -9 $$; fi
if has garbage; then printf '{"decision": \001\377 not json'; exit 0; fi
if has slow; then sleep 0.3; fi
exit 0
"#;

/// The name the script knows `event` by (as in settings files).
pub fn event_name(event: HookEvent) -> &'static str {
    match event {
        HookEvent::PreToolUse => "PreToolUse",
        HookEvent::PostToolUse => "PostToolUse",
        HookEvent::PostToolUseFailure => "PostToolUseFailure",
        HookEvent::PermissionRequest => "PermissionRequest",
        HookEvent::PermissionDenied => "PermissionDenied",
        HookEvent::PostToolBatch => "PostToolBatch",
        _ => "Other",
    }
}

/// A hook of every event in [`EVENTS`], for every tool, running the
/// script written into `dir`.
pub fn hooks(dir: &Path, marker: &str) -> Result<HookRegistry, String> {
    let script = dir.join("hook.sh");
    std::fs::write(&script, HOOK_SCRIPT).map_err(|e| e.to_string())?;
    let mut hooks: Vec<Arc<dyn Hook>> = Vec::new();
    for event in EVENTS {
        let command = format!("sh {} {} {marker}", script.display(), event_name(event));
        let hook = CommandHook::new(
            event,
            ToolNameMatcher::parse("*").map_err(|e| e.to_string())?,
            command,
            dir,
        )
        .with_timeout(HOOK_TIMEOUT);
        hooks.push(Arc::new(hook));
    }
    Ok(HookRegistry::new(hooks))
}

/// The MCP server's call limits: a hanging call ends after `idle`.
pub const MCP_IDLE: Duration = Duration::from_secs(2);

fn mcp_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fault_mcp.py")
}

/// The fault server, started as `mcp__faults__*` with short limits; its
/// command line carries `marker`.
pub async fn mcp(dir: &Path, marker: &str) -> Result<Arc<McpClients>, String> {
    let mut opts = ClientOptions::from_env(dir, &|_| None);
    opts.connect_timeout = Duration::from_secs(60);
    opts.limits = baton::mcp::CallLimits {
        idle: MCP_IDLE,
        total: Duration::from_secs(8),
    };
    let spec = ServerSpec::stdio(
        "faults",
        "python3",
        vec![mcp_script().display().to_string(), marker.to_string()],
    );
    let clients = Arc::new(McpClients::start(vec![spec], opts).await);
    if !clients.diagnostics().is_empty() {
        return Err(format!("{:?}", clients.diagnostics()));
    }
    Ok(clients)
}

/// Bash on the workers, under another name so that local Bash stays in
/// the pool beside it. Everything is the remote tool's; only the name
/// differs, and a failure does not cancel siblings (that is local Bash's
/// rule, tested elsewhere).
struct OnWorker {
    remote: Arc<Tool>,
}

impl OnWorker {
    fn parsed(&self, input: &Value) -> Option<baton::engine::tool::ParsedInput> {
        self.remote.parse(input).ok()
    }
}

#[async_trait]
impl ToolLogic<Value> for OnWorker {
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.parsed(input)
            .is_some_and(|p| self.remote.is_concurrency_safe(&p))
    }

    fn is_read_only(&self, input: &Value) -> bool {
        self.parsed(input)
            .is_some_and(|p| self.remote.is_read_only(&p))
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        match self.parsed(input) {
            Some(p) => self.remote.permission_target(&p, ctx),
            None => PermissionTarget::None,
        }
    }

    async fn validate_input(&self, input: &Value, ctx: &ToolContext) -> Result<(), String> {
        match self.parsed(input) {
            Some(p) => self.remote.validate_input(&p, ctx).await,
            None => Err("not a Bash input".into()),
        }
    }

    async fn check_permissions(&self, input: &Value, ctx: &ToolContext) -> ToolPermission {
        match self.parsed(input) {
            Some(p) => self.remote.check_permissions(&p, ctx).await,
            None => ToolPermission::Defer,
        }
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let parsed = self
            .parsed(&input)
            .ok_or_else(|| ToolError::new("not a Bash input"))?;
        self.remote.call(parsed, ctx).await
    }
}

/// `WorkerBash`: Bash on `workers` (MCP URLs), the session keyed by `key`.
pub fn worker_bash(workers: Vec<String>, token: &str, key: &str) -> Result<Arc<Tool>, String> {
    let bash = baton::BuiltinConfig::default()
        .tools()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|t| t.name() == "Bash")
        .collect::<Vec<_>>();
    let config = baton::remote::RemoteConfig {
        workers,
        token: Some(token.into()),
        tools: vec!["Bash".into()],
    };
    let remote = baton::remote::route(bash, &config, key)
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or("no remote Bash")?;
    let schema = remote.input_schema().clone();
    let def = ToolDef::new("WorkerBash", "Runs a Bash command on a Baton worker.")
        .interrupt(InterruptBehavior::Cancel)
        .work_kind(WorkKind::Wait);
    Tool::raw(def, schema, OnWorker { remote })
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Which of `n` workers a session keyed by `key` starts on: the remote
/// router's own choice (a SipHash of the key with the fixed default keys),
/// so a test can aim a fault at the worker the calls go to.
pub fn first_worker(key: &str, n: usize) -> usize {
    use std::hash::{Hash, Hasher};
    #[allow(deprecated)]
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % n as u64) as usize
}

/// Sends `sig` (e.g. `-STOP`) to `pid` with kill(1).
pub fn signal(pid: u32, sig: &str) -> bool {
    std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}
