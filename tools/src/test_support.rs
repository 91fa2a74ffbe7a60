//! Helpers shared by the tools' unit tests: run one call through the real
//! engine pipeline, the way the runtime does.

use std::sync::Arc;

use baton_engine::call::CallResult;
use baton_engine::{Context, Pipeline, Session, Tool, ToolContext, ToolPool, ToolUse};
use serde_json::Value;

/// A session whose state directory lives in its own tempdir.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub session: Arc<Session>,
    pub pipeline: Pipeline,
}

impl Harness {
    pub fn new(tools: Vec<Tool>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("test-session", dir.path().join("state"));
        Harness {
            dir,
            session,
            pipeline: Pipeline::allow_all_unsafe(ToolPool::of(tools)),
        }
    }

    pub fn context(&self, cwd: &std::path::Path) -> ToolContext {
        ToolContext::standalone("call-1", Context::new(cwd), self.session.clone())
    }

    /// Runs `name(input)` with the working directory `cwd`.
    pub async fn run(&self, name: &str, input: Value, cwd: &std::path::Path) -> CallResult {
        self.run_with(name, input, self.context(cwd)).await
    }

    pub async fn run_with(&self, name: &str, input: Value, ctx: ToolContext) -> CallResult {
        let prepared = self.pipeline.prepare(ToolUse::new("call-1", name, input));
        self.pipeline.run(prepared, ctx).await
    }
}
