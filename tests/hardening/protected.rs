//! Hole 7, the write side: writes that would turn later read-only commands
//! (or the next session) into code execution need explicit approval in
//! every mode but bypassPermissions, allow rules and acceptEdits included,
//! however the path is spelled.

use serde_json::json;

use super::*;

/// A workspace with a git repository, a nested one, a bare one, a `.git`
/// that is a link, and links pointing into them.
fn repos() -> Ws {
    let ws = Ws::new();
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write(".git/config", "[core]\n");
    std::fs::create_dir_all(ws.root.join(".git/objects")).unwrap();
    ws.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("bare.git/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(ws.root.join("bare.git/refs")).unwrap();
    ws.write("linked/gitdir/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(ws.root.join("linked/gitdir/objects")).unwrap();
    std::os::unix::fs::symlink(ws.root.join("linked/gitdir"), ws.root.join("linked/.git")).unwrap();
    std::os::unix::fs::symlink(ws.root.join(".git/config"), ws.root.join("innocent.cfg")).unwrap();
    std::os::unix::fs::symlink(ws.root.join(".git"), ws.root.join("notgit")).unwrap();
    ws.write("src/main.rs", "fn main() {}\n");
    ws
}

/// Writes that must ask, each as (id, tool, input).
fn protected_writes(ws: &Ws) -> Vec<(&'static str, &'static str, Value)> {
    let w =
        |p: &str| json!({"file_path": ws.p(p), "content": "[core]\n\tfsmonitor = touch PWNED\n"});
    vec![
        ("git_config", "Write", w(".git/config")),
        ("git_hook", "Write", w(".git/hooks/pre-commit")),
        ("nested", "Write", w("vendor/lib/.git/config")),
        ("bare", "Write", w("bare.git/config")),
        ("linked_gitdir", "Write", w("linked/.git/config")),
        ("through_link", "Write", w("innocent.cfg")),
        ("through_dir_link", "Write", w("notgit/hooks/post-checkout")),
        ("claude", "Write", w(".claude/settings.json")),
        ("claude_local", "Write", w(".claude/settings.local.json")),
        ("mcp", "Write", w(".mcp.json")),
        ("bashrc", "Write", w(".bashrc")),
        ("profile", "Write", w("sub/.profile")),
        ("zshrc", "Write", w(".zshrc")),
        ("envrc", "Write", w(".envrc")),
        ("bash_profile", "Write", w(".bash_profile")),
        ("dotdot", "Write", w("src/../.git/config")),
        (
            "notebook",
            "NotebookEdit",
            json!({"notebook_path": ws.p(".claude/nb.ipynb"), "new_source": "x", "cell_type": "code", "edit_mode": "insert"}),
        ),
    ]
}

const IDS: [&str; 17] = [
    "git_config",
    "git_hook",
    "nested",
    "bare",
    "linked_gitdir",
    "through_link",
    "through_dir_link",
    "claude",
    "claude_local",
    "mcp",
    "bashrc",
    "profile",
    "zshrc",
    "envrc",
    "bash_profile",
    "dotdot",
    "notebook",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_edits_and_allow_rules_still_ask() {
    for settings in [
        r#"{}"#,
        r#"{"permissions": {"allow": ["Edit", "Write", "NotebookEdit"]}}"#,
        r#"{"permissions": {"allow": ["Edit(**)", "Edit(/**)", "Edit(//**)"]}}"#,
    ] {
        for mode in [PermissionMode::AcceptEdits, PermissionMode::Default] {
            let ws = repos();
            // Write replaces an existing file only after a Read.
            let mut calls = vec![(
                "read_first",
                "Read",
                json!({"file_path": ws.p(".git/config")}),
            )];
            calls.extend(protected_writes(&ws));
            let run = run(&ws, settings, mode, Asker::Yes, calls).await;
            for id in IDS {
                assert!(
                    run.was_asked(id),
                    "{settings} {mode} {id} ran unasked: {}",
                    run.text(id)
                );
            }
            // The approver said yes, so the write happened.
            assert!(std::fs::read_to_string(ws.root.join(".git/config"))
                .unwrap()
                .contains("fsmonitor"));
            // An ordinary file is not asked about where edits are accepted.
            let normal = super::run(
                &ws,
                settings,
                PermissionMode::AcceptEdits,
                Asker::Yes,
                vec![(
                    "plain",
                    "Write",
                    json!({"file_path": ws.p("src/new.rs"), "content": "x"}),
                )],
            )
            .await;
            assert!(!normal.was_asked("plain"), "{}", normal.text("plain"));
            assert!(!normal.get("plain").is_error, "{}", normal.text("plain"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_approver_or_in_dont_ask_and_plan_they_are_denied() {
    for (mode, asker) in [
        (PermissionMode::AcceptEdits, Asker::Nobody),
        (PermissionMode::Default, Asker::Nobody),
        (PermissionMode::DontAsk, Asker::Yes),
        (PermissionMode::Plan, Asker::Yes),
    ] {
        let ws = repos();
        let allow = r#"{"permissions": {"allow": ["Edit", "Write", "NotebookEdit"]}}"#;
        let run = run(&ws, allow, mode, asker, protected_writes(&ws)).await;
        for id in IDS {
            assert!(denied(run.get(id)), "{mode} {id}: {}", run.text(id));
            assert!(!run.was_asked(id), "{mode} {id}");
        }
        assert_eq!(
            std::fs::read_to_string(ws.root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(!ws.root.join(".bashrc").exists());
        assert!(!ws.root.join(".mcp.json").exists());
        assert!(!ws.root.join("bare.git/config").exists());
        assert!(!ws.root.join("linked/gitdir/config").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_is_protected_too_and_bypass_permissions_is_the_exception() {
    let ws = repos();
    let calls = vec![
        ("read", "Read", json!({"file_path": ws.p(".git/config")})),
        (
            "edit",
            "Edit",
            json!({"file_path": ws.p(".git/config"), "old_string": "[core]", "new_string": "[core]\n\tpager = touch PWNED"}),
        ),
    ];
    let run1 = run(
        &ws,
        "{}",
        PermissionMode::AcceptEdits,
        Asker::Nobody,
        calls.clone(),
    )
    .await;
    assert!(
        !run1.get("read").is_error,
        "reading .git is fine: {}",
        run1.text("read")
    );
    assert!(denied(run1.get("edit")), "{}", run1.text("edit"));
    assert!(run1.text("edit").contains(".git"), "{}", run1.text("edit"));
    let run2 = run(
        &ws,
        "{}",
        PermissionMode::BypassPermissions,
        Asker::Nobody,
        calls,
    )
    .await;
    assert!(!run2.get("edit").is_error, "{}", run2.text("edit"));
    assert!(std::fs::read_to_string(ws.root.join(".git/config"))
        .unwrap()
        .contains("pager"));
}
