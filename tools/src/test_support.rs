//! Helpers shared by the tools' unit tests: run one call through the real
//! engine pipeline, the way the runtime does.

use std::sync::Arc;

use baton_engine::call::CallResult;
use baton_engine::{Context, Pipeline, Session, Tool, ToolContext, ToolPool, ToolUse};
use serde_json::Value;

/// A session whose state directory lives in its own tempdir.
pub(crate) struct Harness {
    pub dir: tempfile::TempDir,
    pub session: Arc<Session>,
    pub pipeline: Pipeline,
}

impl Harness {
    pub(crate) fn new(tools: Vec<Tool>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("test-session", dir.path().join("state"));
        Harness {
            dir,
            session,
            pipeline: Pipeline::allow_all_unsafe(ToolPool::of(tools)),
        }
    }

    pub(crate) fn context(&self, cwd: &std::path::Path) -> ToolContext {
        ToolContext::standalone("call-1", Context::new(cwd), self.session.clone())
    }

    /// Runs `name(input)` with the working directory `cwd`.
    pub(crate) async fn run(&self, name: &str, input: Value, cwd: &std::path::Path) -> CallResult {
        self.run_with(name, input, self.context(cwd)).await
    }

    pub(crate) async fn run_with(&self, name: &str, input: Value, ctx: ToolContext) -> CallResult {
        let prepared = self.pipeline.prepare(ToolUse::new("call-1", name, input));
        self.pipeline.run(prepared, ctx).await
    }
}

/// Pids whose command line contains `marker`.
pub(crate) fn pids_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(marker) {
            // Zombies are reaped by their parent; they run nothing.
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            if !stat.contains(") Z ") {
                pids.push(pid);
            }
        }
    }
    pids
}

pub(crate) async fn gone_within(marker: &str, limit: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if pids_with(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}
