//! State directories are bounded (issue 25, item 11), through a real
//! `baton run`: old session directories beyond the count and size bounds
//! are pruned (never a running session's), an empty one is removed at
//! exit, and with a state directory that cannot be written, large results
//! are cut to the per-message budget with a note instead of inlined whole.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;

use serde_json::{json, Value};

/// A pid no process has (pids stay below 2^22 on Linux).
const GONE: u32 = 4_000_000;

/// One of the made-up ended sessions (pid at least `GONE`), not this
/// test's running one, whose pid may start with the same digit.
fn is_ended(name: &str) -> bool {
    name.split('-')
        .next()
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| pid >= GONE)
}

fn message(dir: &Path, calls: Vec<Value>) -> std::path::PathBuf {
    let path = dir.join("message.json");
    std::fs::write(
        &path,
        json!({"role": "assistant", "content": calls}).to_string(),
    )
    .unwrap();
    path
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

fn sessions(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn old_sessions_are_pruned_by_count_and_size_and_a_running_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let root = state.join("baton/sessions");
    // 60 ended sessions of 10 KB each, oldest first.
    for i in 0..60u32 {
        let session = root.join(format!("{}-{}", GONE + i, 1_000 + i));
        std::fs::create_dir_all(session.join("tool-results")).unwrap();
        std::fs::write(session.join("tool-results/r.txt"), vec![b'x'; 10_000]).unwrap();
        let age = std::time::Duration::from_secs(u64::from(3_600 - i));
        let when = std::time::SystemTime::now() - age;
        std::fs::File::open(&session)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    // A running session (this test's pid), the oldest of all.
    let running = root.join(format!("{}-1", std::process::id()));
    std::fs::create_dir_all(&running).unwrap();
    std::fs::write(running.join("log"), b"live").unwrap();
    let notes = root.join("notes");
    std::fs::create_dir_all(&notes).unwrap();

    let msg = message(dir.path(), vec![bash("c0", "echo hi")]);
    let run = |max_sessions: &str, max_bytes: &str| {
        let out = crate::support::baton()
            .args(["run", "--cwd"])
            .arg(dir.path())
            .args(["--permission-mode", "bypassPermissions"])
            .arg(&msg)
            .env("XDG_STATE_HOME", &state)
            .env("HOME", dir.path())
            .env("BATON_STATE_MAX_SESSIONS", max_sessions)
            .env("BATON_STATE_MAX_BYTES", max_bytes)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(reply["content"][0]["content"][0]["text"], "hi");
    };

    // Count: 20 in all, counting the running one and the new session.
    run("20", "1000000000");
    let left = sessions(&root);
    assert!(
        left.contains(&format!("{}-1", std::process::id())),
        "{left:?}"
    );
    assert!(left.contains(&"notes".to_string()), "not a session: kept");
    let ended: Vec<&String> = left.iter().filter(|n| is_ended(n)).collect();
    // 20 places: the running one, the new one (removed at exit: empty),
    // and the 18 newest ended ones.
    assert_eq!(ended.len(), 18, "{left:?}");
    assert!(ended.iter().all(|n| {
        let i: u32 = n.split('-').next().unwrap().parse::<u32>().unwrap() - GONE;
        i >= 42
    }));
    // The new session's directory stays only if something was left in it.
    for name in left.iter().filter(|n| !is_ended(n) && *n != "notes") {
        let path = root.join(name);
        if path != running {
            assert!(
                std::fs::read_dir(&path).unwrap().next().is_some(),
                "{name} is empty"
            );
        }
    }

    // Size: 55 KB keep the running one (4 bytes) and five of 10 KB.
    run("1000", "55000");
    let left = sessions(&root);
    let ended = left.iter().filter(|n| is_ended(n)).count();
    assert_eq!(ended, 5, "{left:?}");
    assert!(running.exists());
}

#[test]
fn results_that_cannot_be_spilled_are_cut_to_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    // A state "directory" that is a file: nothing can be written under it.
    let state = dir.path().join("state-file");
    std::fs::write(&state, b"not a directory").unwrap();
    // Eight results of 30,000 characters (Bash's own inline limit): 240,000
    // in all, over the 200,000 budget of one message.
    let calls = (0..8)
        .map(|i| bash(&format!("c{i}"), "head -c 40000 /dev/zero | tr '\\0' a"))
        .collect();
    let msg = message(dir.path(), calls);
    let out = crate::support::baton()
        .args(["run", "--cwd"])
        .arg(dir.path())
        .args(["--permission-mode", "bypassPermissions", "--state-dir"])
        .arg(&state)
        .arg(&msg)
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = reply["content"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    let texts: Vec<String> = results
        .iter()
        .map(|r| {
            r["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect()
        })
        .collect();
    let total: usize = texts.iter().map(|t| t.chars().count()).sum();
    eprintln!("8 results of 30,000 characters, state dir unwritable: {total} characters inline");
    assert!(
        total <= 200_000,
        "{total} characters inline, over the budget"
    );
    let cut = texts
        .iter()
        .filter(|t| t.contains("could not be saved to a file"))
        .count();
    assert!(cut >= 2, "{cut} results cut");
    for t in texts.iter().filter(|t| t.contains("could not be saved")) {
        assert!(t.contains("characters in the middle are left out"), "{t}");
        assert!(t.len() < 6_000, "{}", t.len());
    }
}
