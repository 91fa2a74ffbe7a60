//! Subagent trees driven by a scripted model loop (SPEC §15): real engines,
//! real Bash processes, the Agent tool and the host's runner.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::subagent::{AgentDefinition, SubagentLimits, SubagentService};
use baton::engine::{AllowAllUnsafe, Outcome, PermissionMode};
use baton::{Engine, Event, InterruptKind};
use baton_test_support::{procs, scripted};
use baton_tools::agent::AgentCatalog;
use common::{assert_in_order, call, drain, Run};
use scripted::*;
use serde_json::json;

use crate::common;

struct Setup {
    engine: Engine,
    runner: Arc<Scripted>,
    dir: tempfile::TempDir,
}

fn setup_with(runner: Arc<Scripted>, limits: SubagentLimits, catalog: AgentCatalog) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let pool = baton::BuiltinConfig {
        agents: catalog,
        ..Default::default()
    }
    .pool(&AllowAllUnsafe)
    .unwrap();
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .subagent_service(SubagentService::with_limits(runner.clone(), limits))
        .allow_all_unsafe()
        .build()
        .expect("the engine builds");
    Setup {
        engine,
        runner,
        dir,
    }
}

fn setup() -> Setup {
    setup_with(
        Scripted::new(),
        SubagentLimits::default(),
        AgentCatalog::builtin(),
    )
}

async fn run(engine: &Engine, calls: Vec<baton::ToolUse>) -> Run {
    common::run_all(engine, calls).await
}

fn to_call(v: &serde_json::Value) -> baton::ToolUse {
    call(
        v["id"].as_str().unwrap(),
        v["name"].as_str().unwrap(),
        v["input"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_agent_calls_run_side_by_side() {
    let s = setup();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            to_call(&agent(
                &format!("a{i}"),
                script(
                    vec![bash(&format!("b{i}"), &format!("sleep 2; echo leaf{i}"))],
                    "ok",
                ),
            ))
        })
        .collect();
    let t0 = Instant::now();
    let run = run(&s.engine, calls).await;
    // Three two-second subagents together take well under six seconds (the
    // margin is wide so that a loaded machine cannot fail it).
    assert!(
        t0.elapsed() < Duration::from_millis(5000),
        "{:?}",
        t0.elapsed()
    );
    assert_in_order(&run, 3);
    for i in 0..3 {
        let r = run.result(&format!("a{i}"));
        assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
        let text = r.text();
        assert!(text.contains(&format!("leaf{i}")), "{text}");
        assert!(
            text.contains("tool_uses: 1") && text.contains("total_tokens: 120"),
            "{text}"
        );
    }
    let records = s.runner.all();
    assert_eq!(records.len(), 3);
    assert!(records
        .iter()
        .all(|r| r.depth == 1 && r.agent_type == "general-purpose"));
}

/// Two agents, each with two agents, each with one agent running two Bash
/// calls (writers, so one runs and one waits): three levels of subagents,
/// four real sleeping processes at the leaves. Cancelling the root message answers every call at every level,
/// in order, and leaves no process behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_three_tree_is_cancelled_from_the_root() {
    let s = setup();
    let pidfile = s.dir.path().join("pids");
    let leaf = |tag: &str| {
        script(
            vec![
                bash(
                    &format!("{tag}-x"),
                    &format!("echo $$ >> {}; exec sleep 30", pidfile.display()),
                ),
                bash(
                    &format!("{tag}-y"),
                    &format!("echo $$ >> {}; exec sleep 30", pidfile.display()),
                ),
            ],
            "leaf",
        )
    };
    let mid = |tag: &str| script(vec![agent(&format!("{tag}-l"), leaf(tag))], "mid");
    let top = |tag: &str| {
        script(
            vec![
                agent(&format!("{tag}-m1"), mid(&format!("{tag}1"))),
                agent(&format!("{tag}-m2"), mid(&format!("{tag}2"))),
            ],
            "top",
        )
    };
    let mut batch = s.engine.open_batch().await.unwrap();
    batch.add(to_call(&agent("A", top("A")))).unwrap();
    batch.add(to_call(&agent("B", top("B")))).unwrap();
    batch.end();
    let deadline = Instant::now() + Duration::from_secs(20);
    while procs::pids_in(&pidfile).len() < 4 {
        assert!(
            Instant::now() < deadline,
            "leaves did not start: {:?}",
            procs::pids_in(&pidfile)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let t0 = Instant::now();
    batch.interrupt(InterruptKind::Cancel);
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_in_order(&run, 2);
    for id in ["A", "B"] {
        assert!(run.result(id).is_error, "{}", run.result(id).text());
    }
    let left = procs::survivors(&procs::pids_in(&pidfile)).await;
    assert!(left.is_empty(), "processes left: {left:?}");
    let records = s.runner.all();
    assert_eq!(records.len(), 2 + 4 + 4);
    for r in &records {
        assert!(r.finished, "{} never finished", r.agent_id);
        assert_eq!(r.chain.len(), r.depth);
        for batch in &r.batches {
            for (sent, got, is_error, outcome) in batch {
                assert_eq!(sent, got, "{}: results out of order", r.agent_id);
                assert!(is_error, "{} {got}", r.agent_id);
                assert!(
                    matches!(outcome, Outcome::Cancelled { .. }),
                    "{got}: {outcome:?}"
                );
            }
            assert_eq!(batch.len(), if r.depth == 3 { 2 } else { batch.len() });
        }
    }
    let leaves: Vec<_> = records.iter().filter(|r| r.depth == 3).collect();
    assert_eq!(leaves.len(), 4);
    assert!(leaves
        .iter()
        .all(|r| r.batches.len() == 1 && r.batches[0].len() == 2));
    assert!(leaves
        .iter()
        .all(|r| !r.tools.contains(&"Agent".to_string())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_depth_limit_is_an_error_naming_it() {
    let s = setup_with(
        Scripted::new(),
        SubagentLimits {
            max_depth: 1,
            max_concurrent: 20,
        },
        AgentCatalog::builtin(),
    );
    let inner = script(vec![agent("deeper", script(vec![], "never"))], "outer");
    let run = run(&s.engine, vec![to_call(&agent("a", inner))]).await;
    let text = run.result("a").text();
    assert_eq!(run.result("a").outcome, Outcome::Success, "{text}");
    assert!(
        text.contains("depth limit") && text.contains("BATON_MAX_SUBAGENT_DEPTH"),
        "{text}"
    );
    let records = s.runner.all();
    assert_eq!(records.len(), 1, "the second level must not run");
    assert!(!records[0].tools.contains(&"Agent".to_string()));
    assert!(records[0].batches[0][0].2, "the deeper call is an error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_concurrency_limit_is_an_error_naming_it() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let s = setup_with(
        Scripted::gated(gate.clone()),
        SubagentLimits {
            max_depth: 3,
            max_concurrent: 2,
        },
        AgentCatalog::builtin(),
    );
    let mut first = s.engine.open_batch().await.unwrap();
    first
        .add(to_call(&agent("a1", script(vec![], "one"))))
        .unwrap();
    first
        .add(to_call(&agent("a2", script(vec![], "two"))))
        .unwrap();
    first.end();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.runner.started.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(
            Instant::now() < deadline,
            "the first two agents did not start"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Two subagents run (held at the gate): a third is refused at once.
    let third = run(
        &s.engine,
        vec![to_call(&agent("a3", script(vec![], "three")))],
    )
    .await;
    let r = third.result("a3");
    assert!(r.is_error);
    assert!(
        r.text().contains("BATON_MAX_CONCURRENT_SUBAGENTS") && r.text().contains("at most 2"),
        "{}",
        r.text()
    );
    gate.add_permits(2);
    let done = drain(&mut first).await;
    assert_eq!(done.result("a1").outcome, Outcome::Success);
    assert_eq!(done.result("a2").outcome, Outcome::Success);
    // The slots were freed: a new agent runs.
    gate.add_permits(1);
    let again = run(
        &s.engine,
        vec![to_call(&agent("a4", script(vec![], "four")))],
    )
    .await;
    assert_eq!(again.result("a4").outcome, Outcome::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_never_touches_its_parent() {
    let s = setup();
    let failing = json!({"steps": [], "fail": "the model gave up"}).to_string();
    // Inside this child a failing command cancels its sibling (SPEC §8),
    // and that stays inside.
    let shell_fail = script(
        vec![bash("bad", "exit 3"), bash("slow", "sleep 5; echo late")],
        "saw a failure",
    );
    let run = run(
        &s.engine,
        vec![
            to_call(&agent("fails", failing)),
            to_call(&agent("inner-fail", shell_fail)),
            call(
                "sibling",
                "Bash",
                json!({"command": "sleep 0.5; echo parent-ok"}),
            ),
        ],
    )
    .await;
    assert_in_order(&run, 3);
    let fails = run.result("fails");
    assert!(
        fails.is_error && fails.outcome == Outcome::ToolError,
        "{:?}",
        fails.outcome
    );
    assert!(
        fails.text().contains("the model gave up"),
        "{}",
        fails.text()
    );
    let inner = run.result("inner-fail");
    assert_eq!(inner.outcome, Outcome::Success, "{}", inner.text());
    assert!(inner.text().contains("Bash(exit 3)"), "{}", inner.text());
    let sibling = run.result("sibling");
    assert_eq!(sibling.outcome, Outcome::Success, "{}", sibling.text());
    assert!(sibling.text().contains("parent-ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_restricts_tools_and_mode() {
    let mut reader = AgentDefinition::new("reader", "Reads files.");
    reader.tools = Some(vec!["Read".into(), "Grep".into()]);
    reader.permission_mode = Some(PermissionMode::BypassPermissions);
    reader.model = Some("haiku".into());
    reader.system_prompt = "You read.".into();
    let s = setup_with(
        Scripted::new(),
        SubagentLimits::default(),
        AgentCatalog::builtin().with(reader),
    );
    std::fs::write(s.dir.path().join("f.txt"), "hello\n").unwrap();
    let tries = script(
        vec![
            json!({"id": "r", "name": "Read", "input": {"file_path": s.dir.path().join("f.txt")}}),
            bash("b", "echo should-not-run"),
        ],
        "read",
    );
    let explore = script(
        vec![
            json!({"id": "w", "name": "Write", "input": {"file_path": s.dir.path().join("x"), "content": "x"}}),
        ],
        "explored",
    );
    let run = run(
        &s.engine,
        vec![
            to_call(&agent_typed("a", "READER", tries)),
            to_call(&agent_typed("e", "explore", explore)),
        ],
    )
    .await;
    assert_eq!(run.result("a").outcome, Outcome::Success);
    let records = s.runner.all();
    let reader = records.iter().find(|r| r.agent_type == "reader").unwrap();
    assert_eq!(reader.tools, vec!["Grep", "Read"]);
    // The definition's own mode (Claude Code's precedence: only a
    // bypassPermissions parent overrides it).
    assert_eq!(reader.mode, PermissionMode::BypassPermissions);
    assert_eq!(reader.model.as_deref(), Some("haiku"));
    assert_eq!(reader.system_prompt, "You read.");
    let b = &reader.batches[0];
    assert!(!b[0].2, "Read runs");
    assert!(b[1].2, "Bash is not in the reader's pool");
    assert!(
        run.result("a").text().contains("no tool named `Bash`"),
        "{}",
        run.result("a").text()
    );
    let explorer = records.iter().find(|r| r.agent_type == "Explore").unwrap();
    assert!(explorer
        .tools
        .iter()
        .all(|t| baton_tools::agent::READ_ONLY_TOOLS.contains(&t.as_str())));
    assert_eq!(explorer.mode, PermissionMode::Plan);
    assert!(explorer.batches[0][0].2, "Write is refused to the explorer");
    assert!(!s.dir.path().join("x").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_types_and_missing_runners_are_clear_errors() {
    let s = setup();
    let run = run(
        &s.engine,
        vec![to_call(&agent_typed(
            "u",
            "code-reviewer",
            script(vec![], "x"),
        ))],
    )
    .await;
    let text = run.result("u").text();
    assert!(run.result("u").is_error);
    assert!(
        text.contains("'code-reviewer' not found") && text.contains("general-purpose, Explore"),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(dir.path())
    .state_dir(dir.path().join("state"))
    .allow_all_unsafe()
    .build()
    .expect("the engine builds");
    let run = tokio::time::timeout(
        Duration::from_secs(10),
        common::run_all(&engine, vec![to_call(&agent("n", script(vec![], "x")))]),
    )
    .await
    .expect("an engine without a runner must answer, not hang");
    let text = run.result("n").text();
    assert!(run.result("n").is_error);
    assert!(text.contains("No subagent runner is registered"), "{text}");
}

/// A policy that asks about every Bash call.
struct AskBash;
impl baton::engine::PermissionPolicy for AskBash {
    fn decide(
        &self,
        r: &baton::engine::permission::PermissionRequest<'_>,
    ) -> baton::engine::PermissionDecision {
        if r.tool.name() == "Bash" {
            baton::engine::PermissionDecision::Ask {
                reason: "asking".into(),
                source: baton::engine::permission::AskSource::Rule,
                suggestion: None,
            }
        } else {
            baton::engine::PermissionDecision::Allow
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_from_a_subagent_carry_the_chain_of_calls() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new();
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(dir.path())
    .state_dir(dir.path().join("state"))
    .policy(Arc::new(AskBash))
    .host_approvals(true)
    .subagents(runner.clone())
    .build()
    .expect("the engine builds");
    let inner = script(vec![bash("deep-bash", "echo approved")], "inner");
    let outer = script(vec![agent("mid", inner)], "outer");
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(to_call(&agent("top", outer))).unwrap();
    batch.end();
    let mut chain = None;
    let result = loop {
        match tokio::time::timeout(Duration::from_secs(20), batch.next_event())
            .await
            .expect("stuck")
        {
            Some(Event::PermissionRequest(p)) => {
                chain = Some((p.request.call_id.clone(), p.request.agent_chain.clone()));
                p.answer(baton::Approval::Allow);
            }
            Some(Event::Result { result, .. }) => break result,
            Some(_) => {}
            None => panic!("no result"),
        }
    };
    assert_eq!(
        chain,
        Some((
            "deep-bash".to_string(),
            vec!["top".to_string(), "mid".to_string()]
        ))
    );
    assert!(result.text().contains("approved"), "{}", result.text());
}
