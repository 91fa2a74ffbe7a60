//! The central invariant under random faults (SPEC §1, §14): whatever the
//! batch shape, failures, panics, lost invocations and interrupts, every
//! call gets exactly one result, results leave in call order, the batch
//! reports done, and quiescence is reached.

use std::time::Duration;

use baton::{SiblingPolicy, ToolUse};
use fault_feed::{
    check_results, fault_engine, feed, feeding, quiescent, quiet_injected_panics,
    results_until_done, sibling_policy, Feeding,
};
use proptest::prelude::*;
use serde_json::json;

use crate::support::fault_feed;

#[derive(Clone, Debug)]
struct CallSpec {
    tool: &'static str,
    safe: bool,
    ms: u64,
    fail: bool,
    panic: bool,
    fault: u8, // 0 none, 1 invocation panics, 2 invocation killed, 3 coordinator panics
}

#[derive(Clone, Debug)]
struct BatchSpec {
    calls: Vec<CallSpec>,
    feeding: Feeding,
    policy: SiblingPolicy,
    cap: usize,
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (
        prop_oneof![Just("Probe"), Just("Nap"), Just("Shell"), Just("Nope")],
        any::<bool>(),
        0u64..8,
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.05),
        prop_oneof![40 => Just(0u8), 5 => Just(1u8), 5 => Just(2u8), 1 => Just(3u8)],
    )
        .prop_map(|(tool, safe, ms, fail, panic, fault)| CallSpec {
            tool,
            safe,
            ms,
            fail,
            panic,
            fault,
        })
}

fn batch_spec() -> impl Strategy<Value = BatchSpec> {
    (
        prop::collection::vec(call_spec(), 1..=40),
        feeding(1usize..8, 0usize..6),
        sibling_policy(),
        1usize..12,
    )
        .prop_map(|(calls, feeding, policy, cap)| BatchSpec {
            calls,
            feeding,
            policy,
            cap,
        })
}

fn to_use(i: usize, c: &CallSpec) -> ToolUse {
    let id = format!("f{}-{i}", c.fault);
    let input = json!({
        "ms": c.ms, "safe": c.safe, "fail": c.fail, "panic": c.panic, "cmd": "make all"
    });
    ToolUse::new(id, c.tool, input)
}

async fn run_case(spec: BatchSpec, state: std::path::PathBuf) -> Result<(), TestCaseError> {
    let engine = fault_engine(&state, spec.cap, spec.policy)?;
    let mut batch = engine.open_batch().await.unwrap();
    let uses: Vec<ToolUse> = spec
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| to_use(i, c))
        .collect();
    let fed = feed(&batch, &uses, &spec.feeding).await;
    if let Some((_, kind)) = spec.feeding.interrupt {
        // Interrupting after the end is allowed and changes nothing for
        // calls that already have results.
        batch.interrupt(kind);
    }
    let (results, done) = results_until_done(&mut batch, Duration::from_secs(20)).await?;
    prop_assert_eq!(done.calls, fed.accepted);
    check_results(&results, &uses, &fed)?;
    quiescent(&batch).await?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 600,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_call_gets_one_result_in_order(spec in batch_spec()) {
        quiet_injected_panics();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        rt.block_on(run_case(spec, dir.path().to_path_buf()))?;
    }
}
