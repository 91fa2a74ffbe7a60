//! Shared scans of `/proc` leave out processes known to be older than every
//! live tree (nobody's member), and only those. In a process of its own:
//! the floor depends on every tree alive in the process.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::time::Duration;

use baton_engine::process::scan::shared_snapshot;
use baton_engine::process::ProcessTree;
use baton_test_support::own_process;

fn seen(pid: u32) -> bool {
    shared_snapshot()
        .procs
        .iter()
        .any(|p| p.pid == pid as i32 && p.is_live())
}

#[test]
fn scans_leave_out_only_processes_older_than_every_tree() {
    own_process!(scans_leave_out_only_processes_older_than_every_tree, || {
        // Start times are in clock ticks (10 ms): space the processes apart.
        let mut old = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let mut root = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let tree = ProcessTree::new(root.id() as i32, "scan-floor-test").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let mut young = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        // The first scan after the tree exists reads everything; later ones
        // know the old process started before the tree's root.
        assert!(seen(old.id()), "no start time known yet: read");
        assert!(
            !seen(old.id()),
            "a process older than every tree was read again"
        );
        assert!(
            seen(young.id()),
            "a process younger than the tree was missed"
        );
        // A second, older tree lowers the floor: the old process counts again.
        let older = ProcessTree::new(old.id() as i32, "scan-floor-older").unwrap();
        assert!(seen(old.id()), "a tree's own root must stay visible");
        drop(older);
        // Without trees there is no floor: everything is read.
        drop(tree);
        assert!(seen(old.id()));
        assert!(seen(root.id()));
        for child in [&mut old, &mut root, &mut young] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    });
}
