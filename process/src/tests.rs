//! Shared scans of `/proc` stay exact: a scan used by a caller always began
//! after the caller asked, however many threads ask at once; trees stopped
//! together all end. (How scans leave out processes older than every tree
//! is tested in a process of its own, in `engine/tests/scan_floor.rs`.)

use std::time::{Duration, Instant};

use super::scan::{fresh_snapshot, shared_snapshot};
use super::{configure, Isolation, ProcessTree};

fn live_in_snapshot(pid: i32) -> bool {
    shared_snapshot()
        .procs
        .iter()
        .any(|p| p.pid == pid && p.is_live())
}

/// `rounds` times: starts a process, which a blocking snapshot must show,
/// then kills and reaps it, which the next must not show.
fn start_see_and_reap(rounds: usize, tag: &str) {
    for _ in 0..rounds {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // A tree rooted at it: scans leave out processes older than every
        // live tree, and other tests' trees come and go.
        let tree = ProcessTree::new(pid, tag).unwrap();
        assert!(live_in_snapshot(pid), "a started process was missed");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!live_in_snapshot(pid), "a reaped process was still seen");
        drop(tree);
    }
}

#[test]
fn a_shared_snapshot_is_never_older_than_the_request() {
    // Eight threads start and end processes while asking for snapshots:
    // each must see its process right after starting it, and not see it
    // right after it was reaped. A snapshot shared from before the request
    // would miss the first or still show the second.
    let threads: Vec<_> = (0..8)
        .map(|_| std::thread::spawn(|| start_see_and_reap(15, "shared-snapshot-test")))
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_snapshot_is_never_older_than_the_request() {
    // As above, with tasks that wait for scans without holding a worker,
    // beside threads that wait for the same scans by blocking.
    async fn seen(pid: i32) -> bool {
        fresh_snapshot()
            .await
            .procs
            .iter()
            .any(|p| p.pid == pid && p.is_live())
    }
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            tokio::spawn(async {
                for _ in 0..15 {
                    let mut child = tokio::process::Command::new("sleep")
                        .arg("30")
                        .spawn()
                        .unwrap();
                    let pid = child.id().unwrap() as i32;
                    let tree = ProcessTree::new(pid, "async-snapshot-test").unwrap();
                    assert!(seen(pid).await, "a started process was missed");
                    child.kill().await.unwrap();
                    assert!(!seen(pid).await, "a reaped process was still seen");
                    drop(tree);
                }
            })
        })
        .collect();
    let blocking = std::thread::spawn(|| start_see_and_reap(30, "async-snapshot-test"));
    for task in tasks {
        task.await.unwrap();
    }
    blocking.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trees_stopped_together_all_end() {
    let mut shells = Vec::new();
    let mut trees = Vec::new();
    for _ in 0..12 {
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg("-c").arg("sleep 30 & sleep 30 & wait");
        let tag = configure(&mut cmd, Isolation::Session);
        let child = cmd.spawn().unwrap();
        let tree = ProcessTree::new(child.id().unwrap() as i32, &tag).unwrap();
        shells.push(child);
        trees.push(tree);
    }
    // Every tree sees its shell and both sleeps (generous bound: CI load).
    let until = Instant::now() + Duration::from_secs(20);
    while trees.iter().any(|t| t.live_members().len() < 3) {
        assert!(Instant::now() < until, "the sleeps never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reports =
        futures::future::join_all(trees.iter().map(|t| t.stop(Duration::from_secs(5)))).await;
    for (tree, report) in trees.iter().zip(&reports) {
        // The shell's group is signalled as a whole first; `signalled`
        // counts only what a scan still found running, so it may be 0.
        assert_eq!(report.survivors, 0, "{report:?}");
        assert!(!tree.is_alive());
    }
    for mut shell in shells {
        shell.wait().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_that_ignores_sigterm_is_still_killed() {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c").arg("trap '' TERM; sleep 30 & wait");
    let tag = configure(&mut cmd, Isolation::Session);
    let mut child = cmd.spawn().unwrap();
    let tree = ProcessTree::new(child.id().unwrap() as i32, &tag).unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while tree.live_members().len() < 2 {
        assert!(Instant::now() < until, "the sleep never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let report = tree.stop(Duration::from_millis(200)).await;
    assert_eq!(report.survivors, 0);
    assert!(!tree.is_alive());
    child.wait().await.unwrap();
}
