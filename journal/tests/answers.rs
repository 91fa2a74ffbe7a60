//! What a call that comes again is answered.

use std::sync::Arc;

use baton_journal::{Begin, CallKey, Ended, Journal, JournalError, Limits, Update};
use serde_json::json;

fn key(id: &str) -> CallKey {
    CallKey::new("session-1", id)
}

#[tokio::test]
async fn a_finished_call_is_answered_from_the_journal_and_not_run_again() {
    let j = Journal::in_memory(Limits::default());
    let input = json!({"file_path": "/w/a", "content": "x"});
    let Begin::Run(runner) = j.begin(&key("t1"), "Write", &input, 0).await.unwrap() else {
        panic!("a new call must be run");
    };
    runner.started().await.unwrap();
    runner
        .finish(json!({"content": [{"type": "text", "text": "ok"}]}))
        .await
        .unwrap();
    match j.begin(&key("t1"), "Write", &input, 0).await.unwrap() {
        Begin::Ended(Ended::Finished(r)) => assert_eq!(r["content"][0]["text"], "ok"),
        other => panic!("expected the journaled result, got {other:?}"),
    }
    // Same id, another session: another call.
    assert!(matches!(
        j.begin(&CallKey::new("session-2", "t1"), "Write", &input, 0)
            .await
            .unwrap(),
        Begin::Run(_)
    ));
}

#[tokio::test]
async fn another_input_under_a_known_id_is_an_error() {
    let j = Journal::in_memory(Limits::default());
    let _run = j
        .begin(&key("t1"), "Bash", &json!({"command": "ls"}), 0)
        .await
        .unwrap();
    let err = j
        .begin(&key("t1"), "Bash", &json!({"command": "rm -rf /"}), 0)
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("already used"), "{err}");
    // Key order does not make another input.
    let a: serde_json::Value = serde_json::from_str(r#"{"x":1,"y":2}"#).unwrap();
    let b: serde_json::Value = serde_json::from_str(r#"{"y":2,"x":1}"#).unwrap();
    let _r = j.begin(&key("t2"), "T", &a, 0).await.unwrap();
    assert!(matches!(
        j.begin(&key("t2"), "T", &b, 0).await.unwrap(),
        Begin::Join(_)
    ));
}

#[tokio::test]
async fn a_retry_of_a_running_call_joins_it_from_the_last_number_it_saw() {
    let j = Journal::in_memory(Limits::default());
    let input = json!({"command": "make"});
    let Begin::Run(runner) = j.begin(&key("t1"), "Bash", &input, 0).await.unwrap() else {
        panic!()
    };
    runner.started().await.unwrap();
    assert_eq!(runner.output("one".into()), 1);
    assert_eq!(runner.output("two".into()), 2);
    assert_eq!(runner.output("three".into()), 3);
    // The reader saw 1; it gets 2, 3, then what follows, then the end.
    let Begin::Join(mut join) = j.begin(&key("t1"), "Bash", &input, 1).await.unwrap() else {
        panic!("a running call must be joined")
    };
    assert_eq!(
        join.next().await,
        Update::Output {
            seq: 2,
            text: "two".into()
        }
    );
    assert_eq!(
        join.next().await,
        Update::Output {
            seq: 3,
            text: "three".into()
        }
    );
    let waiter = tokio::spawn(async move {
        let mut seen = Vec::new();
        loop {
            match join.next().await {
                Update::Ended(e) => return (seen, e),
                u => seen.push(u),
            }
        }
    });
    tokio::task::yield_now().await;
    runner.output("four".into());
    runner.finish(json!({"done": true})).await.unwrap();
    let (seen, ended) = waiter.await.unwrap();
    assert_eq!(
        seen,
        vec![Update::Output {
            seq: 4,
            text: "four".into()
        }]
    );
    assert_eq!(ended, Ended::Finished(Arc::new(json!({"done": true}))));
}

#[tokio::test]
async fn a_reader_that_fell_behind_the_ring_is_told_what_was_dropped() {
    let limits = Limits {
        output_bytes: 10,
        ..Limits::default()
    };
    let j = Journal::in_memory(limits);
    let Begin::Run(runner) = j.begin(&key("t1"), "Bash", &json!({}), 0).await.unwrap() else {
        panic!()
    };
    for i in 1..=6 {
        runner.output(format!("line{i}"));
    }
    let mut join = runner.join(0);
    // 5 bytes each, 10 kept: 5 and 6 remain.
    assert_eq!(join.next().await, Update::Dropped { first: 1, last: 4 });
    assert_eq!(
        join.next().await,
        Update::Output {
            seq: 5,
            text: "line5".into()
        }
    );
    assert_eq!(
        join.next().await,
        Update::Output {
            seq: 6,
            text: "line6".into()
        }
    );
    assert_eq!(join.cursor(), 6);
}

#[tokio::test]
async fn cancel_reaches_the_runner_and_a_dropped_runner_leaves_the_call_lost() {
    let j = Journal::in_memory(Limits::default());
    let Begin::Run(runner) = j.begin(&key("t1"), "Bash", &json!({}), 0).await.unwrap() else {
        panic!()
    };
    let token = runner.cancel_token();
    assert!(j.cancel(&key("t1")));
    assert!(token.is_cancelled());
    runner.started().await.unwrap();
    runner.output("half".into());
    drop(runner);
    match j.begin(&key("t1"), "Bash", &json!({}), 0).await.unwrap() {
        Begin::Ended(Ended::Lost(lost)) => {
            assert!(lost.started);
            assert_eq!(lost.output, "half");
        }
        other => panic!("{other:?}"),
    }
    assert!(!j.cancel(&key("t1")), "an ended call does not run");
    assert_eq!(j.running(), 0);
}

#[tokio::test]
async fn status_and_list_say_where_calls_stand() {
    let j = Journal::in_memory(Limits::default());
    let Begin::Run(a) = j.begin(&key("a"), "Read", &json!({}), 0).await.unwrap() else {
        panic!()
    };
    let Begin::Run(b) = j.begin(&key("b"), "Bash", &json!({}), 0).await.unwrap() else {
        panic!()
    };
    a.finish(json!(1)).await.unwrap();
    b.started().await.unwrap();
    b.output("working".into());
    let list = j.list("session-1");
    assert_eq!(
        list.iter().map(|s| s.key.id.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(list[0].ended.is_some());
    assert!(list[1].ended.is_none() && list[1].started);
    assert_eq!(list[1].last_output, (1, "working".to_string()));
    assert!(j.status(&key("zz")).is_none());
    assert!(j.list("other").is_empty());
}

#[tokio::test]
async fn a_reader_past_every_number_waits_for_the_end_and_does_not_overflow() {
    let j = Journal::in_memory(Limits::default());
    let Begin::Run(runner) = j.begin(&key("t1"), "Bash", &json!({}), 0).await.unwrap() else {
        panic!()
    };
    runner.output("one".into());
    let mut join = runner.join(u64::MAX);
    let waiter = tokio::spawn(async move { join.next().await });
    tokio::task::yield_now().await;
    runner.finish(json!("done")).await.unwrap();
    assert_eq!(
        waiter.await.unwrap(),
        Update::Ended(Ended::Finished(Arc::new(json!("done"))))
    );
}
