//! Hook overhead per call: one Noop call per batch with no hook, with an
//! in-process PreToolUse hook, and with a command PreToolUse hook (`true`
//! through bash: a process per call, as in Claude Code), in the same run.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use baton::engine::hooks::{CommandHook, ToolNameMatcher};
use baton::engine::{FnHook, HookEvent, HookOutcome, HookRegistry};
use baton::Engine;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

fn engine_with(hooks: HookRegistry) -> Engine {
    let dir = std::env::temp_dir().join(format!("baton-bench-hooks-{}", std::process::id()));
    Engine::builder(common::pool())
        .cwd(std::env::temp_dir())
        .state_dir(dir)
        .hooks(hooks)
        .build()
        .expect("the bench engine builds")
}

fn hooks(c: &mut Criterion) {
    let rt = common::runtime();
    let g = rt.enter();
    let none = engine_with(HookRegistry::default());
    let in_process = engine_with(HookRegistry::new(vec![Arc::new(FnHook::new(
        |event, tool: &str| event == HookEvent::PreToolUse && tool == "Noop",
        |_input| async { HookOutcome::allow() },
    ))]));
    let command = engine_with(HookRegistry::new(vec![Arc::new(CommandHook::new(
        HookEvent::PreToolUse,
        ToolNameMatcher::parse("Noop").unwrap(),
        "true",
        std::env::temp_dir(),
    ))]));
    drop(g);
    let mut group = c.benchmark_group("hook_overhead_per_call");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    for (name, engine) in [
        ("none", &none),
        ("in_process", &in_process),
        ("command", &command),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(common::run_batch(
                    engine,
                    common::calls("Noop", 1, json!({})),
                ))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, hooks);
criterion_main!(benches);
