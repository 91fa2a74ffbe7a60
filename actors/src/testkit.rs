//! Tools for testing and benchmarking the runtime (feature `testkit`).
//!
//! They do nothing useful, on purpose: each input field makes a call behave
//! one way (take so long, fail, panic, report progress, produce so much
//! output, change the working directory), so tests can build any batch shape
//! without real processes and check timing through a shared [`Timeline`].
//!
//! - `Probe`: blocks on a new-message interrupt (the default behaviour);
//! - `Nap`: stops on a new-message interrupt (like Sleep);
//! - `Shell`: like Probe, but its failures cancel siblings, labelled
//!   `Shell(<first 40 chars of cmd>…)` as Bash is;
//! - `Nest`: runs its `calls` as a nested batch and returns their texts;
//!   stops on a new message;
//! - `Agent`: like Nest, but keeps running through a new message (as a
//!   subagent would), passing it down to its nested batch.
//!
//! Common input: `ms` (duration), `safe` (default true), `read_only`
//! (default: `safe`), `fail`, `panic`, `progress`, `out_chars`, `cd`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::nesting::{run_nested, NestedOptions};
use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::{
    AllowAllUnsafe, ContextModifier, InterruptBehavior, Tool, ToolContext, ToolDef, ToolError,
    ToolLogic, ToolOutput, ToolUse,
};
use parking_lot::Mutex;
use serde_json::{json, Value};

/// When each probe call ran, by call id.
#[derive(Default, Debug)]
pub struct Timeline {
    /// One span per finished probe call, in the order they ended.
    pub spans: Mutex<Vec<Span>>,
}

/// When one probe call ran.
#[derive(Clone, Debug)]
pub struct Span {
    /// The call's `tool_use` id.
    pub call_id: String,
    /// When the probe started running.
    pub start: Instant,
    /// When the probe ended (finished or cancelled).
    pub end: Instant,
    /// Whether the probe ended because it was cancelled.
    pub cancelled: bool,
}

impl Timeline {
    /// The span of call `id`, if it ran.
    pub fn span(&self, id: &str) -> Option<Span> {
        self.spans.lock().iter().find(|s| s.call_id == id).cloned()
    }

    /// Whether call `id` ran at all.
    pub fn ran(&self, id: &str) -> bool {
        self.span(id).is_some()
    }

    /// Highest number of probe calls running at the same moment.
    pub fn max_parallel(&self) -> usize {
        let spans = self.spans.lock();
        let mut points: Vec<(Instant, i32)> = Vec::new();
        for s in spans.iter() {
            points.push((s.start, 1));
            points.push((s.end, -1));
        }
        points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut now, mut max) = (0i32, 0i32);
        for (_, d) in points {
            now += d;
            max = max.max(now);
        }
        max as usize
    }
}

fn flag(input: &Value, name: &str) -> bool {
    input.get(name).and_then(Value::as_bool).unwrap_or(false)
}

fn safe(input: &Value) -> bool {
    input.get("safe").and_then(Value::as_bool).unwrap_or(true)
}

struct Probe {
    shell: bool,
}

#[baton_engine::async_trait]
impl ToolLogic<Value> for Probe {
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        safe(input)
    }

    fn is_read_only(&self, input: &Value) -> bool {
        input
            .get("read_only")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| safe(input))
    }

    fn label(&self, input: &Value) -> Option<String> {
        let cmd = input.get("cmd").and_then(Value::as_str)?;
        let mut short: String = cmd.chars().take(40).collect();
        if cmd.chars().count() > 40 {
            short.push('…');
        }
        self.shell.then(|| format!("Shell({short})"))
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let timeline = ctx.session.slots().get_or_default::<Timeline>();
        let start = Instant::now();
        if flag(&input, "progress") {
            ctx.progress.message(format!("{} started", ctx.call_id));
        }
        let ms = input.get("ms").and_then(Value::as_u64).unwrap_or(0);
        let mut cancelled = false;
        if ms > 0 {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                _ = ctx.cancel.cancelled() => cancelled = true,
            }
        }
        timeline.spans.lock().push(Span {
            call_id: ctx.call_id.clone(),
            start,
            end: Instant::now(),
            cancelled,
        });
        if cancelled {
            return Ok(ToolOutput::text("partial output before the stop"));
        }
        if flag(&input, "panic") {
            panic!("probe asked to panic");
        }
        if flag(&input, "fail") {
            return Ok(ToolOutput::error(format!(
                "{} failed as asked",
                ctx.call_id
            )));
        }
        let mut output = match input.get("out_chars").and_then(Value::as_u64) {
            Some(n) => ToolOutput::text("y".repeat(n as usize)),
            None => ToolOutput::text(format!("{} done in {}", ctx.call_id, ctx.cwd().display())),
        };
        if let Some(dir) = input.get("cd").and_then(Value::as_str) {
            let dir = ctx.context.absolute(dir);
            output = output.with_modifier(ContextModifier::new(move |mut c| {
                c.cwd = dir;
                c
            }));
        }
        Ok(output)
    }
}

struct Nest;

#[baton_engine::async_trait]
impl ToolLogic<Value> for Nest {
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let calls: Vec<ToolUse> = input
            .get("calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        ToolUse::new(
                            c.get("id")
                                .and_then(Value::as_str)
                                .map_or_else(|| format!("{}.{i}", ctx.call_id), str::to_string),
                            c.get("name").and_then(Value::as_str).unwrap_or("Probe"),
                            c.get("input").cloned().unwrap_or_else(|| json!({})),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let results = run_nested(&ctx, NestedOptions::default(), calls)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        let texts: Vec<Value> = results
            .iter()
            .map(|r| json!({"id": r.call_id, "is_error": r.is_error, "text": r.text()}))
            .collect();
        Ok(ToolOutput::json(Value::Array(texts)))
    }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ms": {"type": "integer", "minimum": 0},
            "safe": {"type": "boolean"},
            "read_only": {"type": "boolean"},
            "fail": {"type": "boolean"},
            "panic": {"type": "boolean"},
            "progress": {"type": "boolean"},
            "out_chars": {"type": "integer", "minimum": 0},
            "cd": {"type": "string"},
            "cmd": {"type": "string"},
            "calls": {"type": "array"}
        },
        "additionalProperties": false
    })
}

fn tool(def: ToolDef, logic: impl ToolLogic<Value>) -> Arc<Tool> {
    match Tool::raw(def, schema(), logic) {
        Ok(t) => Arc::new(t),
        Err(e) => panic!("testkit schema is invalid: {e}"),
    }
}

/// Probe, Nap, Shell, Nest and Agent.
pub fn tools() -> Vec<Arc<Tool>> {
    vec![
        tool(
            ToolDef::new("Probe", "Waits, then reports; blocks on new messages."),
            Probe { shell: false },
        ),
        tool(
            ToolDef::new("Nap", "Waits, then reports; stops on new messages.")
                .interrupt(InterruptBehavior::Cancel),
            Probe { shell: false },
        ),
        tool(
            ToolDef::new("Shell", "Like Probe; its failures cancel siblings.")
                .cancels_siblings_on_error(true),
            Probe { shell: true },
        ),
        tool(
            ToolDef::new("Nest", "Runs its calls as a nested batch.")
                .interrupt(InterruptBehavior::Cancel),
            Nest,
        ),
        tool(
            ToolDef::new(
                "Agent",
                "Runs its calls as a nested batch, like a subagent.",
            ),
            Nest,
        ),
    ]
}

/// A pool of [`tools`].
pub fn pool() -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins: tools(),
            ..Default::default()
        },
        &AllowAllUnsafe,
    )
}
