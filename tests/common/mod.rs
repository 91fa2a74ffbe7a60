//! Shared helpers: an engine over the testkit tools, and a batch runner that
//! records when each event arrived.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::actors::testkit::{self, Timeline};
use baton::{BatchSummary, CallResult, Engine, Event, SiblingPolicy, ToolUse};
use serde_json::Value;

pub struct Fixture {
    pub engine: Engine,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn timeline(&self) -> Arc<Timeline> {
        self.engine
            .runtime()
            .session()
            .slots()
            .get_or_default::<Timeline>()
    }
}

pub fn fixture(cap: usize, policy: SiblingPolicy) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work/sub")).unwrap();
    let engine = Engine::builder(testkit::pool())
        .cwd(dir.path().join("work"))
        .state_dir(dir.path().join("state"))
        .max_concurrency(cap)
        .sibling_policy(policy)
        .allow_all_unsafe()
        .build()
        .unwrap();
    Fixture { engine, dir }
}

pub fn call(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse::new(id, name, input)
}

/// What a batch produced, with arrival times.
#[derive(Default)]
pub struct Run {
    pub results: Vec<(usize, CallResult, Instant)>,
    pub progress: Vec<(usize, Instant)>,
    pub done: Option<BatchSummary>,
    pub started: Option<Instant>,
}

impl Run {
    pub fn ids(&self) -> Vec<String> {
        self.results.iter().map(|r| r.1.call_id.clone()).collect()
    }

    pub fn result(&self, id: &str) -> &CallResult {
        &self
            .results
            .iter()
            .find(|r| r.1.call_id == id)
            .unwrap_or_else(|| panic!("no result for {id}"))
            .1
    }

    pub fn result_time(&self, id: &str) -> Instant {
        self.results.iter().find(|r| r.1.call_id == id).unwrap().2
    }
}

/// Drains events until Done (or a generous timeout, which fails the test).
pub async fn drain(batch: &mut baton::Batch) -> Run {
    let mut run = Run {
        started: Some(Instant::now()),
        ..Default::default()
    };
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), batch.next_event())
            .await
            .expect("batch did not finish within 30 s");
        match event {
            Some(Event::Result { index, result }) => {
                run.results.push((index, *result, Instant::now()))
            }
            Some(Event::Progress { index, .. }) => run.progress.push((index, Instant::now())),
            Some(Event::Done(s)) => {
                run.done = Some(*s);
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    run
}

/// Runs `calls` as one message (all added at once, then ended).
pub async fn run_all(engine: &Engine, calls: Vec<ToolUse>) -> Run {
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let run = drain(&mut batch).await;
    tokio::time::timeout(Duration::from_secs(10), batch.quiescent())
        .await
        .expect("no quiescence");
    run
}

pub fn assert_in_order(run: &Run, n: usize) {
    let idx: Vec<usize> = run.results.iter().map(|r| r.0).collect();
    assert_eq!(idx, (0..n).collect::<Vec<_>>(), "results not in call order");
}

/// A builder over the built-in tools in `dir` (its state in `dir/.state`),
/// every permission granted: the tests that need real tools without rules.
pub fn allow_all_builder(dir: &std::path::Path) -> baton::EngineBuilder {
    let pool = baton::BuiltinConfig::default()
        .pool(&baton::engine::AllowAllUnsafe)
        .unwrap();
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join(".state"))
        .allow_all_unsafe()
}

/// Polls `what` every 25 ms for up to 20 s; whether it became true.
pub async fn wait_for(what: impl Fn() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(20);
    while !what() {
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    true
}
