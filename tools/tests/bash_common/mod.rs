//! Shared by the Bash integration tests: a session in a tempdir, calls
//! through the real pipeline, and process counting by a unique marker.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "1000.{}{}{:09}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        nanos
    )
}

/// Live (non-zombie) processes whose command line contains `marker`.
pub fn count_marked(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if !text.contains(marker) {
                return false;
            }
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // Field 3, after the parenthesised name, is the state.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        })
        .count()
}

/// Waits (generously) for the marked processes to disappear; returns how
/// many are left.
pub async fn settle(marker: &str, within: Duration) -> usize {
    let until = Instant::now() + within;
    loop {
        let n = count_marked(marker);
        if n == 0 || Instant::now() >= until {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until at least `n` marked processes exist (the command started).
pub async fn wait_started(marker: &str, n: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while count_marked(marker) < n && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
