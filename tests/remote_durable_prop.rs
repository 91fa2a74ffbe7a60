//! Random sequences of remote calls, duplicates, cut connections and worker
//! restarts, with real workers and a real (breaking) network: every call is
//! answered exactly once, in call order, and no tool runs twice for one id.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use baton::{Engine, ToolUse};
use baton_test_support::proxy::{addr_of, Proxy};
use baton_test_support::worker::Worker;
use proptest::prelude::*;
use serde_json::json;

const TOKEN: &str = "durable-prop-token";

#[derive(Clone, Debug)]
enum Kind {
    Writer,
    Reader,
}

#[derive(Clone, Debug)]
enum Fault {
    None,
    /// Every connection is cut this many ms into the batch.
    Cut(u64),
    /// The worker is SIGKILLed and restarted on its state directory.
    Restart(u64),
}

#[derive(Clone, Debug)]
struct Step {
    calls: Vec<Kind>,
    fault: Fault,
    /// Send the previous step's calls again afterwards (same ids).
    duplicate: bool,
}

fn step() -> impl Strategy<Value = Step> {
    let kind = prop_oneof![Just(Kind::Writer), Just(Kind::Reader)];
    let fault = prop_oneof![
        3 => Just(Fault::None),
        2 => (0u64..700).prop_map(Fault::Cut),
        1 => (0u64..700).prop_map(Fault::Restart),
    ];
    (proptest::collection::vec(kind, 1..=3), fault, any::<bool>()).prop_map(
        |(calls, fault, duplicate)| Step {
            calls,
            fault,
            duplicate,
        },
    )
}

fn counted_worker(dir: &Path) -> Worker {
    crate::support::routed::counted_worker(dir, TOKEN, "tool_use_id")
}

fn call(id: &str, kind: &Kind) -> ToolUse {
    let command = match kind {
        Kind::Writer => format!("echo {id} >> side.txt; sleep 0.3; echo wrote {id}"),
        Kind::Reader => "sleep 0.3; cat side.txt 2>/dev/null; echo read".to_string(),
    };
    ToolUse::new(id, "Bash", json!({ "command": command }))
}

/// Runs `calls` as one batch; returns each result's id, text and error
/// flag, in the order they came.
async fn run(engine: &Engine, calls: &[ToolUse]) -> Vec<(String, String, bool)> {
    let run = crate::common::run_all(engine, calls.to_vec()).await;
    run.results
        .into_iter()
        .map(|(_, r, _)| (r.call_id.clone(), r.text(), r.is_error))
        .collect()
}

async fn check(steps: Vec<Step>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let wdir = root.join("worker");
    let mut worker = counted_worker(&wdir);
    let proxy = Proxy::start(addr_of(&worker.url)).await;
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = crate::support::routed::engine_on_urls(
        &local,
        &[proxy.url_for(&worker.url)],
        "prop",
        TOKEN,
        &["Bash"],
    );
    let mut first_answers: HashMap<String, (String, bool)> = HashMap::new();
    let mut previous: Vec<ToolUse> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let calls: Vec<ToolUse> = step
            .calls
            .iter()
            .enumerate()
            .map(|(i, k)| call(&format!("s{n}c{i}"), k))
            .collect();
        let batch = {
            let engine = engine.clone();
            let calls = calls.clone();
            tokio::spawn(async move { run(&engine, &calls).await })
        };
        match step.fault {
            Fault::None => {}
            Fault::Cut(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                proxy.cut();
            }
            Fault::Restart(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                worker.kill();
                worker = counted_worker(&wdir);
                proxy.set_upstream(addr_of(&worker.url));
                proxy.cut();
            }
        }
        let out = batch.await.unwrap();
        let ids: Vec<&str> = out.iter().map(|(id, _, _)| id.as_str()).collect();
        let want: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, want, "one result per call, in call order");
        for (id, text, is_error) in out {
            first_answers.insert(id, (text, is_error));
        }
        if step.duplicate && !previous.is_empty() {
            let again = run(&engine, &previous).await;
            let ids: Vec<&str> = again.iter().map(|(id, _, _)| id.as_str()).collect();
            let want: Vec<&str> = previous.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(ids, want);
            for (id, text, is_error) in again {
                let (first, first_error) = &first_answers[&id];
                // A call that finished is answered with its own result.
                if !first_error {
                    assert!(!is_error, "{id} finished, its retry says: {text}");
                    assert_eq!(&text, first, "{id}: another answer on retry");
                }
            }
        }
        previous = calls;
    }
    // No id ran twice on the worker (across restarts: the log is in its
    // directory).
    let log = std::fs::read_to_string(wdir.join("runs.log")).unwrap_or_default();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in log.lines() {
        *counts.entry(id).or_default() += 1;
    }
    for (id, n) in counts {
        assert_eq!(n, 1, "{id} ran {n} times");
    }
    engine.shutdown();
}

proptest! {
    // Each case starts real workers and may restart them: few cases, each
    // a handful of steps.
    #![proptest_config(ProptestConfig { cases: 8, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn every_call_is_answered_once_in_order_and_never_run_twice(
        steps in proptest::collection::vec(step(), 1..=4)
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(check(steps));
    }
}
