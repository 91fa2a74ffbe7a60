//! `Engine::shutdown` ends what the session's tools keep running through
//! the session's cleanup registry, not through a list of tool names: a
//! host's own tool that registers is stopped like background Bash, and the
//! entries stop in the order they registered (issue 43).

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::common::wait_for;
use baton::engine::cleanup::{SessionCleanup, Stopping};
use baton::engine::AllowAllUnsafe;
use baton::engine::{
    async_trait, PoolSpec, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput, ToolPool,
};
use baton::{Engine, Event, ToolUse};
use baton_test_support::procs::sleeping;
use serde_json::{json, Value};

/// A host tool's session state: the processes its calls started, which
/// must not outlive the session.
#[derive(Default)]
struct Watchers(Mutex<Vec<Child>>);

impl Watchers {
    fn kill_all(&self) {
        let mut children = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for child in children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        children.clear();
    }
}

impl SessionCleanup for Watchers {
    fn stop(&self) -> Option<Stopping> {
        self.kill_all();
        None
    }
}

/// A failed test still leaves nothing behind once the engine is gone.
impl Drop for Watchers {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Starts `sleep <seconds>` and keeps it in the session.
struct Watch;

#[async_trait]
impl ToolLogic<Value> for Watch {
    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let seconds = input["seconds"].as_str().unwrap_or("1").to_string();
        let child = Command::new("sleep")
            .arg(&seconds)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        ctx.session
            .lifetime_slot::<Watchers>()
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child);
        Ok(ToolOutput::text(format!("watching for {seconds} s")))
    }
}

fn watch_tool() -> Tool {
    let def = ToolDef::new("Watch", "Starts a process that runs on after the call.");
    let schema = json!({"type": "object", "properties": {"seconds": {"type": "string"}}});
    Tool::raw(def, schema, Watch).expect("the schema compiles")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_a_host_tools_processes_and_background_bash_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others: vec![Arc::new(watch_tool())],
            ..Default::default()
        },
        &AllowAllUnsafe,
    );
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .state_dir(dir.path().join(".state"))
        .allow_all_unsafe()
        .build()
        .unwrap();
    // Seconds that name this test's processes.
    let mine = format!("2000.{}55", std::process::id());
    let bash = format!("2000.{}66", std::process::id());
    for call in [
        ToolUse::new("w", "Watch", json!({"seconds": mine})),
        ToolUse::new(
            "b",
            "Bash",
            json!({"command": format!("sleep {bash}"), "run_in_background": true}),
        ),
    ] {
        let mut batch = engine.open_batch().await.unwrap();
        batch.add(call).unwrap();
        batch.end();
        while let Some(event) = batch.next_event().await {
            match event {
                Event::Result { result, .. } => assert!(!result.is_error, "{}", result.text()),
                Event::Done(_) => break,
                _ => {}
            }
        }
    }
    assert!(wait_for(|| sleeping(&mine) == 1 && sleeping(&bash) == 1).await);
    // Registered as they were first used: the host's tool, then Bash's tasks.
    let names = engine.runtime().session().cleanups().names();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].ends_with("Watchers"), "{names:?}");
    assert!(names[1].ends_with("BackgroundTasks"), "{names:?}");

    engine.shutdown();
    assert!(
        wait_for(|| sleeping(&mine) == 0).await,
        "the host tool's process outlived the session"
    );
    assert!(
        wait_for(|| sleeping(&bash) == 0).await,
        "the background shell outlived the session"
    );
}
