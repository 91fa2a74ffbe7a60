//! Settings files as found in public repositories load: every valid rule
//! is kept, odd entries are read strictly or skipped with one warning each
//! naming the file and the entry, and nothing is read more widely.

use serde_json::json;

use super::*;

fn fixture(name: &str) -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/settings")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

#[test]
fn a_real_file_loads_with_every_rule() {
    let ws = Ws::new();
    let home = ws.outside.clone();
    let (path, text) = fixture("007-dotfiles.json");
    let s = Settings::from_layers(&[(path, text)], &ws.root, Some(&home)).unwrap();
    use baton::engine::permission::RuleKind;
    assert_eq!(s.policy.rules(RuleKind::Allow).len(), 94);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.hooks.iter().count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_spellings_and_mistakes_load_strictly() {
    let ws = Ws::new();
    ws.write(".env", "SECRET=1\n");
    ws.write("secrets/k", "SECRET=2\n");
    ws.write("a.txt", "hello\n");
    let (path, text) = fixture("legacy-forms.json");
    let s = Settings::from_layers(&[(path.clone(), text.clone())], &ws.root, Some(&ws.outside))
        .unwrap();
    let name = path.display().to_string();
    // One warning per odd entry, each naming the file and the entry.
    for entry in [
        "Bash:*",
        "Edit:*",
        "Write:*",
        "mcp__servicenow-*",
        "allow[10]",
        "Bash:rm -rf /",
        "Edit:~/.ssh/*",
        "ask",
        "../shared",
    ] {
        let hits: Vec<&String> = s.warnings.iter().filter(|w| w.contains(entry)).collect();
        assert!(
            !hits.is_empty(),
            "no warning for {entry}: {:#?}",
            s.warnings
        );
        assert!(hits.iter().all(|w| w.starts_with(&name)), "{hits:?}");
    }
    // The valid deny rules hold, and the old-spelling denies deny.
    let run = run(
        &ws,
        &text,
        PermissionMode::Default,
        Asker::Nobody,
        vec![
            ("env", "Read", json!({"file_path": ws.p(".env")})),
            ("secret", "Read", json!({"file_path": ws.p("secrets/k")})),
            ("rm", "Bash", json!({"command": "rm -rf /"})),
            ("sudo", "Bash", json!({"command": "sudo rm -rf /tmp/x"})),
            // `Bash:*` allowed nothing: a command that is not read-only asks
            // (and without an approver is denied).
            ("touch", "Bash", json!({"command": "touch made"})),
            ("ok", "Read", json!({"file_path": ws.p("a.txt")})),
        ],
    )
    .await;
    for id in ["env", "secret", "rm", "sudo", "touch"] {
        assert!(denied(run.get(id)), "{id}: {}", run.text(id));
    }
    assert!(
        run.text("touch").contains("approval"),
        "{}",
        run.text("touch")
    );
    assert!(!ws.root.join("made").exists());
    assert!(!run.get("ok").is_error, "{}", run.text("ok"));
    // WebFetch(*) in deny removes the tool; disableBypassPermissionsMode holds.
    assert!(baton::BuiltinConfig::default()
        .pool(&*s.policy)
        .unwrap()
        .get("WebFetch")
        .is_none());
    let bypass = Engine::builder(baton::BuiltinConfig::default().pool(&*s.policy).unwrap())
        .cwd(&ws.root)
        .policy(s.policy.clone())
        .permission_mode(PermissionMode::BypassPermissions)
        .build();
    assert!(bypass.is_err());
}

#[test]
fn the_cli_runs_with_such_a_file_and_prints_its_warnings() {
    let ws = Ws::new();
    let (path, _) = fixture("legacy-forms.json");
    let msg = ws.state.join("m.json");
    std::fs::write(
        &msg,
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo hi"}}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = crate::support::baton()
        .args(["run", "--cwd"])
        .arg(&ws.root)
        .arg("--state-dir")
        .arg(&ws.state)
        .arg("--settings")
        .arg(&path)
        .arg(&msg)
        .env("HOME", &ws.outside)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi"));
    assert!(
        stderr.contains("Bash:*") && stderr.contains("legacy-forms.json"),
        "{stderr}"
    );
    // bypassPermissions is refused with a clear message.
    let out = crate::support::baton()
        .args(["run", "--permission-mode", "bypassPermissions", "--cwd"])
        .arg(&ws.root)
        .arg("--settings")
        .arg(&path)
        .arg(&msg)
        .env("HOME", &ws.outside)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("disableBypassPermissionsMode"), "{stderr}");
}
