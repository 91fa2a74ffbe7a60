//! Trees stopped together share their scans of `/proc`, on a runtime with
//! as few workers as this machine's cores. In a process of its own: it
//! counts every scan the process takes.
//!
//! When a scan held a lock on a runtime worker, only as many trees as
//! there were workers could ask at once, so each tree of an interrupt got
//! a scan of its own, one after another: 256 shells took 640 ms to stop
//! where `killpg` took 50 ms (issue 25).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::time::{Duration, Instant};

use baton_engine::process::scan::scans_begun;
use baton_engine::process::{configure, Isolation, ProcessTree};
use baton_test_support::own_process;

const TREES: usize = 64;

#[test]
fn trees_stopped_together_share_their_scans() {
    own_process!(trees_stopped_together_share_their_scans, || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(stop_together())
    });
}

async fn stop_together() {
    let mut shells = Vec::new();
    let mut trees = Vec::new();
    for _ in 0..TREES {
        let mut cmd = tokio::process::Command::new("bash");
        // A shell, a pipeline's two processes in its group, and one that
        // left the group (only a scan finds it).
        cmd.arg("-c")
            .arg("setsid sleep 30 & sleep 30 | sleep 30; wait");
        let tag = configure(&mut cmd, Isolation::Session);
        let child = cmd.spawn().unwrap();
        let tree = ProcessTree::new(child.id().unwrap() as i32, &tag).unwrap();
        shells.push(child);
        trees.push(tree);
    }
    let until = Instant::now() + Duration::from_secs(60);
    while trees.iter().any(|t| t.live_members().len() < 4) {
        assert!(Instant::now() < until, "the sleeps never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = scans_begun();
    let reports =
        futures::future::join_all(trees.iter().map(|t| t.stop(Duration::from_secs(10)))).await;
    let scans = scans_begun() - before;
    for (tree, report) in trees.iter().zip(&reports) {
        assert_eq!(report.survivors, 0, "{report:?}");
        assert!(!tree.is_alive_async().await);
    }
    for mut shell in shells {
        shell.wait().await.unwrap();
    }
    // Each tree needs at least one scan after its signals; shared, the 64
    // trees take a few rounds of them (generous: a loaded machine kills
    // slowly, and each round of survivors is one more shared scan).
    assert!(
        (scans as usize) < TREES / 2,
        "{TREES} trees stopping together took {scans} scans of /proc"
    );
}
