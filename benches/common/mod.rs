//! Shared bench fixtures: bench-only tools and an engine over them.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use baton::actors::testkit;
use baton::engine::pool::{PoolSpec, ToolPool};
use baton::engine::{
    AllowAllUnsafe, InterruptBehavior, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};
use baton::{Engine, EngineBuilder, Event, ToolUse};
use serde_json::{json, Value};

/// Safe tool that returns at once (its input is still schema-validated).
struct Noop;

#[baton::engine::async_trait]
impl ToolLogic<Value> for Noop {
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    fn is_read_only(&self, _: &Value) -> bool {
        true
    }
    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// Safe tool that sleeps `ms`, stopping early when cancelled.
struct Wait;

#[baton::engine::async_trait]
impl ToolLogic<Value> for Wait {
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let ms = input.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::select! {
            _ = precise_work(Duration::from_millis(ms)) => {}
            _ = ctx.cancel.cancelled() => {}
        }
        Ok(ToolOutput::text("waited"))
    }
}

/// `d` of work that takes exactly `d`: an OS sleep on the blocking pool.
/// tokio's timer rounds sleeps up to its next millisecond tick (a 10 ms
/// sleep lasts about 11 ms), which would charge the timer's granularity to
/// whatever is being measured.
pub async fn precise_work(d: Duration) {
    let _ = tokio::task::spawn_blocking(move || std::thread::sleep(d)).await;
}

pub static LEAVES_STARTED: AtomicUsize = AtomicUsize::new(0);
pub static LEAVES_DONE: AtomicUsize = AtomicUsize::new(0);

/// Safe tool that waits until cancelled, counting starts and ends.
struct Leaf;

#[baton::engine::async_trait]
impl ToolLogic<Value> for Leaf {
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(&self, _: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        LEAVES_STARTED.fetch_add(1, Ordering::SeqCst);
        ctx.cancel.cancelled().await;
        LEAVES_DONE.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("leaf stopped"))
    }
}

/// Holds calls until [`release`]: keeps many batches in flight at once.
fn gate() -> &'static tokio::sync::watch::Sender<bool> {
    static GATE: OnceLock<tokio::sync::watch::Sender<bool>> = OnceLock::new();
    GATE.get_or_init(|| tokio::sync::watch::channel(false).0)
}

pub fn close_gate() {
    gate().send_replace(false);
}

pub fn release() {
    gate().send_replace(true);
}

struct Gated;

#[baton::engine::async_trait]
impl ToolLogic<Value> for Gated {
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        let mut rx = gate().subscribe();
        let _ = rx.wait_for(|open| *open).await;
        Ok(ToolOutput::text("through"))
    }
}

fn tool(name: &str, logic: impl ToolLogic<Value>) -> Arc<Tool> {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}},
        "additionalProperties": false
    });
    let def = ToolDef::new(name, "bench tool").interrupt(InterruptBehavior::Cancel);
    Arc::new(Tool::raw(def, schema, logic).unwrap())
}

pub fn pool() -> ToolPool {
    let mut tools = testkit::tools();
    tools.extend([
        tool("Noop", Noop),
        tool("Wait", Wait),
        tool("Leaf", Leaf),
        tool("Gated", Gated),
    ]);
    ToolPool::assemble(
        PoolSpec {
            builtins: tools,
            ..Default::default()
        },
        &AllowAllUnsafe,
    )
}

pub fn engine(cap: usize) -> Engine {
    builder(pool(), "tools", cap)
        .allow_all_unsafe()
        .build()
        .expect("the bench engine builds")
}

/// An engine builder over `pool` for a bench: the temp directory as its
/// workspace, a state directory of its own (named by `name`), at most
/// `cap` calls at once.
pub fn builder(pool: ToolPool, name: &str, cap: usize) -> EngineBuilder {
    let dir = std::env::temp_dir().join(format!("baton-bench-{name}-{}", std::process::id()));
    Engine::builder(pool)
        .cwd(std::env::temp_dir())
        .state_dir(dir)
        .max_concurrency(cap)
}

/// The built-in tools, every call allowed.
pub fn builtin_pool() -> ToolPool {
    baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .expect("the built-in tools build")
}

pub fn calls(name: &str, n: usize, input: Value) -> Vec<ToolUse> {
    (0..n)
        .map(|i| ToolUse::new(format!("c{i}"), name, input.clone()))
        .collect()
}

/// Runs one batch to its done event; returns the number of results.
pub async fn run_batch(engine: &Engine, calls: Vec<ToolUse>) -> usize {
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    drain(&mut batch).await
}

/// Reads `batch` to its done event; returns the number of results.
pub async fn drain(batch: &mut baton::Batch) -> usize {
    let mut n = 0;
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { .. } => n += 1,
            Event::Done(_) => break,
            _ => {}
        }
    }
    n
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Resident memory of this process, in bytes (Linux).
pub fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The hand-written tokio equivalent of one batch of `n` no-op calls,
/// every bench's baseline: a task per call, all spawned at once, the
/// completions reordered into call order.
pub async fn tokio_batch(n: usize) -> usize {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, String)>();
    for i in 0..n {
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send((i, "ok".to_string()));
        });
    }
    drop(tx);
    let mut buffer: Vec<Option<String>> = (0..n).map(|_| None).collect();
    let (mut next, mut emitted) = (0, Vec::with_capacity(n));
    while let Some((i, r)) = rx.recv().await {
        buffer[i] = Some(r);
        while next < n {
            match buffer[next].take() {
                Some(r) => emitted.push(r),
                None => break,
            }
            next += 1;
        }
    }
    emitted.len()
}
