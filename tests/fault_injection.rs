//! The central invariant under random faults (SPEC §1, §14): whatever the
//! batch shape, failures, panics, lost invocations and interrupts, every
//! call gets exactly one result, results leave in call order, the batch
//! reports done, and quiescence is reached.

mod common;

use std::sync::Arc;
use std::time::Duration;

use baton::actors::testkit;
use baton::actors::InjectedFault;
use baton::{Engine, Event, InterruptKind, Outcome, SiblingPolicy, ToolUse};
use proptest::prelude::*;
use serde_json::json;

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
    /// Calls are added in chunks of this size, with a pause between chunks.
    chunk: usize,
    pause_ms: u64,
    /// Interrupt after this many chunks (if any), and of which kind.
    interrupt: Option<(usize, InterruptKind)>,
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
        1usize..8,
        0u64..4,
        prop::option::of((
            0usize..6,
            prop_oneof![Just(InterruptKind::Cancel), Just(InterruptKind::NewMessage)],
        )),
        prop_oneof![
            Just(SiblingPolicy::ShellError),
            Just(SiblingPolicy::MutatingShellError),
            Just(SiblingPolicy::Off)
        ],
        1usize..12,
    )
        .prop_map(
            |(calls, chunk, pause_ms, interrupt, policy, cap)| BatchSpec {
                calls,
                chunk,
                pause_ms,
                interrupt,
                policy,
                cap,
            },
        )
}

fn to_use(i: usize, c: &CallSpec) -> ToolUse {
    let id = format!("f{}-{i}", c.fault);
    let input = json!({
        "ms": c.ms, "safe": c.safe, "fail": c.fail, "panic": c.panic, "cmd": "make all"
    });
    ToolUse::new(id, c.tool, input)
}

async fn run_case(spec: BatchSpec, state: std::path::PathBuf) -> Result<(), TestCaseError> {
    let engine = Engine::builder(testkit::pool())
        .cwd(&state)
        .state_dir(&state)
        .max_concurrency(spec.cap)
        .sibling_policy(spec.policy)
        .fault_hook(Arc::new(|call: &ToolUse| {
            if call.id.starts_with("f1-") {
                InjectedFault::Panic
            } else if call.id.starts_with("f2-") {
                InjectedFault::Kill
            } else if call.id.starts_with("f3-") {
                InjectedFault::PanicCoordinator
            } else {
                InjectedFault::None
            }
        }))
        .allow_all_unsafe()
        .build()
        .unwrap();
    let mut batch = engine.open_batch().await.unwrap();
    let uses: Vec<ToolUse> = spec
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| to_use(i, c))
        .collect();
    let mut interrupted_at = None;
    // After a coordinator failure the batch is gone: later adds are refused
    // (the host learns it from `add`), and only the calls it took count.
    let mut accepted = uses.len();
    'feed: for (n, chunk) in uses.chunks(spec.chunk).enumerate() {
        if let Some((at, kind)) = spec.interrupt {
            if at == n {
                batch.interrupt(kind);
                interrupted_at = Some(n * spec.chunk);
            }
        }
        for (k, c) in chunk.iter().enumerate() {
            if batch.add(c.clone()).is_err() {
                accepted = n * spec.chunk + k;
                break 'feed;
            }
        }
        if spec.pause_ms > 0 {
            tokio::time::sleep(Duration::from_millis(spec.pause_ms)).await;
        }
    }
    batch.end();
    if let Some((_, kind)) = spec.interrupt {
        // Interrupting after the end is allowed and changes nothing for
        // calls that already have results.
        batch.interrupt(kind);
    }
    let mut results = Vec::new();
    let mut done = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), batch.next_event())
            .await
            .map_err(|_| TestCaseError::fail("no event for 20 s"))?;
        match event {
            Some(Event::Result { index, result }) => results.push((index, result)),
            Some(Event::Done(summary)) => {
                done = Some(summary);
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    prop_assert!(done.is_some(), "no done event");
    let uses = &uses[..accepted];
    prop_assert_eq!(done.unwrap().calls, uses.len());
    prop_assert_eq!(results.len(), uses.len());
    for (pos, (index, result)) in results.iter().enumerate() {
        prop_assert_eq!(*index, pos);
        prop_assert_eq!(&result.call_id, &uses[pos].id);
    }
    // Calls added after an interrupt (of either kind) never started.
    if let Some(from) = interrupted_at {
        for (_, r) in results.iter().skip(from) {
            prop_assert!(
                r.outcome == Outcome::Cancelled { started: false },
                "{} added after the interrupt: {:?}",
                r.call_id,
                r.outcome
            );
        }
    }
    tokio::time::timeout(Duration::from_secs(10), batch.quiescent())
        .await
        .map_err(|_| TestCaseError::fail("no quiescence"))?;
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

/// The injected panics are expected; keep them out of the test output while
/// still printing any other panic.
fn quiet_injected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info.to_string();
            if !(text.contains("injected") || text.contains("probe asked to panic")) {
                default(info);
            }
        }));
    });
}
