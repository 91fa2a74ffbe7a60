//! The central invariant with nested coordinators (SPEC §1, §14, §15;
//! issue 12): random trees of nested batches (the testkit's `Nest` tool runs
//! its calls as a batch nested under its own call, up to three levels), with
//! random failures, panics, lost invocations and coordinator panics at every
//! level, and interrupts of the root at random moments. At the root every
//! call gets exactly one result, in order, and the batch reaches
//! quiescence; every nested batch that reported back listed exactly its
//! calls, each once, in order.

use std::time::Duration;

use baton::{SiblingPolicy, ToolUse};
use fault_feed::{
    check_results, fault_engine, feed, feeding, quiescent, quiet_injected_panics,
    results_until_done, sibling_policy, Feeding,
};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::fault_feed;

#[derive(Clone, Debug)]
enum Node {
    Leaf {
        tool: &'static str,
        safe: bool,
        ms: u64,
        fail: bool,
        panic: bool,
        /// 0 none, 1 invocation panics, 2 invocation killed, 3 coordinator panics.
        fault: u8,
    },
    Nest {
        fault: u8,
        children: Vec<Node>,
    },
}

fn fault() -> impl Strategy<Value = u8> {
    prop_oneof![40 => Just(0u8), 4 => Just(1u8), 4 => Just(2u8), 1 => Just(3u8)]
}

fn leaf() -> impl Strategy<Value = Node> {
    (
        prop_oneof![Just("Probe"), Just("Nap"), Just("Shell"), Just("Nope")],
        any::<bool>(),
        0u64..6,
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.05),
        fault(),
    )
        .prop_map(|(tool, safe, ms, fail, panic, fault)| Node::Leaf {
            tool,
            safe,
            ms,
            fail,
            panic,
            fault,
        })
}

/// Trees at most three nested levels deep below the root batch.
fn node() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(3, 40, 6, |inner| {
        (fault(), prop::collection::vec(inner, 0..6))
            .prop_map(|(fault, children)| Node::Nest { fault, children })
    })
}

fn id(fault: u8, path: &str) -> String {
    format!("f{fault}-{path}")
}

/// The call for `node` at `path`, nested calls inside its input.
fn call_json(node: &Node, path: &str) -> Value {
    match node {
        Node::Leaf {
            tool,
            safe,
            ms,
            fail,
            panic,
            fault,
        } => json!({"id": id(*fault, path), "name": tool, "input": {
            "ms": ms, "safe": safe, "fail": fail, "panic": panic, "cmd": "make all"}}),
        Node::Nest { fault, children } => {
            let calls: Vec<Value> = children
                .iter()
                .enumerate()
                .map(|(i, c)| call_json(c, &format!("{path}.{i}")))
                .collect();
            json!({"id": id(*fault, path), "name": "Nest", "input": {"calls": calls}})
        }
    }
}

fn to_use(node: &Node, i: usize) -> ToolUse {
    let v = call_json(node, &i.to_string());
    ToolUse::new(
        v["id"].as_str().unwrap_or_default(),
        v["name"].as_str().unwrap_or_default(),
        v["input"].clone(),
    )
}

/// A nested batch that reported back lists exactly its calls, in order;
/// checked again inside every child Nest that did.
fn check_nested(node: &Node, path: &str, text: &str) -> Result<usize, TestCaseError> {
    let Node::Nest { children, .. } = node else {
        return Ok(0);
    };
    let Ok(Value::Array(reported)) = serde_json::from_str::<Value>(text) else {
        return Ok(0); // the Nest itself failed or was cancelled: nothing to check
    };
    prop_assert_eq!(reported.len(), children.len(), "{}: {}", path, text);
    let mut checked = 1;
    for (i, (child, r)) in children.iter().zip(&reported).enumerate() {
        let child_path = format!("{path}.{i}");
        let expected = call_json(child, &child_path)["id"].clone();
        prop_assert_eq!(&r["id"], &expected, "{}: {}", path, text);
        if r["is_error"] == false {
            checked += check_nested(child, &child_path, r["text"].as_str().unwrap_or(""))?;
        }
    }
    Ok(checked)
}

#[derive(Clone, Debug)]
struct TreeSpec {
    nodes: Vec<Node>,
    feeding: Feeding,
    policy: SiblingPolicy,
    cap: usize,
}

fn tree_spec() -> impl Strategy<Value = TreeSpec> {
    (
        prop::collection::vec(node(), 1..=8),
        feeding(1usize..4, 0usize..4),
        sibling_policy(),
        1usize..10,
    )
        .prop_map(|(nodes, feeding, policy, cap)| TreeSpec {
            nodes,
            feeding,
            policy,
            cap,
        })
}

async fn run_case(spec: TreeSpec, state: std::path::PathBuf) -> Result<usize, TestCaseError> {
    let engine = fault_engine(&state, spec.cap, spec.policy)?;
    let mut batch = engine
        .open_batch()
        .await
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let uses: Vec<ToolUse> = spec
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| to_use(n, i))
        .collect();
    let fed = feed(&batch, &uses, &spec.feeding).await;
    let (results, _) = results_until_done(&mut batch, Duration::from_secs(30)).await?;
    check_results(&results, &uses, &fed)?;
    let mut checked = 0;
    for (pos, (_, result)) in results.iter().enumerate() {
        if !result.is_error {
            checked += check_nested(&spec.nodes[pos], &pos.to_string(), &result.text())?;
        }
    }
    quiescent(&batch).await?;
    Ok(checked)
}

#[test]
fn nested_trees_keep_the_invariant_at_every_level() {
    quiet_injected_panics();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let nested_checked = std::sync::atomic::AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let outcome = runner.run(&tree_spec(), |spec| {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let n = rt.block_on(run_case(spec, dir.path().to_path_buf()))?;
        nested_checked.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    // The trees must really nest: many nested batches reported back and
    // were checked, not only failed ones.
    let n = nested_checked.into_inner();
    eprintln!("{n} nested batches checked");
    assert!(n >= 100, "only {n} nested batches were checked");
}
