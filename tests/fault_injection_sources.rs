//! The central invariant under faults from every source (issue 25): random
//! batches mixing local Bash, Bash on real `baton mcp serve --http` workers
//! (`WorkerBash`), calls to a real MCP server process, a call that asks and
//! one a rule denies, all through command hooks of every event of the batch
//! path. Faults land at random: hooks that hang, block (exit 2), are
//! killed, print garbage or are slow; MCP calls that hang, answer over the
//! size limit, write a malformed frame, crash the server, or the server
//! SIGKILLed mid-batch; the session's worker SIGKILLed or SIGSTOPped; host
//! interrupts and engine shutdowns at random moments.
//!
//! For every case: exactly one result per call, in call order, then `done`
//! and nothing after it; the batch ends within a generous bound; a call no
//! fault touched has its normal result (an interrupt may cancel it); a
//! faulted MCP call is an error, never a success; and afterwards no process
//! of the case runs (hooks, shells local and remote, the MCP server).

mod after;
mod sources;
mod verdict;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::HookEvent;
use baton::engine::{PermissionPolicy, PoolSpec, ToolPool};
use baton::{Engine, Event, InterruptKind, ToolUse};
use baton_test_support::procs;
use baton_test_support::worker::Worker;
use proptest::prelude::*;
use serde_json::json;
use sources::event_name;
use verdict::{Call, Case, End, HookFault, Kind, McpKind, Source};

use crate::support::BATON;

const TOKEN: &str = "fault-sources-token";

/// No batch may take longer, whatever fails: hooks end at 2 s, MCP calls
/// at 2 s of silence, a paused worker is noticed within about 10 s.
pub const BOUND: Duration = Duration::from_secs(60);

fn hook_fault() -> impl Strategy<Value = HookFault> {
    prop_oneof![
        Just(HookFault::Hang),
        Just(HookFault::Block),
        Just(HookFault::Crash),
        Just(HookFault::Garbage),
        Just(HookFault::Slow),
    ]
}

fn mcp_kind(faulty: u32) -> impl Strategy<Value = McpKind> {
    prop_oneof![
        4 => Just(McpKind::Echo),
        2 => Just(McpKind::Slow),
        1 => Just(McpKind::Fail),
        faulty => Just(McpKind::Hang),
        faulty => Just(McpKind::Big),
        faulty => Just(McpKind::Cut),
        faulty => Just(McpKind::Crash),
    ]
}

/// Weights of the call kinds and of hook faults per call.
#[derive(Clone, Copy)]
struct Mix {
    worker: u32,
    mcp: u32,
    mcp_faulty: u32,
    /// Failing Bash, asking Glob, denied Bash: the calls that run the
    /// PostToolUseFailure, PermissionRequest and PermissionDenied hooks.
    rare: u32,
    hook_fault: f64,
}

fn call(mix: Mix) -> impl Strategy<Value = Call> {
    let kind = prop_oneof![
        3 => Just(Kind::Bash),
        mix.rare => Just(Kind::BashFail),
        mix.worker => any::<bool>().prop_map(|long| Kind::Worker { long }),
        mix.mcp => mcp_kind(mix.mcp_faulty).prop_map(Kind::Mcp),
        mix.rare => Just(Kind::Ask),
        mix.rare => Just(Kind::Denied),
    ];
    (
        kind,
        prop::bool::weighted(mix.hook_fault),
        0usize..8,
        hook_fault(),
    )
        .prop_map(|(kind, faulted, pick, fault)| {
            let events = kind.hook_events();
            let hook = faulted.then(|| (events[pick % events.len()], fault));
            Call { kind, hook }
        })
}

fn case(mix: Mix, sources: BoxedStrategy<Source>) -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(call(mix), 1..6),
        sources,
        prop_oneof![
            3 => Just(End::Natural),
            2 => (0u64..1500).prop_map(End::Interrupt),
            1 => (0u64..1500).prop_map(End::Shutdown),
        ],
    )
        .prop_map(|(calls, source, end)| Case::new(calls, source, end))
}

fn no_source() -> BoxedStrategy<Source> {
    Just(Source::None).boxed()
}

fn mcp_sources() -> BoxedStrategy<Source> {
    prop_oneof![
        2 => Just(Source::None),
        1 => (0u64..1000).prop_map(Source::McpKill),
    ]
    .boxed()
}

fn worker_sources() -> BoxedStrategy<Source> {
    prop_oneof![
        1 => Just(Source::None),
        1 => (0u64..1200).prop_map(Source::WorkerStall),
        2 => (0u64..800).prop_map(Source::WorkerKill),
        2 => (0u64..800).prop_map(Source::WorkerPause),
    ]
    .boxed()
}

fn any_source() -> BoxedStrategy<Source> {
    prop_oneof![mcp_sources(), worker_sources()].boxed()
}

/// The call's input: its kind's command or arguments, tagged with the
/// hook fault's marker (`@<event>:<fault>@`) and the case's `needle`.
fn tool_use(case: &Case, i: usize, needle: &str, dir: &std::path::Path) -> ToolUse {
    let call = &case.calls[i];
    let mark = match call.hook {
        Some((event, fault)) => format!("@{}:{}@", event_name(event), fault.word()),
        None => String::new(),
    };
    let id = format!("c{i}");
    let (name, input) = match call.kind {
        Kind::Bash => (
            "Bash",
            json!({"command": format!("echo b{i} # {needle} {mark}")}),
        ),
        Kind::BashFail => (
            "Bash",
            json!({"command": format!("echo f{i}; exit 3 # {needle} {mark}")}),
        ),
        Kind::Worker { long } => {
            // Long enough to be running when a fault lands; past BOUND when
            // only the host's interrupt can end it (a worker fault may land
            // before the call, which then runs on the other worker).
            let pause = match long {
                false => "0.4",
                true if case.interrupted() => needle,
                true => "3",
            };
            (
                "WorkerBash",
                json!({"command": format!("sleep {pause}; echo w{i} # {needle} {mark}")}),
            )
        }
        Kind::Mcp(k) => {
            let input = match k {
                McpKind::Slow => json!({"ms": 300, "text": format!("m{i} {mark}")}),
                McpKind::Big => json!({"mb": 17, "text": mark}),
                _ => json!({"text": format!("m{i} {mark}")}),
            };
            return ToolUse::new(id, format!("mcp__faults__{}", k.tool()), input);
        }
        Kind::Ask => (
            "Glob",
            json!({"pattern": format!("nothing{mark}*.none"), "path": dir}),
        ),
        Kind::Denied => (
            "Bash",
            json!({"command": format!("touch denied{i} # {mark}")}),
        ),
    };
    ToolUse::new(id, name, input)
}

static SEQ: AtomicU64 = AtomicU64::new(0);

async fn run_case(case: &Case) -> Result<(), String> {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    // Also the length of the sleeps that hang (hooks, long remote calls):
    // longer than BOUND, so a limit that does not work shows.
    let needle = procs::marker("300.");
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path().canonicalize().map_err(|e| e.to_string())?;
    let host = dir.join("host");
    std::fs::create_dir_all(&host).map_err(|e| e.to_string())?;
    std::fs::write(
        host.join("settings.json"),
        json!({"permissions": {
            "allow": ["Bash", "WorkerBash", "mcp__faults"],
            "ask": ["Glob"],
            "deny": ["Bash(touch:*)"],
        }})
        .to_string(),
    )
    .map_err(|e| e.to_string())?;
    let settings = baton::engine::Settings::load(&host, Some(&host.join("settings.json")))
        .map_err(|e| e.to_string())?;

    let workers = [
        Worker::start(BATON, &dir.join("w0"), TOKEN),
        Worker::start(BATON, &dir.join("w1"), TOKEN),
    ];
    let key = format!("faults-{seq}");
    let target = sources::first_worker(&key, workers.len());
    let target_pid = workers[target].child.id();
    let urls_of: Vec<String> = workers.iter().map(|w| w.url.clone()).collect();
    let urls = urls_of.clone();
    let clients = sources::mcp(&host, &needle).await?;
    let mcp_pid = clients.servers()[0]
        .pid()
        .ok_or("the MCP server has no pid")?;
    let (mut others, _) = clients.tools();
    others.push(sources::worker_bash(urls, TOKEN, &key)?);
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default()
                .tools()
                .map_err(|e| e.to_string())?,
            others,
            ..Default::default()
        },
        &*settings.policy,
    );
    let engine = Engine::builder(pool)
        .cwd(&host)
        .state_dir(host.join(".state"))
        .policy(settings.policy.clone() as Arc<dyn PermissionPolicy>)
        .hooks(sources::hooks(&host, &needle)?)
        .mcp(Arc::clone(&clients))
        .host_approvals(true)
        .build()
        .map_err(|e| e.to_string())?;
    drop(clients);

    let started = Instant::now();
    let batch = engine.open_batch().await.map_err(|e| e.to_string())?;
    for i in 0..case.calls.len() {
        batch
            .add(tool_use(case, i, &needle, &host))
            .map_err(|e| e.to_string())?;
    }
    batch.end();
    let (handle, mut events) = batch.split();
    let n = case.calls.len();
    let reader = tokio::spawn(async move {
        use futures::StreamExt;
        let mut results = Vec::new();
        let mut done = false;
        let mut after_done = 0;
        while let Some(e) = tokio::time::timeout(BOUND, events.next())
            .await
            .map_err(|_| format!("no event for {BOUND:?}; results so far {results:?}"))?
        {
            match e {
                _ if done => after_done += 1,
                Event::Result { index, result } => {
                    if std::env::var_os("FAULTS_VERBOSE").is_some() {
                        eprintln!("result {index} at {:?}", started.elapsed());
                    }
                    results.push((index, *result))
                }
                Event::Done(s) if s.calls != n => {
                    return Err(format!("done says {} calls of {n}", s.calls))
                }
                Event::Done(_) => done = true,
                Event::PermissionRequest(p) => {
                    p.answer(baton::Approval::Allow);
                }
                _ => {}
            }
        }
        if !done || after_done > 0 {
            return Err(format!("done: {done}, events after done: {after_done}"));
        }
        Ok(results)
    });

    let fault = case.source;
    let injector = tokio::spawn(async move {
        let (ms, pid, sig) = match fault {
            Source::None => return,
            Source::McpKill(ms) => (ms, mcp_pid as u32, "-KILL"),
            Source::WorkerKill(ms) => (ms, target_pid, "-KILL"),
            Source::WorkerPause(ms) | Source::WorkerStall(ms) => (ms, target_pid, "-STOP"),
        };
        tokio::time::sleep(Duration::from_millis(ms)).await;
        sources::signal(pid, sig);
        if matches!(fault, Source::WorkerStall(_)) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            sources::signal(pid, "-CONT");
        }
    });
    match case.end {
        End::Natural => {}
        End::Interrupt(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            handle.interrupt(InterruptKind::Cancel);
        }
        End::Shutdown(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            engine.shutdown();
        }
    }
    let read = reader.await.map_err(|e| e.to_string());
    let took = started.elapsed();
    let _ = injector.await;
    drop(handle);
    let after = match (&read, case.end) {
        (Ok(Ok(_)), End::Natural | End::Interrupt(_)) => {
            Some(after::next_batches(&engine, case, &needle).await)
        }
        _ => None,
    };
    engine.shutdown();
    drop(engine);
    // Resume a paused worker so that killing it (on drop) leaves nothing.
    if matches!(case.source, Source::WorkerPause(_)) {
        sources::signal(target_pid, "-CONT");
    }
    drop(workers);
    let results = read??;
    if std::env::var_os("FAULTS_VERBOSE").is_some() {
        eprintln!("case {seq} in {took:?} (worker {target} of {urls_of:?}): {case:?}");
        for (i, r) in &results {
            let text: String = r.text().chars().take(200).collect();
            eprintln!("  {i}: {:?} {text:?}", r.outcome);
        }
    }
    if took > BOUND {
        return Err(format!("the batch took {took:?}"));
    }
    verdict::check(case, &results)?;
    if let Some(after) = after {
        let (first, second) = after?;
        let lost = &urls_of[target];
        verdict::check_after(case, lost, &first, second.as_ref())?;
    }
    // Hooks, shells (here and on the workers) and the MCP server end with
    // the batch or the engine; allow the stop's grace periods.
    let until = Instant::now() + Duration::from_secs(8);
    while procs::running(&needle) > 0 {
        if Instant::now() > until {
            return Err(format!(
                "{} processes left running: {}",
                procs::running(&needle),
                procs::listing(&needle)
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Cases of one group run side by side, each with its own engine, workers,
/// server and marker: they mostly wait (hook and MCP limits, health
/// checks), and several engines' faults at once is what a busy host sees.
const GROUP: usize = 4;

fn groups() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn run_group(group: &[Case]) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let outcomes = rt.block_on(futures::future::join_all(group.iter().map(run_case)));
    for (case, outcome) in group.iter().zip(outcomes) {
        prop_assert!(outcome.is_ok(), "{:?}: {}", case, outcome.unwrap_err());
    }
    Ok(())
}

const HOOKS: Mix = Mix {
    rare: 3,
    worker: 1,
    mcp: 2,
    mcp_faulty: 0,
    hook_fault: 0.6,
};
const MCP: Mix = Mix {
    rare: 1,
    worker: 1,
    mcp: 6,
    mcp_faulty: 1,
    hook_fault: 0.15,
};
const REMOTE: Mix = Mix {
    rare: 1,
    worker: 5,
    mcp: 1,
    mcp_faulty: 0,
    hook_fault: 0.15,
};
const ALL: Mix = Mix {
    rare: 1,
    worker: 2,
    mcp: 3,
    mcp_faulty: 1,
    hook_fault: 0.3,
};

proptest! {
    // PROPTEST_CASES sets the number of groups of 4 cases (default 3).
    #![proptest_config(ProptestConfig {
        cases: groups(),
        failure_persistence: None,
        // A failing group is rerun while shrinking, and its faults take
        // seconds each: stop shrinking after two minutes.
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hooks_of_every_event_as_fault_sources(
        group in prop::collection::vec(case(HOOKS, no_source()), GROUP..=GROUP),
    ) {
        run_group(&group)?;
    }

    #[test]
    fn mcp_servers_as_fault_sources(
        group in prop::collection::vec(case(MCP, mcp_sources()), GROUP..=GROUP),
    ) {
        run_group(&group)?;
    }

    #[test]
    fn remote_workers_as_fault_sources(
        group in prop::collection::vec(case(REMOTE, worker_sources()), GROUP..=GROUP),
    ) {
        run_group(&group)?;
    }

    #[test]
    fn every_source_at_once(
        group in prop::collection::vec(case(ALL, any_source()), GROUP..=GROUP),
    ) {
        run_group(&group)?;
    }
}

/// Every event of the batch path meets every hook fault, in every run:
/// one case per fault, one call per event (the failing call last, so that
/// it cancels no sibling before its hooks ran).
#[test]
fn every_event_meets_every_fault() {
    use HookEvent::*;
    let faults = [
        HookFault::Hang,
        HookFault::Block,
        HookFault::Crash,
        HookFault::Garbage,
        HookFault::Slow,
    ];
    let cases: Vec<Case> = faults
        .iter()
        .map(|&f| {
            let calls = [
                (Kind::Bash, PreToolUse),
                (Kind::Bash, PostToolUse),
                (Kind::Ask, PermissionRequest),
                (Kind::Denied, PermissionDenied),
                (Kind::Bash, PostToolBatch),
                (Kind::BashFail, PostToolUseFailure),
            ]
            .into_iter()
            .map(|(kind, event)| Call {
                kind,
                hook: Some((event, f)),
            })
            .collect();
            Case::new(calls, Source::None, End::Natural)
        })
        .collect();
    if let Err(e) = run_group(&cases) {
        panic!("{e}");
    }
}
