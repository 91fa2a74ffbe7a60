//! A tree whose shell has ended, judged from the orphans this process
//! adopted (it is a child subreaper here, as the `baton` CLI is) against
//! a scan of every process: both must find what each way of escaping left
//! running, and both must say "gone" once it was stopped or ended.
//!
//! Each test runs in a process of its own: becoming a subreaper changes
//! the whole process, and the other tests of this binary would leave their
//! orphans to it.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::time::{Duration, Instant};

use baton_engine::process::{Child, Isolation, Launch, ProcessTree};
use baton_test_support::own_process;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn shell(script: &str) -> (Child, ProcessTree) {
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    let mut launch = Launch::new("bash", Isolation::Session);
    launch.arg("-c").arg(script);
    launch.spawn().unwrap()
}

/// Ways a command leaves something behind when its shell exits. Each
/// survivor waits on a marker file so the test knows it started.
const ESCAPES: &[&str] = &[
    "sleep 30 &",
    "set -m; sleep 30 &",
    "setsid sleep 30 &",
    "(sleep 30 &)",
    "nohup setsid sleep 30 >/dev/null 2>&1 &",
    "setsid bash -c 'sleep 30 & exit' &",
    "(setsid bash -c '(sleep 30 &)' &)",
    "python3 -c 'import os,time\nif os.fork()==0:\n os.setpgid(0,0)\n time.sleep(30)' &",
    // A process whose name is not UTF-8.
    "d=$(mktemp -d); cp \"$(command -v sleep)\" \"$d/$(printf '\\377\\376')\"; \
     (\"$d/$(printf '\\377\\376')\" 30 &)",
];

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn survivors_are_found_by_both_ways_and_gone_after_a_stop() {
    own_process!(
        survivors_are_found_by_both_ways_and_gone_after_a_stop,
        || {
            runtime().block_on(async {
                for script in ESCAPES {
                    let (mut child, tree) = shell(&format!("{script}\nsleep 0.3")).await;
                    child.wait().await.unwrap();
                    assert_eq!(tree.alive_below(), Some(true), "walk missed: {script}");
                    assert!(tree.alive_by_scan(), "scan missed: {script}");
                    let report = tree.stop(Duration::from_secs(2)).await;
                    assert_eq!(report.survivors, 0, "{script}");
                    assert!(report.signalled >= 1, "{script}");
                    wait_until(script, || tree.alive_below() == Some(false)).await;
                    assert!(!tree.alive_by_scan(), "{script}");
                }
            });
        }
    );
}

#[test]
fn commands_that_leave_nothing_are_gone_at_once() {
    own_process!(commands_that_leave_nothing_are_gone_at_once, || {
        runtime().block_on(async {
            for script in ["true", "sleep 0.1", "ls / >/dev/null"] {
                let (mut child, tree) = shell(script).await;
                child.wait().await.unwrap();
                assert_eq!(tree.alive_below(), Some(false), "{script}");
                assert!(!tree.alive_by_scan(), "{script}");
            }
            // An orphan that ends by itself: gone by both ways once it ended
            // (however slowly a loaded machine runs it).
            let (mut child, tree) = shell("(sleep 0.1 &); sleep 0.3").await;
            child.wait().await.unwrap();
            wait_until("the orphan ended", || tree.alive_below() == Some(false)).await;
            assert!(!tree.alive_by_scan());
        });
    });
}

#[test]
fn zombies_of_finished_survivors_are_reaped_on_the_way() {
    own_process!(zombies_of_finished_survivors_are_reaped_on_the_way, || {
        runtime().block_on(async {
            // Survivors that end by themselves become this process's zombies;
            // nothing else would collect them.
            let (mut child, tree) = shell("(sleep 0.2 & sleep 0.2 &); exit 0").await;
            child.wait().await.unwrap();
            let me = nix::unistd::getpid().as_raw();
            tokio::time::sleep(Duration::from_millis(600)).await;
            assert_eq!(tree.alive_below(), Some(false));
            // Only this tree's (its session): other tests run beside this one.
            let session = tree.root().to_string();
            let zombies = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
                .unwrap()
                .split_whitespace()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                        s.rsplit_once(") ").is_some_and(|(_, r)| {
                            let fields: Vec<&str> = r.split(' ').collect();
                            fields[0] == "Z" && fields[3] == session
                        })
                    })
                })
                .count();
            assert_eq!(
                zombies, 0,
                "this tree's zombies left among this process's children"
            );
        });
    });
}

#[test]
fn other_trees_running_beside_do_not_count() {
    own_process!(other_trees_running_beside_do_not_count, || {
        runtime().block_on(async {
            // A long-running neighbour, guarded like a shell call's tree.
            let (_neighbour, neighbour_tree) = shell("sleep 30").await;
            let _guard = baton_engine::process::TreeGuard::new(neighbour_tree);
            let (mut child, tree) = shell("true").await;
            child.wait().await.unwrap();
            assert_eq!(tree.alive_below(), Some(false));
            assert!(!tree.alive_by_scan());
        });
    });
}
