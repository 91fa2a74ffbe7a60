//! Answered calls (`BatchHandle::add_answered`) on a real runtime over the
//! testkit tools: they keep their place among calls that run, never run
//! themselves, and a batch of nothing else still ends.

use std::time::Duration;

use baton_engine::{CallResult, ContentBlock, Context, Outcome, Pipeline, Session, ToolUse};
use serde_json::json;

use crate::testkit::{self, Timeline};
use crate::{Event, EventSink, InterruptKind, Runtime};

fn runtime(name: &str) -> Runtime {
    let dir = std::env::temp_dir().join(format!("baton-answered-{name}-{}", std::process::id()));
    Runtime::builder(
        Pipeline::allow_all_unsafe(testkit::pool()),
        Session::new(name, dir.join("state")),
        Context::new(std::env::temp_dir()),
    )
    .build()
}

fn answer(id: &str, text: &str) -> CallResult {
    CallResult::new(
        id,
        "Probe",
        vec![ContentBlock::text(text)],
        false,
        Outcome::Success,
    )
}

/// Every result, as (index, id, text), until `Done` (which must come).
async fn results(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .expect("the batch did not finish");
        match event {
            Some(Event::Result { index, result }) => {
                out.push((index, result.call_id.clone(), result.text()))
            }
            Some(Event::Done(summary)) => {
                assert_eq!(summary.calls, out.len());
                return out;
            }
            Some(_) => {}
            None => panic!("the events ended without Done"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answered_calls_keep_their_place_among_running_ones_and_do_not_run() {
    let rt = runtime("order");
    let (sink, mut events) = EventSink::tokio();
    let batch = rt.open_batch(sink).await.unwrap();
    // A slow call first: the answers after it must wait for it.
    batch
        .add(ToolUse::new("a", "Probe", json!({"ms": 300})))
        .unwrap();
    batch
        .add_answered(answer("b", "b from the journal"))
        .unwrap();
    batch.add(ToolUse::new("c", "Probe", json!({}))).unwrap();
    batch
        .add_answered(answer("d", "d from the journal"))
        .unwrap();
    batch.end();
    let got = results(&mut events).await;
    let ids: Vec<(usize, &str)> = got.iter().map(|(i, id, _)| (*i, id.as_str())).collect();
    assert_eq!(ids, [(0, "a"), (1, "b"), (2, "c"), (3, "d")]);
    assert_eq!(got[1].2, "b from the journal");
    assert_eq!(got[3].2, "d from the journal");
    assert!(got[0].2.starts_with("a done"), "{}", got[0].2);
    let timeline = rt.session().slots().get_or_default::<Timeline>();
    assert!(timeline.ran("a") && timeline.ran("c"));
    assert!(
        !timeline.ran("b") && !timeline.ran("d"),
        "an answered call ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_only_answered_calls_ends() {
    let rt = runtime("only");
    let (sink, mut events) = EventSink::tokio();
    let batch = rt.open_batch(sink).await.unwrap();
    batch.add_answered(answer("x", "one")).unwrap();
    batch.add_answered(answer("y", "two")).unwrap();
    batch.end();
    let got = results(&mut events).await;
    assert_eq!(
        got,
        [
            (0, "x".to_string(), "one".to_string()),
            (1, "y".to_string(), "two".to_string())
        ]
    );
    tokio::time::timeout(Duration::from_secs(10), batch.quiescent())
        .await
        .expect("the batch never became quiescent");
    assert!(matches!(
        batch.add_answered(answer("z", "late")),
        Err(crate::BatchError::Ended)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_stands_after_an_interrupt_and_its_id_stays_taken() {
    let rt = runtime("interrupt");
    let (sink, mut events) = EventSink::tokio();
    let batch = rt.open_batch(sink).await.unwrap();
    batch.interrupt(InterruptKind::Cancel);
    batch.add_answered(answer("k", "known")).unwrap();
    // Refused twice over: after the interrupt, and as a repeated id.
    batch.add(ToolUse::new("k", "Probe", json!({}))).unwrap();
    batch.end();
    let got = results(&mut events).await;
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].0, got[0].2.as_str()), (0, "known"));
    assert_ne!(got[1].2, "known");
    let timeline = rt.session().slots().get_or_default::<Timeline>();
    assert!(!timeline.ran("k"));
}
