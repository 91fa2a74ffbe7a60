//! `Engine::save_state` and `Engine::resume` in the library: a new engine
//! over the saved state lets Edit change a file the old one read, keeps
//! the working directory, and an engine over a state with an unknown
//! version is an error, not a panic.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::Arc;

use baton::engine::permission::AllowAllUnsafe;
use baton::engine::{PoolSpec, ToolPool};
use baton::session_state::{StateError, STATE_FILE};
use baton::{Engine, Event, Outcome, ToolUse};
use serde_json::json;

fn pool() -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            ..Default::default()
        },
        &AllowAllUnsafe,
    )
}

async fn run(engine: &Engine, call: ToolUse) -> baton::CallResult {
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(call).unwrap();
    batch.end();
    let mut result = None;
    while let Some(e) = batch.next_event().await {
        match e {
            Event::Result { result: r, .. } => result = Some(*r),
            Event::Done(_) => break,
            _ => {}
        }
    }
    result.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_engine_takes_over_a_saved_session() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    let state = dir.path().join("state");
    let edit = ToolUse::new(
        "e",
        "Edit",
        json!({"file_path": work.join("a.txt"), "old_string": "one", "new_string": "two"}),
    );

    let first = Engine::builder(pool())
        .cwd(&work)
        .state_dir(&state)
        .session_id("lib-1")
        .policy(Arc::new(AllowAllUnsafe))
        .build()
        .unwrap();
    let read = run(
        &first,
        ToolUse::new("r", "Read", json!({"file_path": work.join("a.txt")})),
    )
    .await;
    assert_eq!(read.outcome, Outcome::Success, "{read:?}");
    let cd = run(
        &first,
        ToolUse::new("c", "Bash", json!({"command": "cd sub"})),
    )
    .await;
    assert_eq!(cd.outcome, Outcome::Success, "{cd:?}");
    assert!(first.save_state().unwrap(), "the first save writes");
    assert!(
        !first.save_state().unwrap(),
        "nothing changed: nothing written"
    );
    first.shutdown();
    drop(first);

    // Without the saved state, Edit refuses the unread file.
    let fresh = Engine::builder(pool())
        .cwd(&work)
        .state_dir(dir.path().join("other"))
        .policy(Arc::new(AllowAllUnsafe))
        .build()
        .unwrap();
    assert_ne!(run(&fresh, edit.clone()).await.outcome, Outcome::Success);
    fresh.shutdown();

    let resumed = Engine::resume(pool(), &state)
        .unwrap()
        .policy(Arc::new(AllowAllUnsafe))
        .build()
        .unwrap();
    let report = resumed.resumed().expect("a resume report");
    assert_eq!(report.session_id, "lib-1");
    assert_eq!(report.cwd, work.join("sub"));
    assert!(report.lost_tasks.is_empty());
    let result = run(&resumed, edit).await;
    assert_eq!(result.outcome, Outcome::Success, "{result:?}");
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).unwrap(),
        "two\n"
    );
    resumed.shutdown();

    // Another workspace is refused; so is a newer format.
    let elsewhere = Engine::resume(pool(), &state)
        .unwrap()
        .cwd(dir.path())
        .build();
    assert!(elsewhere.is_err());
    std::fs::write(state.join(STATE_FILE), r#"{"version": 99}"#).unwrap();
    match Engine::resume(pool(), &state) {
        Err(StateError::Version { found, .. }) => assert_eq!(found, "99"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("a newer state was accepted"),
    }
}
