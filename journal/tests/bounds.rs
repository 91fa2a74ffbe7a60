//! The journal on disk: what a new life finds, and how big the file grows.

use baton_journal::{Begin, CallKey, Ended, Journal, Limits};
use serde_json::json;

#[tokio::test]
async fn a_journal_opened_again_answers_for_its_previous_life() {
    let dir = tempfile::tempdir().unwrap();
    {
        let j = Journal::open(dir.path(), Limits::default()).unwrap();
        let Begin::Run(r) = j
            .begin(&CallKey::new("s", "done"), "Write", &json!({"a": 1}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        r.started().await.unwrap();
        r.finish(json!({"content": "written"})).await.unwrap();
        let Begin::Run(r) = j
            .begin(&CallKey::new("s", "running"), "Bash", &json!({}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        r.started().await.unwrap();
        r.output("compiling 3/9".into());
        // Output is written without waiting for the disk; a synced record
        // after it (the file is in order) stands for the page cache that
        // survives a killed process.
        let Begin::Run(sync) = j
            .begin(&CallKey::new("s", "sync"), "T", &json!({}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        sync.started().await.unwrap();
        std::mem::forget(sync);
        // The process dies: nothing more is written for this call.
        std::mem::forget(r);
    }
    // A line half written when the process died.
    let file = dir.path().join("journal.log");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(br#"{"t":"finished","s":"s","id":"running","res"#);
    std::fs::write(&file, bytes).unwrap();

    let j = Journal::open(dir.path(), Limits::default()).unwrap();
    match j
        .begin(&CallKey::new("s", "done"), "Write", &json!({"a": 1}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Finished(r)) => assert_eq!(r["content"], "written"),
        other => panic!("{other:?}"),
    }
    match j
        .begin(&CallKey::new("s", "running"), "Bash", &json!({}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Lost(lost)) => {
            assert!(lost.started);
            assert_eq!(lost.output, "compiling 3/9");
            assert!(
                lost.why.contains("stopped while the call ran"),
                "{}",
                lost.why
            );
        }
        other => panic!("{other:?}"),
    }
    // The torn line is gone from the file.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
        "{text}"
    );
}

#[tokio::test]
async fn the_file_stays_bounded_and_pruned_calls_are_never_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_bytes: 64 * 1024,
        ..Limits::default()
    };
    let big = "x".repeat(4000);
    let j = Journal::open(dir.path(), limits.clone()).unwrap();
    for i in 0..200 {
        let key = CallKey::new("s", format!("c{i}"));
        let Begin::Run(r) = j.begin(&key, "Read", &json!({"i": i}), 0).await.unwrap() else {
            panic!()
        };
        r.started().await.unwrap();
        r.finish(json!({"text": big})).await.unwrap();
    }
    // 200 results of 4 KB = 800 KB written; the file holds at most its bound.
    let size = std::fs::metadata(dir.path().join("journal.log"))
        .unwrap()
        .len();
    assert!(
        size <= limits.max_bytes + 8 * 1024,
        "journal file is {size} bytes"
    );
    // The newest result is still there; the oldest was pruned but is known.
    match j
        .begin(&CallKey::new("s", "c199"), "Read", &json!({"i": 199}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Finished(r)) => assert_eq!(r["text"].as_str().unwrap().len(), 4000),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        j.begin(&CallKey::new("s", "c0"), "Read", &json!({"i": 0}), 0)
            .await
            .unwrap(),
        Begin::Ended(Ended::Pruned)
    ));
    drop(j);
    // And so after a restart.
    let j = Journal::open(dir.path(), limits).unwrap();
    assert!(matches!(
        j.begin(&CallKey::new("s", "c0"), "Read", &json!({"i": 0}), 0)
            .await
            .unwrap(),
        Begin::Ended(Ended::Pruned)
    ));
    assert!(matches!(
        j.begin(&CallKey::new("s", "c199"), "Read", &json!({"i": 199}), 0)
            .await
            .unwrap(),
        Begin::Ended(Ended::Finished(_))
    ));
}

#[tokio::test]
async fn beyond_max_calls_the_oldest_ended_calls_are_forgotten() {
    let limits = Limits {
        max_calls: 10,
        ..Limits::default()
    };
    let j = Journal::in_memory(limits);
    let Begin::Run(running) = j
        .begin(&CallKey::new("s", "long"), "Bash", &json!({}), 0)
        .await
        .unwrap()
    else {
        panic!()
    };
    for i in 0..30 {
        let Begin::Run(r) = j
            .begin(&CallKey::new("s", format!("c{i}")), "Read", &json!({}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        r.finish(json!(i)).await.unwrap();
    }
    let list = j.list("s");
    assert!(list.len() <= 11, "{} calls kept", list.len());
    assert!(
        j.status(&CallKey::new("s", "long")).is_some(),
        "a running call is never forgotten"
    );
    assert!(j.status(&CallKey::new("s", "c29")).is_some());
    drop(running);
}

#[tokio::test]
async fn a_start_written_without_sync_is_still_in_the_file_for_the_next_life() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        sync_start: false,
        ..Limits::default()
    };
    {
        let j = Journal::open(dir.path(), limits.clone()).unwrap();
        let Begin::Run(r) = j
            .begin(&CallKey::new("s", "a"), "Bash", &json!({}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        r.started().await.unwrap();
        // A result is always synced, and the file is in order: the start
        // before it is on disk with it.
        let Begin::Run(done) = j
            .begin(&CallKey::new("s", "b"), "Read", &json!({}), 0)
            .await
            .unwrap()
        else {
            panic!()
        };
        done.finish(json!("read")).await.unwrap();
        std::mem::forget(r);
    }
    let j = Journal::open(dir.path(), limits).unwrap();
    match j
        .begin(&CallKey::new("s", "a"), "Bash", &json!({}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Lost(lost)) => assert!(lost.started, "{lost:?}"),
        other => panic!("{other:?}"),
    }
}
