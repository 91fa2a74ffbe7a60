//! Remote calls are judged against the worker's workspace, which the worker
//! reports when the host connects (issue 24, item 8): a `Read` inside the
//! worker's `--cwd` is allowed under the default rules although it lies
//! outside the host's, and a `Read` outside the worker's workspace asks as
//! before (and, with nobody to ask, is denied).

use std::sync::Arc;

use baton::engine::permission::RulePolicy;
use baton::engine::{PoolSpec, ToolPool};
use baton::{Engine, Event, Outcome, ToolUse};
use baton_test_support::worker::Worker;
use serde_json::json;

use crate::support::BATON;

const TOKEN: &str = "workspace-test-token";

async fn results(engine: &Engine, calls: Vec<ToolUse>) -> Vec<baton::CallResult> {
    let mut batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.end();
    let mut out = Vec::new();
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { result, .. } => out.push(*result),
            Event::Done(_) => break,
            _ => {}
        }
    }
    out
}

fn read(id: &str, path: &std::path::Path) -> ToolUse {
    ToolUse::new(id, "Read", json!({ "file_path": path }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_judged_against_the_workers_workspace() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (host, remote, elsewhere) = (root.join("host"), root.join("worker"), root.join("other"));
    for d in [&host, &elsewhere] {
        std::fs::create_dir_all(d).unwrap();
    }
    let w = Worker::start(BATON, &remote, TOKEN);
    std::fs::write(remote.join("in.txt"), "on the worker\n").unwrap();
    std::fs::write(host.join("host.txt"), "on the host\n").unwrap();
    std::fs::write(elsewhere.join("out.txt"), "outside\n").unwrap();

    let config = baton::remote::RemoteConfig {
        workers: vec![w.url.clone()],
        token: Some(TOKEN.into()),
        tools: vec!["Read".into()],
    };
    let routed = baton::remote::route(
        baton::BuiltinConfig::default().tools().unwrap(),
        &config,
        "k",
    )
    .unwrap();
    let policy = RulePolicy::new();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: routed,
            ..Default::default()
        },
        &policy,
    );
    // The secure default: reads inside the workspace run, anything else
    // asks, and with no approver an ask is a denial.
    let engine = Engine::builder(pool)
        .cwd(&host)
        .state_dir(host.join(".state"))
        .policy(Arc::new(policy))
        .build()
        .unwrap();

    let got = results(
        &engine,
        vec![
            read("a", &remote.join("in.txt")),
            read("b", &elsewhere.join("out.txt")),
            read("c", &host.join("host.txt")),
        ],
    )
    .await;
    assert_eq!(got[0].outcome, Outcome::Success, "{:?}", got[0]);
    assert!(format!("{:?}", got[0].content).contains("on the worker"));
    // Outside the worker's workspace: judged as any read outside it.
    assert_eq!(got[1].outcome, Outcome::Denied, "{:?}", got[1]);
    assert_eq!(got[2].outcome, Outcome::Denied, "{:?}", got[2]);
    engine.shutdown();
}
