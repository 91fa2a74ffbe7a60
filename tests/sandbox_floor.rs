//! The read-only floor, end to end through `baton run`: a command that runs
//! unasked because it was judged read-only is confined by the kernel; one
//! that an allow rule vouched for is not.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::baton_run;

fn confinable() -> bool {
    let ok = baton_engine::sandbox::support().usable();
    if !ok {
        eprintln!("skipping: the kernel cannot confine here");
    }
    ok
}

/// Runs `commands` as one message of Bash calls in `work`.
fn run(work: &Path, settings: Option<&Value>, commands: &[&str]) -> Vec<(String, bool)> {
    let state = tempfile::tempdir().expect("state dir");
    let inputs: Vec<Value> = commands.iter().map(|c| json!({"command": c})).collect();
    baton_run::bash_calls(work, state.path(), settings, &[], &inputs)
}

struct Scene {
    _dir: tempfile::TempDir,
    work: std::path::PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let work = root.join("work");
    let outside = root.join("outside");
    std::fs::create_dir_all(work.join("src")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(work.join("src/lib.rs"), "pub fn hello() {}\n").expect("write");
    std::fs::write(outside.join("secret.txt"), "TOP-SECRET-VALUE\n").expect("write");
    std::os::unix::fs::symlink(&outside, work.join("vendor")).expect("symlink");
    Scene { _dir: dir, work }
}

#[test]
fn judged_read_only_commands_run_confined() {
    if !confinable() {
        return;
    }
    let s = scene();
    // `/proc` in the workspace, so that reading it runs unasked.
    let settings = json!({"permissions": {"additionalDirectories": ["/proc"]}});
    let results = run(
        &s.work,
        Some(&settings),
        &[
            // Runs, and shows it is confined: no new privileges, a filter.
            "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
            "cat src/lib.rs",
            // A recursive reader that follows the link out of the
            // workspace: whatever the classifier says, the secret stays
            // unread.
            "grep -R TOP-SECRET . || echo no-match",
            "cd src && pwd",
        ],
    );
    assert!(results[0].0.contains("NoNewPrivs:\t1"), "{results:?}");
    assert!(results[0].0.contains("Seccomp:\t2"), "{results:?}");
    assert!(results[1].0.contains("pub fn hello"), "{results:?}");
    assert!(!results[2].0.contains("TOP-SECRET-VALUE"), "{results:?}");
    assert!(
        results[3].0.contains("Working directory is now"),
        "{results:?}"
    );
}

#[test]
fn commands_an_allow_rule_vouches_for_are_not_confined() {
    if !confinable() {
        return;
    }
    let s = scene();
    let settings = json!({"permissions": {
        "allow": ["Bash(grep:*)", "Bash(touch:*)"],
        "additionalDirectories": ["/proc"]
    }});
    let results = run(
        &s.work,
        Some(&settings),
        &[
            "grep -E '^NoNewPrivs:' /proc/self/status",
            "touch made-by-rule",
        ],
    );
    assert!(results[0].0.contains("NoNewPrivs:\t0"), "{results:?}");
    assert!(!results[1].1, "{results:?}");
    assert!(s.work.join("made-by-rule").exists());
}

#[test]
fn read_deny_rules_are_unreadable_under_the_floor() {
    if !confinable() {
        return;
    }
    let s = scene();
    std::fs::write(s.work.join(".env"), "API_KEY=hunter2\n").expect("write");
    std::fs::write(s.work.join("src/.env"), "API_KEY=hunter3\n").expect("write");
    let settings = json!({"permissions": {"deny": ["Read(.env)"]}});
    let results = run(
        &s.work,
        Some(&settings),
        &["grep -r API_KEY .", "ls -a", "cat src/lib.rs"],
    );
    assert!(!results[0].0.contains("hunter"), "{results:?}");
    assert!(
        results[1].0.contains(".env"),
        "listing still works: {results:?}"
    );
    assert!(results[2].0.contains("pub fn hello"), "{results:?}");
}
