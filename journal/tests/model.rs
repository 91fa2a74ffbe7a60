//! Random sequences of calls, retries, cancels and restarts against a model:
//! no id is ever run twice, a finished call is always answered with its own
//! result, and a call that ran when its process died is lost, not re-run.

use std::collections::HashMap;

use baton_journal::{Begin, CallKey, Ended, Journal, JournalError, Limits, Runner};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
enum Op {
    /// A call (or its retry) with id `id` and input variant `input`.
    Call {
        id: u8,
        input: u8,
    },
    Start {
        id: u8,
    },
    Output {
        id: u8,
    },
    Finish {
        id: u8,
    },
    Cancel {
        id: u8,
    },
    /// The process dies (runners vanish without a word) and a new one opens
    /// the same directory.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0u8..2).prop_map(|(id, input)| Op::Call { id, input }),
        2 => (0u8..6).prop_map(|id| Op::Start { id }),
        2 => (0u8..6).prop_map(|id| Op::Output { id }),
        3 => (0u8..6).prop_map(|id| Op::Finish { id }),
        1 => (0u8..6).prop_map(|id| Op::Cancel { id }),
        1 => Just(Op::Restart),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Model {
    Running { started: bool, last: String },
    Finished(u32),
    Lost { started: bool, last: String },
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn journal_matches_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(check(ops));
    }
}

async fn check(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::open(dir.path(), Limits::default()).unwrap();
    let mut runners: HashMap<u8, Runner> = HashMap::new();
    let mut model: HashMap<u8, (u8, Model)> = HashMap::new();
    let mut runs: HashMap<u8, u32> = HashMap::new();
    let mut serial = 0u32;
    for op in ops {
        match op {
            Op::Call { id, input } => {
                let key = CallKey::new("s", id.to_string());
                let got = journal.begin(&key, "T", &json!({"v": input}), 0).await;
                match (model.get(&id), got) {
                    (None, Ok(Begin::Run(r))) => {
                        *runs.entry(id).or_default() += 1;
                        assert_eq!(runs[&id], 1, "id {id} ran twice");
                        runners.insert(id, r);
                        model.insert(
                            id,
                            (
                                input,
                                Model::Running {
                                    started: false,
                                    last: String::new(),
                                },
                            ),
                        );
                    }
                    (Some((known, _)), Err(JournalError::Conflict { .. })) => {
                        assert_ne!(*known, input)
                    }
                    (Some((known, Model::Running { .. })), Ok(Begin::Join(_))) => {
                        assert_eq!(*known, input)
                    }
                    (Some((known, Model::Finished(n))), Ok(Begin::Ended(Ended::Finished(r)))) => {
                        assert_eq!(*known, input);
                        assert_eq!(r.as_ref(), &json!(n));
                    }
                    (
                        Some((known, Model::Lost { started, last })),
                        Ok(Begin::Ended(Ended::Lost(l))),
                    ) => {
                        assert_eq!(*known, input);
                        assert_eq!(l.started, *started);
                        assert_eq!(&l.output, last);
                    }
                    (m, got) => panic!("model {m:?}, journal {got:?}"),
                }
            }
            Op::Start { id } => {
                if let Some(r) = runners.get(&id) {
                    r.started().await.unwrap();
                    if let Some((_, Model::Running { started, .. })) = model.get_mut(&id) {
                        *started = true;
                    }
                }
            }
            Op::Output { id } => {
                if let Some(r) = runners.get(&id) {
                    serial += 1;
                    r.output(format!("out {serial}"));
                    if let Some((_, Model::Running { last, .. })) = model.get_mut(&id) {
                        *last = format!("out {serial}");
                    }
                }
            }
            Op::Finish { id } => {
                if let Some(r) = runners.remove(&id) {
                    serial += 1;
                    r.finish(json!(serial)).await.unwrap();
                    model.get_mut(&id).unwrap().1 = Model::Finished(serial);
                }
            }
            Op::Cancel { id } => {
                let running = runners.contains_key(&id);
                assert_eq!(journal.cancel(&CallKey::new("s", id.to_string())), running);
                if let Some(r) = runners.get(&id) {
                    assert!(r.cancel_token().is_cancelled());
                }
            }
            Op::Restart => {
                // A sync makes what is queued durable, as SIGKILL would
                // keep it (the page cache survives the process).
                let key = CallKey::new("sync", serial.to_string());
                serial += 1;
                if let Ok(Begin::Run(r)) = journal.begin(&key, "T", &json!({}), 0).await {
                    r.started().await.unwrap();
                    std::mem::forget(r);
                }
                for (_, r) in runners.drain() {
                    std::mem::forget(r);
                }
                for (_, m) in model.values_mut() {
                    if let Model::Running { started, last } = m.clone() {
                        *m = Model::Lost { started, last };
                    }
                }
                journal = Journal::open(dir.path(), Limits::default()).unwrap();
            }
        }
    }
}
