//! A hook sees the same `tool_response` for a Bash command whether it ran
//! here or on a remote Baton worker (`baton mcp serve --http`): the tool
//! builds its response on the worker, and the host puts it back into the
//! result unchanged, with the tool's shell facts (issue 43).
//!
//! Real command hooks record their stdin, one file per run; the same
//! commands run on a local engine and on one whose Bash is routed to a
//! worker child process: one whose non-zero exit is an answer (`grep`
//! finding nothing: PostToolUse), one that fails, and one that reaches its
//! time limit and is stopped (both reach PostToolBatch, which gets every
//! call's `tool_response`).

use std::path::Path;
use std::sync::Arc;

use baton::actors::SiblingPolicy;
use baton::engine::hooks::config::{parse_hooks, HookSource};
use baton::engine::permission::AllowAllUnsafe;
use baton::engine::{HookRegistry, PoolSpec, Tool, ToolPool};
use baton::{CallResult, Engine, Event, Outcome, ToolUse};
use baton_test_support::worker::Worker;
use baton_tools::bash::TIMEOUT_KILLS_ENV;
use baton_tools::registry::BuiltinConfig;
use serde_json::{json, Value};

use crate::support::BATON;

const TOKEN: &str = "hook-response-test-token";

/// The built-in tools, with a time limit that stops a command (as the
/// worker's are with [`TIMEOUT_KILLS_ENV`]) rather than moving it to the
/// background.
fn tools() -> Vec<Arc<Tool>> {
    let mut config = BuiltinConfig::default();
    config.bash.timeout_moves_to_background = false;
    config.tools().expect("the built-in tools build")
}

/// PostToolUse (Bash) and PostToolBatch hooks that each save their stdin
/// to a file of their own in `dir`.
fn recording_hooks(dir: &Path) -> HookRegistry {
    std::fs::create_dir_all(dir).unwrap();
    let record = format!("cat > \"$(mktemp -p '{}' hook.XXXXXXXX)\"", dir.display());
    let hook = json!([{"hooks": [{"type": "command", "command": record}]}]);
    let parsed = parse_hooks(
        &json!({"PostToolUse": [{"matcher": "Bash", "hooks": hook[0]["hooks"]}], "PostToolBatch": hook}),
        &HookSource::default(),
    );
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    HookRegistry::new(parsed.hooks)
}

fn engine(dir: &Path, pool: ToolPool, hooks: HookRegistry) -> Engine {
    std::fs::create_dir_all(dir).unwrap();
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join(".state"))
        .policy(Arc::new(AllowAllUnsafe))
        .hooks(hooks)
        // A failing Bash call otherwise cancels its batch's scope, and with
        // it the batch's PostToolBatch hooks, which see the failures here.
        .sibling_policy(SiblingPolicy::Off)
        .build()
        .expect("the engine builds")
}

fn pool(builtins: Vec<Arc<Tool>>) -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins,
            ..Default::default()
        },
        &AllowAllUnsafe,
    )
}

/// Runs each call in a batch of its own, so that every batch's
/// PostToolBatch hook sees one call, and returns the results.
async fn run_each(engine: &Engine, calls: &[ToolUse]) -> Vec<CallResult> {
    let mut results = Vec::new();
    for call in calls {
        let mut batch = engine.open_batch().await.unwrap();
        batch.add(call.clone()).unwrap();
        batch.end();
        while let Some(event) = batch.next_event().await {
            match event {
                Event::Result { result, .. } => results.push(*result),
                Event::Done(_) => break,
                _ => {}
            }
        }
    }
    results
}

/// `(event, tool_use_id) → tool_response` of every recorded hook input.
fn recorded(dir: &Path) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let input: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let event = input["hook_event_name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if event == "PostToolBatch" {
            for call in input["tool_calls"].as_array().cloned().unwrap_or_default() {
                let id = call["tool_use_id"].as_str().unwrap_or_default().to_string();
                out.push((event.clone(), id, call["tool_response"].clone()));
            }
        } else {
            let id = input["tool_use_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.push((event, id, input["tool_response"].clone()));
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hook_sees_the_same_bash_response_locally_and_on_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let w = Worker::start_with_env(
        BATON,
        &root.join("worker"),
        TOKEN,
        &[(TIMEOUT_KILLS_ENV, "1")],
    );
    let calls = [
        // grep finding nothing exits 1: an answer, not a failure.
        ToolUse::new(
            "answer",
            "Bash",
            json!({"command": "echo looking; grep -c zzz /dev/null"}),
        ),
        ToolUse::new("fails", "Bash", json!({"command": "echo partial; exit 3"})),
        ToolUse::new(
            "slow",
            "Bash",
            json!({"command": "echo before; sleep 30", "timeout": 1000}),
        ),
    ];

    let local = engine(
        &root.join("local"),
        pool(tools()),
        recording_hooks(&root.join("local-hooks")),
    );
    let local_results = run_each(&local, &calls).await;
    local.shutdown();

    let remote_config = baton::remote::RemoteConfig {
        workers: vec![w.url.clone()],
        token: Some(TOKEN.into()),
        tools: vec!["Bash".into()],
    };
    let routed = baton::remote::route(tools(), &remote_config, "hooks").unwrap();
    let remote = engine(
        &root.join("host"),
        pool(routed),
        recording_hooks(&root.join("remote-hooks")),
    );
    let remote_results = run_each(&remote, &calls).await;
    remote.shutdown();

    let outcomes = |rs: &[CallResult]| rs.iter().map(|r| r.outcome.clone()).collect::<Vec<_>>();
    assert_eq!(
        outcomes(&local_results),
        [Outcome::Success, Outcome::ToolError, Outcome::ToolError],
        "{:?}",
        local_results
            .iter()
            .map(CallResult::text)
            .collect::<Vec<_>>()
    );
    assert_eq!(outcomes(&remote_results), outcomes(&local_results));

    let seen_here = recorded(&root.join("local-hooks"));
    let seen_there = recorded(&root.join("remote-hooks"));
    // PostToolUse for the answer; PostToolBatch for all three.
    assert_eq!(seen_here.len(), 4, "{seen_here:#?}");
    let response = |seen: &[(String, String, Value)], event: &str, id: &str| {
        seen.iter()
            .find(|(e, i, _)| e == event && i == id)
            .map(|(_, _, r)| r.clone())
            .unwrap_or_else(|| panic!("no {event} for {id} in {seen:#?}"))
    };
    // The tool's own facts, which a shape made from the text lacks.
    let answer = response(&seen_here, "PostToolUse", "answer");
    assert_eq!(answer["stdout"], "looking\n0", "{answer}");
    assert_eq!(answer["exitCode"], 1, "{answer}");
    assert_eq!(answer["interrupted"], false, "{answer}");
    let slow = response(&seen_here, "PostToolBatch", "slow");
    assert_eq!(slow["timedOut"], true, "{slow}");
    assert_eq!(slow["interrupted"], true, "{slow}");
    assert_eq!(slow["exitCode"], Value::Null, "{slow}");
    assert_eq!(
        response(&seen_here, "PostToolBatch", "fails")["exitCode"],
        3
    );
    // And the worker gives exactly the same.
    assert_eq!(seen_there, seen_here);

    // The shell facts beside the result travel too.
    for (here, there) in local_results.iter().zip(&remote_results) {
        assert!(here.details.shell.is_some(), "{}", here.call_id);
        assert_eq!(there.details.shell, here.details.shell, "{}", here.call_id);
    }
}
