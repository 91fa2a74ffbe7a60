//! Remote execution: chosen tools run on a Baton worker, everything else
//! stays with the host.
//!
//! A remote tool keeps the local tool's definition, schema and classifiers,
//! so validation, permission rules, hooks, scheduling (safe calls together),
//! sibling cancellation and result ordering all happen in the host's engine
//! exactly as for a local call. Only the tool's `call` travels: it becomes an
//! MCP `tools/call` on a worker started with `baton mcp serve --http`, whose
//! progress comes back as the call's progress and whose cancellation is the
//! call's cancellation (`notifications/cancelled` for that request only).
//!
//! Two checks are left to the worker on purpose: `validate_input` (an `Edit`
//! must follow a `Read` *of the worker's file*, which only the worker knows)
//! and everything the tool does with the file system. The worker should run
//! with `--permission-mode bypassPermissions` inside its sandbox: the host
//! already decided.
//!
//! Files move to and from a worker outside tool calls through its
//! `/v1/files` routes ([`files`], the client of `crate::transfer`).

pub mod files;
mod health;
mod tool;
mod worker;
pub mod workspace;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use baton_engine::Tool;

pub use tool::RemoteError;

/// The session's name in the workers' journals: the key plus what makes
/// this session unique. Keys repeat (a directory and a process id recur, a
/// host passes its own), and call ids repeat across sessions (the same
/// message run twice), so a key alone could answer a new call with an old
/// session's result.
fn journal_session(session_key: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{session_key}#{}-{nanos}-{n}", std::process::id())
}

/// Which tools run where.
#[derive(Clone, Debug, Default)]
pub struct RemoteConfig {
    /// Worker endpoints, e.g. `http://worker-0:8765/mcp`.
    pub workers: Vec<String>,
    /// Bearer token the workers expect.
    pub token: Option<String>,
    /// Names of the tools to run remotely (e.g. Bash, Read, Write, Edit,
    /// Glob, Grep). Tools not named stay local.
    pub tools: Vec<String>,
}

/// Replaces every tool `config` names by its remote twin. `session_key`
/// (e.g. the session id) spreads sessions over the workers: the same key
/// always starts on the same worker.
pub fn route(
    tools: Vec<Arc<Tool>>,
    config: &RemoteConfig,
    session_key: &str,
) -> Result<Vec<Arc<Tool>>, RemoteError> {
    if config.tools.is_empty() {
        return Ok(tools);
    }
    if config.workers.is_empty() {
        return Err(RemoteError::NoWorkers);
    }
    for name in &config.tools {
        if !tools.iter().any(|t| t.name() == name) {
            return Err(RemoteError::UnknownTool(name.clone()));
        }
    }
    let mut hasher = DefaultHasher::new();
    session_key.hash(&mut hasher);
    let start = (hasher.finish() % config.workers.len() as u64) as usize;
    let workers = Arc::new(worker::Workers::new(
        config.workers.clone(),
        config.token.clone(),
        start,
        journal_session(session_key),
    ));
    tools
        .into_iter()
        .map(|t| {
            if config.tools.iter().any(|n| n == t.name()) {
                tool::remote(t, workers.clone()).map(Arc::new)
            } else {
                Ok(t)
            }
        })
        .collect()
}
