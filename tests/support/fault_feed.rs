//! What the fault-injection property tests share: the engine with faults
//! chosen by call id, feeding a batch in chunks with an optional interrupt,
//! reading its events to `done`, and the invariants every case must keep
//! (one result per accepted call, in call order; calls added after an
//! interrupt never start). Used by `fault_injection` and
//! `fault_injection_nested`.

use std::time::Duration;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use baton::actors::{testkit, InjectedFault};
use baton::{
    Batch, BatchSummary, CallResult, Engine, Event, InterruptKind, Outcome, SiblingPolicy, ToolUse,
};
use proptest::prelude::*;

/// An engine over the testkit's tools in `state`, whose calls fail as their
/// ids say: `f1-…` the invocation panics, `f2-…` it is killed, `f3-…` the
/// coordinator panics (nested calls too: the hook sees every level).
pub fn fault_engine(
    state: &Path,
    cap: usize,
    policy: SiblingPolicy,
) -> Result<Engine, TestCaseError> {
    Engine::builder(testkit::pool())
        .cwd(state)
        .state_dir(state)
        .max_concurrency(cap)
        .sibling_policy(policy)
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
        .map_err(|e| TestCaseError::fail(e.to_string()))
}

/// The injected panics are expected; keep them out of the test output while
/// still printing any other panic.
pub fn quiet_injected_panics() {
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

/// How a case feeds its calls.
#[derive(Clone, Debug)]
pub struct Feeding {
    /// Calls are added in chunks of this size, with a pause between chunks.
    pub chunk: usize,
    pub pause_ms: u64,
    /// Interrupt after this many chunks (if any), and of which kind.
    pub interrupt: Option<(usize, InterruptKind)>,
}

/// Chunks of a size in `chunks`, pauses of 0–3 ms, and maybe an interrupt
/// of either kind after a number of chunks in `interrupt_after`.
pub fn feeding(
    chunks: Range<usize>,
    interrupt_after: Range<usize>,
) -> impl Strategy<Value = Feeding> {
    (
        chunks,
        0u64..4,
        prop::option::of((
            interrupt_after,
            prop_oneof![Just(InterruptKind::Cancel), Just(InterruptKind::NewMessage)],
        )),
    )
        .prop_map(|(chunk, pause_ms, interrupt)| Feeding {
            chunk,
            pause_ms,
            interrupt,
        })
}

pub fn sibling_policy() -> impl Strategy<Value = SiblingPolicy> {
    prop_oneof![
        Just(SiblingPolicy::ShellError),
        Just(SiblingPolicy::MutatingShellError),
        Just(SiblingPolicy::Off)
    ]
}

/// What feeding achieved.
pub struct Fed {
    /// Calls the batch took: after a coordinator failure the batch is gone
    /// and later adds are refused (the host learns it from `add`).
    pub accepted: usize,
    /// The index of the first call added after the interrupt.
    pub interrupted_at: Option<usize>,
}

/// Adds `uses` to `batch` as `how` says, then ends it.
pub async fn feed(batch: &Batch, uses: &[ToolUse], how: &Feeding) -> Fed {
    let mut fed = Fed {
        accepted: uses.len(),
        interrupted_at: None,
    };
    'feed: for (n, chunk) in uses.chunks(how.chunk).enumerate() {
        if let Some((at, kind)) = how.interrupt {
            if at == n {
                batch.interrupt(kind);
                fed.interrupted_at = Some(n * how.chunk);
            }
        }
        for (k, c) in chunk.iter().enumerate() {
            if batch.add(c.clone()).is_err() {
                fed.accepted = n * how.chunk + k;
                break 'feed;
            }
        }
        if how.pause_ms > 0 {
            tokio::time::sleep(Duration::from_millis(how.pause_ms)).await;
        }
    }
    batch.end();
    fed
}

/// Every result until `done` (each event within `patience`), and the
/// summary; fails when `done` never comes.
pub async fn results_until_done(
    batch: &mut Batch,
    patience: Duration,
) -> Result<(Vec<(usize, CallResult)>, BatchSummary), TestCaseError> {
    let mut results = Vec::new();
    loop {
        let event = tokio::time::timeout(patience, batch.next_event())
            .await
            .map_err(|_| TestCaseError::fail(format!("no event for {patience:?}")))?;
        match event {
            Some(Event::Result { index, result }) => results.push((index, *result)),
            Some(Event::Done(summary)) => return Ok((results, *summary)),
            Some(_) => {}
            None => return Err(TestCaseError::fail("no done event")),
        }
    }
}

/// One result per accepted call, in call order; calls added after an
/// interrupt (of either kind) never started.
pub fn check_results(
    results: &[(usize, CallResult)],
    uses: &[ToolUse],
    fed: &Fed,
) -> Result<(), TestCaseError> {
    let uses = &uses[..fed.accepted];
    prop_assert_eq!(results.len(), uses.len());
    for (pos, (index, result)) in results.iter().enumerate() {
        prop_assert_eq!(*index, pos);
        prop_assert_eq!(&result.call_id, &uses[pos].id);
    }
    if let Some(from) = fed.interrupted_at {
        for (_, r) in results.iter().skip(from) {
            prop_assert!(
                r.outcome == Outcome::Cancelled { started: false },
                "{} added after the interrupt: {:?}",
                r.call_id,
                r.outcome
            );
        }
    }
    Ok(())
}

/// Every invocation (and the processes it started) is gone, within 10 s.
pub async fn quiescent(batch: &Batch) -> Result<(), TestCaseError> {
    tokio::time::timeout(Duration::from_secs(10), batch.quiescent())
        .await
        .map_err(|_| TestCaseError::fail("no quiescence"))
}
