//! An interrupt reaches a call wherever it is — in a PreToolUse hook that
//! hangs, in the tool's `validate_input`, or running shell processes — and
//! the call ends at once, its tool never started when it had not started,
//! with nothing left running (issue 9).

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::hooks::ToolNameMatcher;
use baton::engine::{
    async_trait, AllowAllUnsafe, CommandHook, HookEvent, HookRegistry, Tool, ToolContext, ToolDef,
    ToolError, ToolLogic, ToolOutput, ToolPool,
};
use baton::{Engine, InterruptKind, Outcome};
use baton_test_support::procs;
use common::{call, drain};
use procs::running;
use serde_json::{json, Value};

use crate::common;

async fn wait_running(needle: &str, n: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while running(needle) < n {
        assert!(Instant::now() < until, "{needle} never started {n}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_ends_a_hanging_hook_and_the_tool_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let m = procs::marker("");
    // The hook hangs for 1000 s, with a child in a group of its own.
    let hook = CommandHook::new(
        HookEvent::PreToolUse,
        ToolNameMatcher::parse("Bash").unwrap(),
        format!("set -m; sleep 1000.{m} & sleep 1000.{m}; wait"),
        dir.path(),
    )
    .with_timeout(Duration::from_secs(2000));
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(dir.path())
    .state_dir(dir.path().join(".state"))
    .hooks(HookRegistry::new(vec![Arc::new(hook)]))
    .allow_all_unsafe()
    .build()
    .unwrap();
    let ran = dir.path().join("ran");
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(call(
            "b",
            "Bash",
            json!({"command": format!("touch {}", ran.display())}),
        ))
        .unwrap();
    batch.end();
    wait_running(&format!("1000.{m}"), 2).await;
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    let run = drain(&mut batch).await;
    // The bound is 1 s; a shared machine gets slack.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    let r = run.result("b");
    assert_eq!(
        r.outcome,
        Outcome::Cancelled { started: false },
        "{}",
        r.text()
    );
    assert!(r.text().contains("user"), "{}", r.text());
    assert!(!ran.exists(), "the tool ran after the interrupt");
    assert_eq!(
        running(&format!("1000.{m}")),
        0,
        "the hook's processes survived"
    );
}

/// A tool whose validation never ends, and which records whether it ran.
struct SlowCheck(Arc<std::sync::atomic::AtomicBool>);

#[async_trait]
impl ToolLogic<Value> for SlowCheck {
    async fn validate_input(&self, _: &Value, _: &ToolContext) -> Result<(), String> {
        tokio::time::sleep(Duration::from_secs(1000)).await;
        Ok(())
    }

    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(ToolOutput::text("ran"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_reaches_a_call_in_validate_input() {
    let dir = tempfile::tempdir().unwrap();
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tool = Tool::raw(
        ToolDef::new("SlowCheck", "Validates slowly."),
        json!({"type": "object"}),
        SlowCheck(ran.clone()),
    )
    .unwrap();
    let engine = Engine::builder(ToolPool::of(vec![tool]))
        .cwd(dir.path())
        .state_dir(dir.path().join(".state"))
        .allow_all_unsafe()
        .build()
        .unwrap();
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(call("s", "SlowCheck", json!({}))).unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    let run = drain(&mut batch).await;
    assert!(t0.elapsed() < Duration::from_secs(3));
    let r = run.result("s");
    assert_eq!(
        r.outcome,
        Outcome::Cancelled { started: false },
        "{}",
        r.text()
    );
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
}

/// Four shell calls running side by side (in four batches, as a host with
/// several messages open would have them) end promptly on an interrupt:
/// Baton does not wait for the zombies of orphans that the machine's init
/// reaps (or never reaps, as PID 1 of a container).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_running_shells_does_not_wait_for_zombies() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::common::allow_all_builder(dir.path())
        .build()
        .unwrap();
    let m = procs::marker("");
    let mut batches = Vec::new();
    for i in 0..4 {
        let batch = engine.open_batch().await.unwrap();
        // The shell's child outlives the shell for a moment after SIGTERM
        // (bash dies first), leaving a zombie for init.
        batch
            .add(call(
                &format!("s{i}"),
                "Bash",
                json!({"command": format!("sleep 1000.{m} & sleep 1000.{m}; wait")}),
            ))
            .unwrap();
        batch.end();
        batches.push(batch);
    }
    wait_running(&format!("1000.{m}"), 8).await;
    let t0 = Instant::now();
    for batch in &batches {
        batch.interrupt(InterruptKind::Cancel);
    }
    for batch in &mut batches {
        let run = drain(batch).await;
        assert_eq!(run.results.len(), 1);
        assert!(
            run.results[0]
                .1
                .text()
                .contains("together with every process"),
            "{}",
            run.results[0].1.text()
        );
    }
    // 50 ms is the goal (benches/interrupt_scale.rs measures it); this
    // test only proves Baton does not wait for init's reaping, which never
    // comes for a container's PID 1. 1 s was exceeded once (1.5 s) on the
    // 2-core machine with a release build compiling beside the tests.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(running(&format!("1000.{m}")), 0);
}
