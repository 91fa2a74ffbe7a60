//! The central invariant with real things (issue 9): random batches of real
//! shell calls (process trees with background jobs, `setsid`, `set -m`),
//! PreToolUse hooks that hang, approvals answered late, denied or never,
//! interrupts landing anywhere, concurrent batches, dropped batch handles
//! and engine shutdown. Every call gets exactly one result, in order; the
//! batch says done and nothing follows it; outcomes match what happened;
//! and after every case no process of it is left running.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::hooks::ToolNameMatcher;
use baton::engine::{Approval, CommandHook, HookEvent, HookRegistry, Settings};
use baton::{Engine, Event, InterruptKind, Outcome, ToolUse};
use baton_test_support::procs;
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Copy, Debug)]
enum Kind {
    True,
    Fail,
    /// A process tree that outlives nothing: `sleep & setsid sleep & …`.
    Tree,
    Sleep,
    /// Needs approval (the settings ask for `Glob`).
    Asks,
    Unknown,
}

#[derive(Clone, Copy, Debug)]
enum Answer {
    Allow,
    /// Allow and remember the suggested rule for the session.
    Remember,
    Deny,
    /// Deny and interrupt the batch.
    DenyInterrupt,
    Never,
}

#[derive(Clone, Copy, Debug)]
enum End {
    /// Nothing: the batch runs to its end.
    Natural,
    Interrupt(u64),
    DropHandle(u64),
    Shutdown(u64),
}

#[derive(Clone, Debug)]
struct Case {
    batches: Vec<Vec<Kind>>,
    hanging_hook: bool,
    answer: Answer,
    end: End,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::True),
        2 => Just(Kind::Fail),
        2 => Just(Kind::Tree),
        6 => Just(Kind::Sleep),
        3 => Just(Kind::Asks),
        2 => Just(Kind::Unknown),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(prop::collection::vec(kind(), 0..5), 1..3),
        prop::bool::weighted(0.15),
        prop_oneof![
            Just(Answer::Allow),
            Just(Answer::Remember),
            Just(Answer::Deny),
            Just(Answer::DenyInterrupt),
            Just(Answer::Never),
        ],
        prop_oneof![
            2 => Just(End::Natural),
            3 => (0u64..40).prop_map(End::Interrupt),
            1 => (0u64..40).prop_map(End::DropHandle),
            1 => (0u64..40).prop_map(End::Shutdown),
        ],
    )
        .prop_map(|(batches, hanging_hook, answer, end)| {
            // A hook that hangs, or a question never answered, needs an
            // ending from outside.
            let stuck = hanging_hook || matches!(answer, Answer::Never);
            // (Dropping the handle of an ended batch lets it run on, so it
            // does not end a wait either.)
            let end = match end {
                End::Natural | End::DropHandle(_) if stuck => End::Interrupt(20),
                e => e,
            };
            Case {
                batches,
                hanging_hook,
                answer,
                end,
            }
        })
}

fn input(kind: Kind, needle: &str, dir: &std::path::Path) -> (&'static str, serde_json::Value) {
    match kind {
        Kind::True => ("Bash", json!({"command": "true"})),
        Kind::Fail => ("Bash", json!({"command": "exit 3"})),
        Kind::Tree => (
            "Bash",
            json!({"command": format!(
                "sleep {needle} & setsid sleep {needle} & (set -m; sleep {needle} &); sleep 0.05; echo tree",
            )}),
        ),
        Kind::Sleep => ("Sleep", json!({"duration_ms": 5})),
        Kind::Asks => ("Glob", json!({"pattern": "*.none", "path": dir})),
        Kind::Unknown => ("Nope", json!({})),
    }
}

fn expected(kind: Kind, answer: Answer) -> Outcome {
    match (kind, answer) {
        (Kind::Fail, _) => Outcome::ToolError,
        (Kind::Unknown, _) => Outcome::UnknownTool,
        (Kind::Asks, Answer::Deny | Answer::DenyInterrupt) => Outcome::Denied,
        _ => Outcome::Success,
    }
}

async fn run_case(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(
        dir.path().join("settings.json"),
        r#"{"permissions": {"allow": ["Bash"], "ask": ["Glob"]}}"#,
    )
    .map_err(|e| e.to_string())?;
    let settings = Settings::load(dir.path(), Some(&dir.path().join("settings.json")))
        .map_err(|e| e.to_string())?;
    let needle = procs::marker("30.");
    let mut hooks = Vec::new();
    if case.hanging_hook {
        hooks.push(Arc::new(
            CommandHook::new(
                HookEvent::PreToolUse,
                ToolNameMatcher::parse("Bash").map_err(|e| e.to_string())?,
                format!("sleep {needle} & sleep {needle}; wait"),
                dir.path(),
            )
            .with_timeout(Duration::from_secs(600)),
        ) as Arc<dyn baton::engine::Hook>);
    }
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&*settings.policy)
            .map_err(|e| e.to_string())?,
    )
    .cwd(dir.path())
    .state_dir(dir.path().join(".state"))
    .policy(settings.policy.clone() as Arc<dyn baton::engine::PermissionPolicy>)
    .hooks(HookRegistry::new(hooks))
    .host_approvals(true)
    .build()
    .expect("the engine builds");

    let mut handles = Vec::new();
    for (b, kinds) in case.batches.iter().enumerate() {
        let batch = engine.open_batch().await.map_err(|e| e.to_string())?;
        for (i, kind) in kinds.iter().enumerate() {
            let (name, input) = input(*kind, &needle, dir.path());
            batch
                .add(ToolUse::new(format!("b{b}c{i}"), name, input))
                .map_err(|e| e.to_string())?;
        }
        batch.end();
        handles.push(batch.split());
    }
    let (ends, streams): (Vec<_>, Vec<_>) = handles.into_iter().unzip();
    let readers: Vec<_> = streams
        .into_iter()
        .zip(case.batches.iter().cloned())
        .map(|(mut events, kinds)| {
            let answer = case.answer;
            tokio::spawn(async move {
                use futures::StreamExt;
                let mut results = Vec::new();
                let mut done = false;
                let mut after_done = 0;
                let mut kept = Vec::new();
                while let Some(e) = tokio::time::timeout(Duration::from_secs(30), events.next())
                    .await
                    .map_err(|_| format!("stream stalled; results so far {results:?}"))?
                {
                    if done {
                        after_done += 1;
                        continue;
                    }
                    match e {
                        Event::Result { index, result } => results.push((index, result)),
                        Event::Done(s) => {
                            if s.calls != kinds.len() {
                                return Err(format!("done says {} calls", s.calls));
                            }
                            done = true;
                        }
                        Event::PermissionRequest(p) => match answer {
                            Answer::Allow => {
                                p.answer(Approval::Allow);
                            }
                            Answer::Remember => {
                                p.answer(Approval::AllowWith {
                                    updated_input: None,
                                    remember: true,
                                });
                            }
                            Answer::Deny => {
                                p.answer(Approval::Deny { reason: None });
                            }
                            Answer::DenyInterrupt => {
                                p.answer(Approval::DenyAndInterrupt { reason: None });
                            }
                            Answer::Never => kept.push(p),
                        },
                        _ => {}
                    }
                }
                if !done || after_done > 0 {
                    return Err(format!("done: {done}, lines after done: {after_done}"));
                }
                Ok::<_, String>(results)
            })
        })
        .collect();

    let mut ends: Vec<Option<baton::BatchHandle>> = ends.into_iter().map(Some).collect();
    let interrupted = match case.end {
        End::Natural => false,
        End::Interrupt(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            for h in ends.iter().flatten() {
                h.interrupt(InterruptKind::Cancel);
            }
            true
        }
        End::DropHandle(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ends.clear();
            true
        }
        End::Shutdown(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            engine.shutdown();
            true
        }
    };
    for (reader, kinds) in readers.into_iter().zip(&case.batches) {
        let results = reader.await.map_err(|e| e.to_string())??;
        if results.len() != kinds.len() {
            return Err(format!(
                "{} results for {} calls",
                results.len(),
                kinds.len()
            ));
        }
        // Deny-and-interrupt stops the batch the question came from.
        let interrupted = interrupted
            || (matches!(case.answer, Answer::DenyInterrupt)
                && kinds.iter().any(|k| matches!(k, Kind::Asks)));
        for (i, (index, result)) in results.iter().enumerate() {
            if *index != i {
                return Err(format!("result {i} has index {index}"));
            }
            let expect = expected(kinds[i], case.answer);
            // A failing shell call cancels its siblings (SPEC §8).
            let sibling_failed = kinds.iter().any(|k| matches!(k, Kind::Fail));
            let ok = if sibling_failed && matches!(result.outcome, Outcome::Cancelled { .. }) {
                true
            } else if interrupted {
                result.outcome == expect
                    || matches!(result.outcome, Outcome::Cancelled { .. })
                    // A stop may land inside the shell, making it fail.
                    || (matches!(kinds[i], Kind::True | Kind::Tree) && result.outcome == Outcome::ToolError)
                    || (matches!(kinds[i], Kind::Asks) && result.outcome == Outcome::Denied)
            } else {
                result.outcome == expect
            };
            if !ok {
                return Err(format!(
                    "call {i} ({:?}): {:?}, expected {expect:?}: {}",
                    kinds[i],
                    result.outcome,
                    result.text()
                ));
            }
        }
    }
    drop(ends);
    engine.shutdown();
    drop(engine);
    // Processes the trees started end with their calls (or, for jobs a
    // finished command left behind, with the session); allow the stop's
    // grace period.
    let until = Instant::now() + Duration::from_secs(5);
    while procs::running(&needle) > 0 {
        if Instant::now() > until {
            return Err(format!(
                "{} processes left running",
                procs::running(&needle)
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

/// Cases run side by side in groups of this many (each with its own
/// engine, directory and process marker): they mostly wait (sleeps,
/// interrupts at random moments, stop grace), so a group costs little more
/// wall time than one case, and CI gets 2,000 cases in about the time 500
/// took one by one. Running them together also puts several engines'
/// process trees, hooks and shutdowns on the machine at once, which is the
/// situation a host with many sessions is in.
const GROUP: usize = 4;

proptest! {
    // 500 groups of 4 = 2,000 cases by default (issue 9 asks for ≥ 2,000 in
    // CI); PROPTEST_CASES sets the number of groups. Measured: 154 s wall
    // on 2 cores shared with a load average of 9-11, of which 56 s CPU
    // (user + sys), so about a minute on 2 idle cores. Groups of 8 were no
    // faster there: the CPU, not the waiting, is the floor.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn real_batches_keep_the_invariant_and_leave_nothing(
        group in prop::collection::vec(case(), GROUP..=GROUP),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let outcomes = rt.block_on(futures::future::join_all(group.iter().map(run_case)));
        for (case, outcome) in group.iter().zip(outcomes) {
            prop_assert!(outcome.is_ok(), "{:?}: {}", case, outcome.unwrap_err());
        }
    }
}
