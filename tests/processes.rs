//! Real shells through the whole engine: sibling cancellation, interrupts
//! and random batches with real `bash`, and a count of the processes left
//! behind afterwards, which must be zero (SPEC §8, §7, §14).

use std::time::{Duration, Instant};

use baton::engine::AllowAllUnsafe;
use baton::{Engine, InterruptKind, Outcome, SiblingPolicy};
use baton_test_support::procs;
use common::{call, drain};
use proptest::prelude::*;
use serde_json::json;

use crate::common;

fn engine(dir: &std::path::Path, policy: SiblingPolicy) -> Engine {
    Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(dir)
    .state_dir(dir.join(".state"))
    .sibling_policy(policy)
    .allow_all_unsafe()
    .build()
    .unwrap()
}

/// Live processes whose environment carries `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let needle = format!("BATON_TEST_MARK={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let is_zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        if !is_zombie && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// A command whose processes (and their children) carry `marker`.
fn marked(marker: &str, command: &str) -> String {
    format!("export BATON_TEST_MARK={marker}; {command}")
}

fn assert_no_leftovers(marker: &str) {
    // Stopping is SIGTERM, a grace period, then SIGKILL: allow for it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "processes left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_shell_command_stops_its_running_siblings_processes() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), SiblingPolicy::ShellError);
    // `tail -f` is read-only, so it runs beside the failing `ls`; its
    // command line names a file unique to this test.
    let followed = dir.path().join(format!("followed-{}", std::process::id()));
    std::fs::write(&followed, "").unwrap();
    let needle = followed.display().to_string();
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(call(
            "follower",
            "Bash",
            json!({"command": format!("tail -f {needle}")}),
        ))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !procs::pids_with(&needle).is_empty(),
        "tail should be running"
    );
    batch
        .add(call(
            "failing",
            "Bash",
            json!({"command": "ls /definitely/not/here"}),
        ))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    batch
        .add(call("after", "Bash", json!({"command": "touch after.txt"})))
        .unwrap();
    batch.end();
    let started = Instant::now();
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(run.result("failing").outcome, Outcome::ToolError);
    let follower = run.result("follower");
    assert_eq!(
        follower.outcome,
        Outcome::Cancelled { started: true },
        "{}",
        follower.text()
    );
    let text = follower.text();
    assert!(text.contains("Bash(ls /definitely/not/here)"), "{text}");
    assert!(text.contains("automatically by the engine"), "{text}");
    assert_eq!(
        run.result("after").outcome,
        Outcome::Cancelled { started: false }
    );
    assert!(!dir.path().join("after.txt").exists());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !procs::pids_with(&needle).is_empty() {
        assert!(Instant::now() < deadline, "tail was left running");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_whole_process_trees_and_cd_carries_over() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let engine = engine(dir.path(), SiblingPolicy::ShellError);
    let mark = format!("cancel-{}", std::process::id());

    let (results, _) = {
        let batch = engine.open_batch().await.unwrap();
        batch
            .add(call("cd", "Bash", json!({"command": "cd sub"})))
            .unwrap();
        batch
            .add(call("pwd", "Bash", json!({"command": "pwd"})))
            .unwrap();
        batch.finish().await
    };
    assert!(results[1].text().contains("sub"), "{}", results[1].text());

    let mut batch = engine.open_batch().await.unwrap();
    let tree = marked(&mark, "sleep 30 & sleep 30 & bash -c 'sleep 30'; wait");
    batch
        .add(call("tree", "Bash", json!({"command": tree})))
        .unwrap();
    batch.end();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !processes_with(&mark).is_empty(),
        "the tree should be running"
    );
    batch.interrupt(InterruptKind::Cancel);
    let run = drain(&mut batch).await;
    batch.quiescent().await;
    assert_eq!(
        run.result("tree").outcome,
        Outcome::Cancelled { started: true }
    );
    // Quiescence means the processes are gone already, not soon.
    assert_eq!(processes_with(&mark), Vec::<u32>::new());
    // The next message still runs in `sub`.
    let batch = engine.open_batch().await.unwrap();
    batch
        .add(call("pwd2", "Bash", json!({"command": "pwd"})))
        .unwrap();
    let (results, _) = batch.finish().await;
    assert!(
        results[0].text().trim_end().ends_with("sub"),
        "{}",
        results[0].text()
    );
}

fn command() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("true"),
        Just("false"),
        Just("echo hello"),
        Just("sleep 0.05"),
        Just("sleep 1"),
        Just("ls /no/such/dir"),
        Just("grep -q nothing /dev/null"),
        Just("mkdir -p made && echo done"),
        Just("sleep 1 & sleep 1; wait"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random batches of real commands, interrupted at random moments:
    /// one result per call, in order, and no process left behind.
    #[test]
    fn random_shell_batches_leave_nothing_behind(
        commands in prop::collection::vec(command(), 1..8),
        interrupt in prop::option::of((0u64..400, any::<bool>())),
        policy in prop_oneof![Just(SiblingPolicy::ShellError), Just(SiblingPolicy::Off)],
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mark = format!("rand-{}-{}", std::process::id(), rand_suffix());
        rt.block_on(async {
            let engine = engine(dir.path(), policy);
            let mut batch = engine.open_batch().await.unwrap();
            for (i, c) in commands.iter().enumerate() {
                let cmd = marked(&mark, c);
                batch.add(call(&format!("b{i}"), "Bash", json!({"command": cmd}))).unwrap();
            }
            batch.end();
            if let Some((ms, cancel)) = interrupt {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                batch.interrupt(if cancel { InterruptKind::Cancel } else { InterruptKind::NewMessage });
            }
            let run = drain(&mut batch).await;
            batch.quiescent().await;
            prop_assert_eq!(run.results.len(), commands.len());
            for (pos, (index, result, _)) in run.results.iter().enumerate() {
                prop_assert_eq!(*index, pos);
                prop_assert_eq!(result.call_id.clone(), format!("b{pos}"));
            }
            drop(batch);
            // Every command either waited for its jobs or was stopped with
            // its whole process group: at quiescence nothing remains, even
            // before the session ends.
            prop_assert_eq!(processes_with(&mark), Vec::<u32>::new());
            engine.shutdown();
            drop(engine);
            Ok(())
        })?;
        assert_no_leftovers(&mark);
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
