//! EnterWorktree / ExitWorktree on real git repositories (issue 22 item 5),
//! through the library and through a real `baton serve`: the session's
//! working directory moves for the calls after EnterWorktree in the same
//! message and for later messages, permission path checks follow it, and
//! hooks get the new `cwd`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use baton::engine::hooks::{FnHook, HookEvent, HookOutcome, HookRegistry};
use baton::engine::permission::RulePolicy;
use baton::engine::{ApprovalRequest, Approver, PermissionMode};
use baton::{Approval, Engine, ToolUse};
use serde_json::{json, Value};

use crate::support::BATON;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo(root: &Path) -> PathBuf {
    let repo = std::fs::canonicalize(root).unwrap().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

/// Refuses every question and keeps what was asked.
#[derive(Default)]
struct No(Mutex<Vec<String>>);

#[baton::engine::async_trait]
impl Approver for No {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.0.lock().unwrap().push(format!("{request:?}"));
        Approval::Deny {
            reason: Some("no".into()),
        }
    }
}

fn text(r: &baton::CallResult) -> String {
    r.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_calls_permissions_and_hooks_follow_the_session_into_the_worktree() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let cwds = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let seen = cwds.clone();
    let hooks = HookRegistry::new(vec![Arc::new(FnHook::new(
        |event, _tool| event == HookEvent::PreToolUse,
        move |input: baton::engine::hooks::HookInput| {
            let seen = seen.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push((input.tool_name.clone(), input.cwd.clone()));
                HookOutcome::default()
            }
        },
    ))]);
    let asked = Arc::new(No::default());
    let policy = Arc::new(RulePolicy::new());
    let pool = baton::BuiltinConfig::default()
        .pool(policy.as_ref())
        .unwrap();
    let engine = Engine::builder(pool)
        .cwd(&repo)
        .state_dir(dir.path().join("state"))
        .policy(policy)
        .permission_mode(PermissionMode::AcceptEdits)
        .approver(asked.clone())
        .hooks(hooks)
        .build()
        .unwrap();
    let wt = repo.join(".claude/worktrees/task-1");
    let batch = engine.open_batch().await.unwrap();
    for call in [
        ToolUse::new("enter", "EnterWorktree", json!({"name": "task-1"})),
        ToolUse::new("pwd", "Bash", json!({"command": "pwd"})),
        ToolUse::new(
            "w-in",
            "Write",
            json!({"file_path": wt.join("new.txt"), "content": "in\n"}),
        ),
        ToolUse::new(
            "w-out",
            "Write",
            json!({"file_path": repo.join("main.txt"), "content": "x\n"}),
        ),
    ] {
        batch.add(call).unwrap();
    }
    let results = batch.finish().await.0;
    assert!(!results[0].is_error, "{}", text(&results[0]));
    assert_eq!(
        text(&results[1]).trim(),
        wt.display().to_string(),
        "pwd runs in the worktree"
    );
    assert!(!results[2].is_error, "{}", text(&results[2]));
    assert_eq!(std::fs::read_to_string(wt.join("new.txt")).unwrap(), "in\n");
    // The main checkout is no longer a root: acceptEdits does not cover it.
    assert!(results[3].is_error, "{}", text(&results[3]));
    assert!(!repo.join("main.txt").exists());
    assert_eq!(asked.0.lock().unwrap().len(), 1);
    {
        let cwds = cwds.lock().unwrap();
        assert_eq!(
            cwds[0],
            ("EnterWorktree".into(), repo.display().to_string())
        );
        for (tool, cwd) in &cwds[1..] {
            assert_eq!(cwd, &wt.display().to_string(), "{tool}");
        }
    }
    assert_eq!(
        engine.runtime().context().cwd,
        wt,
        "later messages start there"
    );

    let batch = engine.open_batch().await.unwrap();
    batch
        .add(ToolUse::new(
            "rm",
            "ExitWorktree",
            json!({"action": "remove"}),
        ))
        .unwrap();
    batch
        .add(ToolUse::new("pwd", "Bash", json!({"command": "pwd"})))
        .unwrap();
    let results = batch.finish().await.0;
    // new.txt is uncommitted: refused, listed, the session stays.
    assert!(
        results[0].is_error && text(&results[0]).contains("new.txt"),
        "{}",
        text(&results[0])
    );
    assert_eq!(text(&results[1]).trim(), wt.display().to_string());

    let batch = engine.open_batch().await.unwrap();
    batch
        .add(ToolUse::new(
            "keep",
            "ExitWorktree",
            json!({"action": "keep"}),
        ))
        .unwrap();
    batch
        .add(ToolUse::new("pwd", "Bash", json!({"command": "pwd"})))
        .unwrap();
    let results = batch.finish().await.0;
    assert!(!results[0].is_error, "{}", text(&results[0]));
    assert_eq!(text(&results[1]).trim(), repo.display().to_string());
    assert!(wt.join("new.txt").is_file(), "keep leaves the work");
    assert_eq!(engine.runtime().context().cwd, repo);
}

fn use_(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

fn result_text(lines: &[Value], id: &str) -> (bool, String) {
    let r = lines
        .iter()
        .find(|l| l["type"] == "result" && l["block"]["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {lines:?}"));
    let text = r["block"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (r["block"]["is_error"] == true, text)
}

#[test]
fn serve_moves_the_session_and_hooks_see_the_new_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let log = dir.path().join("hook.log");
    // A published-style command hook: it appends the input it was given.
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("cat >> {} && echo >> {}", log.display(), log.display())}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let mut s = baton_test_support::serve::Serve::start(
        BATON,
        &[
            "--cwd",
            repo.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
    );
    let wt = repo.join(".claude/worktrees/review");
    s.send(message(vec![
        use_("p0", "Bash", json!({"command": "pwd"})),
        use_("enter", "EnterWorktree", json!({"name": "review"})),
        use_("p1", "Bash", json!({"command": "pwd"})),
        use_("bad", "EnterWorktree", json!({"path": "/etc"})),
    ]));
    let lines = s.answering(|_| json!({"decision": "deny"}));
    assert_eq!(
        result_text(&lines, "p0").1.trim(),
        repo.display().to_string()
    );
    assert!(
        !result_text(&lines, "enter").0,
        "{:?}",
        result_text(&lines, "enter")
    );
    assert_eq!(result_text(&lines, "p1").1.trim(), wt.display().to_string());
    assert!(
        result_text(&lines, "bad").0,
        "a path that is not a worktree is refused"
    );

    s.send(message(vec![
        use_("p2", "Bash", json!({"command": "pwd"})),
        use_("exit", "ExitWorktree", json!({"action": "remove"})),
        use_("p3", "Bash", json!({"command": "pwd"})),
    ]));
    let lines = s.answering(|_| json!({"decision": "deny"}));
    assert_eq!(result_text(&lines, "p2").1.trim(), wt.display().to_string());
    assert!(
        !result_text(&lines, "exit").0,
        "{:?}",
        result_text(&lines, "exit")
    );
    assert_eq!(
        result_text(&lines, "p3").1.trim(),
        repo.display().to_string()
    );
    assert!(!wt.exists(), "a clean worktree is removed");
    s.finish();

    let cwds: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["cwd"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let (r, w) = (repo.display().to_string(), wt.display().to_string());
    assert_eq!(cwds, [r.clone(), w.clone(), w, r]);
}
