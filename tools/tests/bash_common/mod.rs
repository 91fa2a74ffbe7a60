//! Shared by the Bash integration tests: a session in a tempdir, calls
//! through the real pipeline, and a `sleep` marker (counting the processes
//! that carry it is `baton_test_support::procs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use baton_engine::call::CallResult;
use baton_engine::{Context, Pipeline, Session, ToolContext, ToolPool, ToolUse};
use baton_tools::bash::{self, BashConfig};
use serde_json::Value;

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub work: PathBuf,
    pub session: Arc<Session>,
    pub pipeline: Pipeline,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(BashConfig::default())
    }

    /// A harness whose foreground commands are stopped at their time limit
    /// (not moved to the background).
    pub fn killing_at_timeout() -> Self {
        Self::with_config(BashConfig {
            timeout_moves_to_background: false,
            ..BashConfig::default()
        })
    }

    pub fn with_config(config: BashConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = std::fs::canonicalize(dir.path()).unwrap().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let session = Session::new("bash-test", dir.path().join("state"));
        let pipeline = Pipeline::allow_all_unsafe(ToolPool::of(bash::tools(&config).unwrap()));
        Harness {
            dir,
            work,
            session,
            pipeline,
        }
    }

    pub fn ctx(&self, call_id: &str) -> ToolContext {
        ToolContext::standalone(call_id, Context::new(&self.work), self.session.clone())
    }

    pub fn ctx_in(&self, call_id: &str, cwd: &Path) -> ToolContext {
        let context = Context::new(cwd).with_roots(vec![self.work.clone()]);
        ToolContext::standalone(call_id, context, self.session.clone())
    }

    pub async fn call(&self, name: &str, input: Value, ctx: ToolContext) -> CallResult {
        let prepared = self
            .pipeline
            .prepare(ToolUse::new(ctx.call_id.clone(), name, input));
        self.pipeline.run(prepared, ctx).await
    }

    pub async fn bash(&self, input: Value) -> CallResult {
        self.call("Bash", input, self.ctx("call-1")).await
    }
}

/// A `sleep` argument no other process on the machine uses.
pub fn marker() -> String {
    baton_test_support::procs::marker("1000.")
}

/// The next notification about a task's end, skipping the `tasks_changed`
/// level signals sent beside it (whose order against it is not fixed).
pub async fn next_task_note(
    notes: &mut tokio::sync::broadcast::Receiver<baton_engine::Notification>,
) -> baton_engine::Notification {
    loop {
        let note = tokio::time::timeout(Duration::from_secs(30), notes.recv())
            .await
            .expect("a notification in time")
            .expect("the session is alive");
        if note.kind != "tasks_changed" {
            return note;
        }
    }
}
