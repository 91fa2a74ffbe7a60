//! A real crash: a process using the journal is SIGKILLed, and a new
//! process answers for its calls.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use baton_journal::{Begin, CallKey, Ended, Journal, Limits};
use serde_json::json;

const DIR_VAR: &str = "BATON_JOURNAL_CRASH_DIR";

/// Run by the test below in a child process; does nothing otherwise.
#[tokio::test]
#[ignore = "run as a child process by a_sigkilled_process_leaves_an_answer_for_every_call"]
async fn child_process() {
    let Some(dir) = std::env::var_os(DIR_VAR) else {
        return;
    };
    let j = Journal::open(std::path::Path::new(&dir), Limits::default()).unwrap();
    let Begin::Run(r) = j
        .begin(&CallKey::new("s", "write"), "Write", &json!({"f": 1}), 0)
        .await
        .unwrap()
    else {
        panic!()
    };
    r.started().await.unwrap();
    r.finish(json!({"content": "wrote f"})).await.unwrap();
    let Begin::Run(r) = j
        .begin(&CallKey::new("s", "bash"), "Bash", &json!({}), 0)
        .await
        .unwrap()
    else {
        panic!()
    };
    r.started().await.unwrap();
    r.output("step 1".into());
    r.output("step 2".into());
    let Begin::Run(_waiting) = j
        .begin(&CallKey::new("s", "queued"), "Edit", &json!({}), 0)
        .await
        .unwrap()
    else {
        panic!()
    };
    // Output and receipts are written without waiting for the disk; one
    // synced record after them puts them all there (the file is in order).
    let Begin::Run(flush) = j
        .begin(&CallKey::new("s", "flush"), "Read", &json!({}), 0)
        .await
        .unwrap()
    else {
        panic!()
    };
    flush.started().await.unwrap();
    println!("ready");
    tokio::time::sleep(std::time::Duration::from_secs(600)).await;
    drop(r);
}

#[tokio::test]
async fn a_sigkilled_process_leaves_an_answer_for_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "crash::child_process",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(DIR_VAR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .any(|l| l.map(|l| l.contains("ready")).unwrap_or(false));
    assert!(ready, "the child never got ready");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let j = Journal::open(dir.path(), Limits::default()).unwrap();
    match j
        .begin(&CallKey::new("s", "write"), "Write", &json!({"f": 1}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Finished(r)) => assert_eq!(r["content"], "wrote f"),
        other => panic!("{other:?}"),
    }
    match j
        .begin(&CallKey::new("s", "bash"), "Bash", &json!({}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Lost(l)) => assert!(l.started && l.output == "step 2", "{l:?}"),
        other => panic!("{other:?}"),
    }
    match j
        .begin(&CallKey::new("s", "queued"), "Edit", &json!({}), 0)
        .await
        .unwrap()
    {
        Begin::Ended(Ended::Lost(l)) => {
            assert!(!l.started && l.why.contains("nothing of it ran"), "{l:?}")
        }
        other => panic!("{other:?}"),
    }
}
