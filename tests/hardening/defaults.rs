//! Secure defaults: an engine without a policy is not allow-all; allow-all
//! is asked for by name; bypassPermissions can be switched off; the state
//! directory is readable but not writable; file tools refuse parameters
//! they do not know.

use serde_json::json;

use super::*;

async fn calls_on(engine: &Engine, calls: Vec<(&str, &str, Value)>) -> Run {
    run_on(engine, &Recorder::default(), calls).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_without_a_policy_applies_the_spec_default() {
    let ws = Ws::new();
    ws.write("a.txt", "hello\n");
    let outside = ws.outside.join("pwned");
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&baton::engine::permission::RulePolicy::new())
            .unwrap(),
    )
    .cwd(&ws.root)
    .state_dir(&ws.state)
    .build()
    .unwrap();
    let calls = vec![
        ("ls", "Bash", json!({"command": "ls"})),
        ("read", "Read", json!({"file_path": ws.p("a.txt")})),
        ("grep", "Grep", json!({"pattern": "hello"})),
        (
            "touch_out",
            "Bash",
            json!({"command": format!("touch {}", outside.display())}),
        ),
        ("touch_in", "Bash", json!({"command": "touch inside"})),
        (
            "write",
            "Write",
            json!({"file_path": ws.p("b.txt"), "content": "x"}),
        ),
        ("read_out", "Read", json!({"file_path": "/etc/hostname"})),
    ];
    let run = calls_on(&engine, calls).await;
    for id in ["ls", "read", "grep"] {
        assert!(!run.get(id).is_error, "{id}: {}", run.text(id));
    }
    for id in ["touch_out", "touch_in", "write", "read_out"] {
        assert!(denied(run.get(id)), "{id}: {}", run.text(id));
        assert!(run.text(id).contains("approval"), "{id}: {}", run.text(id));
    }
    assert!(!outside.exists());
    assert!(!ws.root.join("inside").exists());
    assert!(!ws.root.join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_all_is_asked_for_by_name() {
    let ws = Ws::new();
    let outside = ws.outside.join("made");
    let engine = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&baton::engine::AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(&ws.root)
    .state_dir(&ws.state)
    .allow_all_unsafe()
    .build()
    .unwrap();
    let run = calls_on(
        &engine,
        vec![(
            "t",
            "Bash",
            json!({"command": format!("touch {}", outside.display())}),
        )],
    )
    .await;
    assert!(!run.get("t").is_error, "{}", run.text("t"));
    assert!(outside.exists());
}

#[test]
fn bypass_permissions_can_be_switched_off() {
    let ws = Ws::new();
    for settings in [
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
        r#"{"permissions": {"disableBypassPermissionsMode": "disable", "defaultMode": "bypassPermissions"}}"#,
        r#"{"disableBypassPermissionsMode": "disable"}"#,
    ] {
        let layers = [(ws.state.join("s.json"), settings.to_string())];
        let s = Settings::from_layers(&layers, &ws.root, None).unwrap();
        let err = Engine::builder(baton::BuiltinConfig::default().pool(&*s.policy).unwrap())
            .cwd(&ws.root)
            .policy(s.policy.clone())
            .permission_mode(PermissionMode::BypassPermissions)
            .build()
            .unwrap_err();
        assert!(
            err.to_string().contains("disableBypassPermissionsMode"),
            "{err}"
        );
        assert!(err.to_string().contains("s.json"), "{err}");
        // Every other mode still builds.
        for mode in MODES {
            Engine::builder(baton::BuiltinConfig::default().pool(&*s.policy).unwrap())
                .cwd(&ws.root)
                .policy(s.policy.clone())
                .permission_mode(mode)
                .build()
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_bypass_that_arrives_anyway_is_the_default_mode() {
    // A context switched to bypassPermissions after the engine was built
    // (a host's own mode switch) still gets no bypass.
    let ws = Ws::new();
    let layers = [(
        ws.state.join("s.json"),
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#.to_string(),
    )];
    let s = Settings::from_layers(&layers, &ws.root, None).unwrap();
    let pipeline =
        baton::engine::Pipeline::new(baton::BuiltinConfig::default().pool(&*s.policy).unwrap())
            .with_policy(s.policy.clone());
    let context =
        baton::engine::Context::new(&ws.root).with_mode(PermissionMode::BypassPermissions);
    let run = run_pipeline(
        pipeline,
        &ws,
        context,
        vec![ToolUse::new("t", "Bash", json!({"command": "touch made"}))],
    )
    .await;
    assert!(denied(run.get("t")), "{}", run.text("t"));
    assert!(!ws.root.join("made").exists());
}

/// Runs `calls` as one batch on a runtime built straight from `pipeline`
/// (no `Engine`, as an embedder of the lower layers would).
async fn run_pipeline(
    pipeline: baton::engine::Pipeline,
    ws: &Ws,
    context: baton::engine::Context,
    calls: Vec<ToolUse>,
) -> Run {
    let session = baton::engine::Session::new("s", &ws.state);
    let runtime = baton::actors::Runtime::builder(pipeline, session, context).build();
    let (sink, mut events) = baton::EventSink::tokio();
    let batch = runtime.open_batch(sink).await.unwrap();
    for call in calls {
        batch.add(call).unwrap();
    }
    batch.end();
    let mut results = Vec::new();
    while let Some(event) = events.recv().await {
        match event {
            baton::Event::Result { result, .. } => results.push(*result),
            baton::Event::Done(_) => break,
            _ => {}
        }
    }
    Run {
        results,
        asked: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_without_a_policy_applies_the_spec_default() {
    // The layer below `Engine`: `Pipeline::new` alone once allowed all.
    let ws = Ws::new();
    ws.write("a.txt", "hello\n");
    let outside = ws.outside.join("pwned");
    let policy = baton::engine::permission::RulePolicy::new();
    let pipeline =
        baton::engine::Pipeline::new(baton::BuiltinConfig::default().pool(&policy).unwrap());
    let calls = vec![
        ToolUse::new("ls", "Bash", json!({"command": "ls"})),
        ToolUse::new("read", "Read", json!({"file_path": ws.p("a.txt")})),
        ToolUse::new("touch_in", "Bash", json!({"command": "touch inside"})),
        ToolUse::new(
            "touch_out",
            "Bash",
            json!({"command": format!("touch {}", outside.display())}),
        ),
        ToolUse::new(
            "write",
            "Write",
            json!({"file_path": ws.p("b.txt"), "content": "x"}),
        ),
    ];
    for mode in [PermissionMode::Default, PermissionMode::DontAsk] {
        let context = baton::engine::Context::new(&ws.root).with_mode(mode);
        let run = run_pipeline(pipeline.clone(), &ws, context, calls.clone()).await;
        for id in ["ls", "read"] {
            assert!(!run.get(id).is_error, "{mode:?} {id}: {}", run.text(id));
        }
        for id in ["touch_in", "touch_out", "write"] {
            assert!(denied(run.get(id)), "{mode:?} {id}: {}", run.text(id));
        }
    }
    assert!(!outside.exists());
    assert!(!ws.root.join("inside").exists());
    assert!(!ws.root.join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_directory_is_readable_but_not_writable() {
    let ws = Ws::new();
    let log = ws.state.join("shell-1.log");
    std::fs::write(&log, "build output line\n").unwrap();
    for mode in MODES {
        let calls = vec![
            (
                "read",
                "Read",
                json!({"file_path": log.display().to_string()}),
            ),
            (
                "grep",
                "Grep",
                json!({"pattern": "build", "path": ws.state.display().to_string()}),
            ),
            (
                "glob",
                "Glob",
                json!({"pattern": "*.log", "path": ws.state.display().to_string()}),
            ),
            (
                "write",
                "Write",
                json!({"file_path": ws.state.join("new.txt").display().to_string(), "content": "x"}),
            ),
            (
                "cat",
                "Bash",
                json!({"command": format!("cat {}", log.display())}),
            ),
            (
                "tail",
                "Bash",
                json!({"command": format!("tail -n 5 {} | grep build", log.display())}),
            ),
            (
                "cd_cat",
                "Bash",
                json!({"command": format!("cd {} && wc -l shell-1.log", ws.state.display())}),
            ),
            (
                "bash_write",
                "Bash",
                json!({"command": format!("echo x > {}/bash.txt", ws.state.display())}),
            ),
        ];
        let run = run(&ws, "{}", mode, Asker::Nobody, calls).await;
        for id in ["read", "grep", "glob", "cat", "tail", "cd_cat"] {
            assert!(!run.get(id).is_error, "{mode} {id}: {}", run.text(id));
        }
        assert!(run.text("read").contains("build output line"));
        assert!(run.text("cat").contains("build output line"));
        assert!(denied(run.get("write")), "{mode}: {}", run.text("write"));
        assert!(!ws.state.join("new.txt").exists());
        assert!(
            denied(run.get("bash_write")),
            "{mode}: {}",
            run.text("bash_write")
        );
        assert!(!ws.state.join("bash.txt").exists());
    }
    // acceptEdits does not make it writable even with an approver's help
    // unasked: the write is asked about.
    let run = run(
        &ws,
        "{}",
        PermissionMode::AcceptEdits,
        Asker::Yes,
        vec![(
            "write",
            "Write",
            json!({"file_path": ws.state.join("new.txt").display().to_string(), "content": "x"}),
        )],
    )
    .await;
    assert!(run.was_asked("write"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_refuse_unknown_parameters() {
    let ws = Ws::new();
    ws.write("a.txt", "one\n");
    ws.write(
        "n.ipynb",
        r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    );
    let calls = vec![
        (
            "write",
            "Write",
            json!({"file_path": ws.p("w.txt"), "content": "x", "mode": "0777"}),
        ),
        (
            "read",
            "Read",
            json!({"file_path": ws.p("a.txt"), "encoding": "latin1"}),
        ),
        (
            "edit",
            "Edit",
            json!({"file_path": ws.p("a.txt"), "old_string": "one", "new_string": "two", "backup": true}),
        ),
        (
            "nb",
            "NotebookEdit",
            json!({"notebook_path": ws.p("n.ipynb"), "new_source": "x", "cell_type": "code", "edit_mode": "insert", "execute": true}),
        ),
    ];
    let run = run(
        &ws,
        "{}",
        PermissionMode::BypassPermissions,
        Asker::Nobody,
        calls,
    )
    .await;
    for (id, field) in [
        ("write", "mode"),
        ("read", "encoding"),
        ("edit", "backup"),
        ("nb", "execute"),
    ] {
        let r = run.get(id);
        assert_eq!(r.outcome, Outcome::InvalidInput, "{id}: {}", run.text(id));
        assert!(run.text(id).contains(field), "{id}: {}", run.text(id));
    }
    assert!(!ws.root.join("w.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.root.join("a.txt")).unwrap(),
        "one\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_files_configure_an_engine_in_one_call() {
    // The project's settings file, as a user has it: a deny rule, an allow
    // rule, a hook and the env block; `Engine::configured` applies them all.
    let ws = Ws::new();
    ws.write(
        ".claude/settings.json",
        r#"{
          "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(touch:*)"]},
          "env": {"BATON_TEST_GREETING": "from-settings"},
          "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "cat > hook-saw.json"}]}]}
        }"#,
    );
    ws.write("victim.txt", "keep\n");
    let (builder, _settings) = Engine::configured(&ws.root, None).unwrap();
    let engine = builder.state_dir(&ws.state).build().unwrap();
    let calls = vec![
        ("rm", "Bash", json!({"command": "rm victim.txt"})),
        ("touch", "Bash", json!({"command": "touch made"})),
        (
            "env",
            "Bash",
            json!({"command": "echo \"$BATON_TEST_GREETING\""}),
        ),
    ];
    let run = calls_on(&engine, calls).await;
    assert!(denied(run.get("rm")), "{}", run.text("rm"));
    assert!(ws.root.join("victim.txt").exists());
    assert!(!run.get("touch").is_error, "{}", run.text("touch"));
    assert!(ws.root.join("made").exists());
    assert!(
        run.text("env").contains("from-settings"),
        "{}",
        run.text("env")
    );
    let saw = std::fs::read_to_string(ws.root.join("hook-saw.json")).unwrap();
    assert!(saw.contains("\"tool_name\":\"Bash\""), "{saw}");
}
