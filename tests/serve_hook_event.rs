//! The `hook_event` line of `baton serve` (issue 22 item 9): the host fires
//! the events of its own model loop through the configured hooks and gets
//! one `hook_event_result` line each. The hooks are shell scripts of the
//! kind people publish (jq on the input and on the transcript the host
//! names with `--transcript`), plus a prompt hook that asks the host's
//! model while the event waits.

use std::path::Path;

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.display().to_string()
}

fn transcript_line(kind: &str, text: &str) -> String {
    json!({
        "type": kind,
        "message": {"role": kind, "content": [{"type": "text", "text": text}]},
        "uuid": format!("u-{text}"),
        "parentUuid": null,
        "sessionId": "host-session",
        "timestamp": "2026-11-26T00:00:00.000Z",
        "cwd": "/"
    })
    .to_string()
        + "\n"
}

fn fire(s: &mut Serve, id: &str, event: &str, input: Value) -> Value {
    s.send(json!({"type": "hook_event", "id": id, "event": event, "input": input}));
    let line = s.next_of("hook_event_result");
    assert_eq!(line["id"], id, "{line}");
    assert_eq!(line["event"], event, "{line}");
    line
}

#[test]
fn host_loop_events_run_the_configured_hooks_and_answer_with_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let log = d.join("events.log");
    let transcript = d.join("host-transcript.jsonl");
    std::fs::write(
        &transcript,
        transcript_line("user", "fix the bug") + &transcript_line("assistant", "Looking into it."),
    )
    .unwrap();

    let context = script(
        &d,
        "context.sh",
        "#!/bin/sh\necho \"branch: main; prompt was $(jq -r .prompt)\"\n",
    );
    let done = script(
        &d,
        "done.sh",
        r#"#!/bin/sh
input=$(cat)
[ "$(printf '%s' "$input" | jq -r .stop_hook_active)" = "true" ] && exit 0
t=$(printf '%s' "$input" | jq -r .transcript_path)
last=$(tail -n 1 "$t" | jq -r '.message.content[] | select(.type == "text") | .text')
case "$last" in *DONE*) exit 0 ;; esac
printf '{"decision": "block", "reason": "Not finished: %s"}\n' "$last"
"#,
    );
    let record = script(
        &d,
        "record.sh",
        &format!("#!/bin/sh\njq -c '{{e: .hook_event_name, s: .session_id, c: .cwd, t: .transcript_path}}' >> {}\n", log.display()),
    );
    let setup = script(
        &d,
        "setup.sh",
        "#!/bin/sh\necho 'run make deps first' >&2\nexit 2\n",
    );
    let settings = d.join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": context}]}],
            "Stop": [{"hooks": [{"type": "command", "command": done}]}],
            "Notification": [{"matcher": "idle_prompt", "hooks": [{"type": "command", "command": record}]}],
            "ConfigChange": [{"matcher": "project_settings", "hooks": [{"type": "command", "command": record}]}],
            "Setup": [{"matcher": "init", "hooks": [{"type": "command", "command": setup}]}],
            "UserPromptExpansion": [{"hooks": [{"type": "prompt", "prompt": "May this expand? $ARGUMENTS"}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            d.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--transcript",
            transcript.to_str().unwrap(),
        ],
    );

    let r = fire(
        &mut s,
        "p1",
        "UserPromptSubmit",
        json!({"prompt": "fix the bug"}),
    );
    assert_eq!(r["decision"], "continue", "{r}");
    assert_eq!(
        r["additional_context"],
        json!(["branch: main; prompt was fix the bug"])
    );

    let r = fire(&mut s, "s1", "Stop", json!({"stop_hook_active": false}));
    assert_eq!(r["decision"], "block", "{r}");
    assert_eq!(r["reason"], "Not finished: Looking into it.");
    let r = fire(&mut s, "s2", "Stop", json!({"stop_hook_active": true}));
    assert_eq!(r["decision"], "continue", "{r}");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .and_then(|mut f| {
            std::io::Write::write_all(
                &mut f,
                transcript_line("assistant", "Fixed. DONE").as_bytes(),
            )
        })
        .unwrap();
    let r = fire(&mut s, "s3", "Stop", json!({"stop_hook_active": false}));
    assert_eq!(r["decision"], "continue", "{r}");

    // Matchers: only the matching notification and config source run.
    fire(
        &mut s,
        "n1",
        "Notification",
        json!({"message": "waiting", "notification_type": "permission_prompt"}),
    );
    fire(
        &mut s,
        "n2",
        "Notification",
        json!({"message": "idle", "notification_type": "idle_prompt", "title": "Claude"}),
    );
    fire(
        &mut s,
        "c1",
        "ConfigChange",
        json!({"source": "user_settings"}),
    );
    fire(
        &mut s,
        "c2",
        "ConfigChange",
        json!({"source": "project_settings", "file_path": "/p/.claude/settings.json"}),
    );
    let r = fire(&mut s, "i1", "Setup", json!({"trigger": "init"}));
    assert_eq!(
        (r["decision"].as_str(), r["reason"].as_str()),
        (Some("block"), Some("run make deps first")),
        "{r}"
    );
    let r = fire(&mut s, "i2", "Setup", json!({"trigger": "maintenance"}));
    assert_eq!(r["decision"], "continue", "{r}");

    // A prompt hook asks the host's model while the event waits.
    s.send(json!({"type": "hook_event", "id": "x1", "event": "UserPromptExpansion", "input": {
        "expansion_type": "slash_command", "command_name": "deploy", "command_args": "prod", "prompt": "/deploy prod"
    }}));
    let request = s.next_of("hook_request");
    assert!(
        request["prompt"].as_str().unwrap().contains("/deploy prod"),
        "{request}"
    );
    assert_eq!(request["input"]["hook_event_name"], "UserPromptExpansion");
    s.send(json!({"type": "hook_answer", "request_id": request["request_id"], "answer": {"ok": false, "reason": "no deploys today"}}));
    let r = s.next_of("hook_event_result");
    assert_eq!(
        (r["id"].as_str(), r["decision"].as_str()),
        (Some("x1"), Some("block")),
        "{r}"
    );
    assert!(
        r["reason"].as_str().unwrap().contains("no deploys today"),
        "{r}"
    );

    // Lines the hooks cannot take do nothing and say why.
    for (bad, why) in [
        (
            json!({"type": "hook_event", "event": "PreToolUse", "input": {}}),
            "cannot be fired",
        ),
        (
            json!({"type": "hook_event", "event": "Stop", "input": {}}),
            "stop_hook_active",
        ),
        (
            json!({"type": "hook_event", "event": "UserPromptSubmit", "input": {"prompt": "x", "cwd": "/etc"}}),
            "cwd",
        ),
        (
            json!({"type": "hook_event", "event": "Setup", "input": {"trigger": "reboot"}}),
            "trigger",
        ),
    ] {
        s.send(bad.clone());
        let e = s.next_of("error");
        assert!(e["message"].as_str().unwrap().contains(why), "{bad} -> {e}");
    }
    s.finish();

    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&str> = logged.iter().map(|l| l["e"].as_str().unwrap()).collect();
    assert_eq!(events, ["Notification", "ConfigChange"]);
    for l in &logged {
        assert_eq!(l["c"], d.display().to_string());
        assert_eq!(l["t"], transcript.display().to_string());
        assert!(l["s"].as_str().is_some_and(|s| !s.is_empty()));
    }
}

/// The same events through the library: `Engine::fire_hook` with the
/// builder's transcript path, matchers on the new events' fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_hosts_fire_the_events_with_their_transcript() {
    use baton::engine::hooks::{HookDecision, HookEvent};
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let transcript = d.join("mine.jsonl");
    std::fs::write(&transcript, transcript_line("assistant", "half way")).unwrap();
    let check = script(
        &d,
        "check.sh",
        "#!/bin/sh\nt=$(jq -r .transcript_path)\ntail -n 1 \"$t\" | jq -e '.message.content[0].text | test(\"DONE\")' >/dev/null || { echo \"not done in $t\" >&2; exit 2; }\n",
    );
    let settings = d.join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": check}]}],
            "UserPromptExpansion": [{"matcher": "deploy", "hooks": [{"type": "command", "command": "echo 'no deploys' >&2; exit 2"}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let (builder, _) = baton::Engine::configured(&d, Some(&settings)).unwrap();
    let engine = builder
        .state_dir(d.join("state"))
        .transcript_path(&transcript)
        .build()
        .unwrap();
    let mut stop = serde_json::Map::new();
    stop.insert("stop_hook_active".into(), json!(false));
    let outcome = engine.fire_hook(HookEvent::Stop, stop.clone()).await;
    assert_eq!(outcome.decision, Some(HookDecision::Deny), "{outcome:?}");
    assert_eq!(
        outcome.reason.as_deref(),
        Some(format!("not done in {}", transcript.display()).as_str())
    );
    std::fs::write(&transcript, transcript_line("assistant", "DONE")).unwrap();
    let outcome = engine.fire_hook(HookEvent::Stop, stop).await;
    assert_eq!(outcome.decision, None, "{outcome:?}");

    let expansion = |name: &str| {
        let mut f = serde_json::Map::new();
        f.insert("expansion_type".into(), json!("slash_command"));
        f.insert("command_name".into(), json!(name));
        f.insert("command_args".into(), json!(""));
        f.insert("prompt".into(), json!(format!("/{name}")));
        f
    };
    let blocked = engine
        .fire_hook(HookEvent::UserPromptExpansion, expansion("deploy"))
        .await;
    assert_eq!(blocked.reason.as_deref(), Some("no deploys"));
    let other = engine
        .fire_hook(HookEvent::UserPromptExpansion, expansion("review"))
        .await;
    assert_eq!(other.decision, None, "the matcher reads command_name");
}
