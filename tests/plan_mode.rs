//! Plan mode as engine behaviour, through the library (`baton::Engine`
//! with the built-in tools and the default rule policy): EnterPlanMode
//! restricts the calls after it in the same message to read-only ones,
//! ExitPlanMode asks the host's approver, and the approval decides the
//! mode the session continues in.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::Arc;

use baton::engine::permission::RulePolicy;
use baton::engine::{ApprovalRequest, Approver, PermissionMode};
use baton::{Approval, Engine, Outcome, ToolUse};
use serde_json::{json, Value};
use std::sync::Mutex;

/// Answers every question with one answer and keeps the requests.
struct Host {
    answer: Approval,
    asked: Mutex<Vec<ApprovalRequest>>,
}

#[baton::engine::async_trait]
impl Approver for Host {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.asked.lock().unwrap().push(request);
        self.answer.clone()
    }
}

fn engine(dir: &std::path::Path, host: Arc<Host>, mode: PermissionMode) -> Engine {
    let policy = Arc::new(RulePolicy::new());
    let pool = baton::BuiltinConfig::default()
        .pool(policy.as_ref())
        .unwrap();
    Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join(".state"))
        .policy(policy)
        .permission_mode(mode)
        .approver(host)
        .build()
        .unwrap()
}

fn call(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse::new(id, name, input)
}

fn write(id: &str, dir: &std::path::Path, file: &str) -> ToolUse {
    call(
        id,
        "Write",
        json!({"file_path": dir.join(file), "content": "x\n"}),
    )
}

async fn run(engine: &Engine, calls: Vec<ToolUse>) -> Vec<baton::CallResult> {
    let batch = engine.open_batch().await.unwrap();
    for c in calls {
        batch.add(c).unwrap();
    }
    batch.finish().await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_change_holds_for_the_later_calls_of_the_message_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notes.txt"), "hello\n").unwrap();
    let host = Arc::new(Host {
        answer: Approval::AllowAndSetMode {
            mode: PermissionMode::AcceptEdits,
        },
        asked: Mutex::new(Vec::new()),
    });
    let engine = engine(d, host.clone(), PermissionMode::Default);
    let results = run(
        &engine,
        vec![
            call("enter", "EnterPlanMode", json!({})),
            write("w1", d, "during.txt"),
            call("read", "Read", json!({"file_path": d.join("notes.txt")})),
            call("bash", "Bash", json!({"command": "touch bash.txt"})),
            call(
                "exit",
                "ExitPlanMode",
                json!({"plan": "1. write after.txt"}),
            ),
            write("w2", d, "after.txt"),
        ],
    )
    .await;
    let outcome = |i: usize| results[i].outcome.clone();
    assert_eq!(outcome(0), Outcome::Success, "{}", results[0].text());
    assert_eq!(outcome(1), Outcome::Denied, "{}", results[1].text());
    assert!(
        results[1].text().contains("plan mode"),
        "{}",
        results[1].text()
    );
    assert_eq!(outcome(2), Outcome::Success, "{}", results[2].text());
    assert_eq!(outcome(3), Outcome::Denied, "{}", results[3].text());
    assert_eq!(outcome(4), Outcome::Success, "{}", results[4].text());
    assert!(
        results[4].text().contains("acceptEdits"),
        "{}",
        results[4].text()
    );
    assert!(results[4].text().contains("write after.txt"));
    // acceptEdits lets the write inside the workspace run unasked.
    assert_eq!(outcome(5), Outcome::Success, "{}", results[5].text());
    assert!(!d.join("during.txt").exists());
    assert!(!d.join("bash.txt").exists());
    assert!(d.join("after.txt").exists());
    let asked = host.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "only the plan was asked about: {asked:?}");
    assert_eq!(asked[0].tool_name, "ExitPlanMode");
    assert_eq!(asked[0].input["plan"], "1. write after.txt");
    // The mode outlives the message.
    let later = run(&engine, vec![write("w3", d, "later.txt")]).await;
    assert_eq!(later[0].outcome, Outcome::Success, "{}", later[0].text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_approval_restores_the_mode_before_plan_and_a_denial_keeps_plan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Before plan: acceptEdits. A plain allow goes back to it.
    let yes = Arc::new(Host {
        answer: Approval::Allow,
        asked: Mutex::new(Vec::new()),
    });
    let engine_yes = engine(d, yes, PermissionMode::AcceptEdits);
    let results = run(
        &engine_yes,
        vec![
            call("enter", "EnterPlanMode", json!({})),
            call("exit", "ExitPlanMode", json!({})),
            write("w", d, "restored.txt"),
        ],
    )
    .await;
    assert!(
        results[1].text().contains("acceptEdits"),
        "{}",
        results[1].text()
    );
    assert_eq!(
        results[2].outcome,
        Outcome::Success,
        "{}",
        results[2].text()
    );

    let no = Arc::new(Host {
        answer: Approval::Deny {
            reason: Some("add tests to the plan".into()),
        },
        asked: Mutex::new(Vec::new()),
    });
    let engine_no = engine(d, no, PermissionMode::AcceptEdits);
    let results = run(
        &engine_no,
        vec![
            call("enter", "EnterPlanMode", json!({})),
            call("exit", "ExitPlanMode", json!({"plan": "p"})),
            write("w", d, "kept_out.txt"),
        ],
    )
    .await;
    assert_eq!(results[1].outcome, Outcome::Denied);
    assert!(results[1].text().contains("add tests to the plan"));
    assert_eq!(results[2].outcome, Outcome::Denied, "{}", results[2].text());
    assert!(!d.join("kept_out.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_outside_plan_mode_and_bad_input_are_refused_before_asking() {
    let dir = tempfile::tempdir().unwrap();
    let host = Arc::new(Host {
        answer: Approval::Allow,
        asked: Mutex::new(Vec::new()),
    });
    let engine = engine(dir.path(), host.clone(), PermissionMode::Default);
    let results = run(
        &engine,
        vec![
            call("exit", "ExitPlanMode", json!({"plan": "p"})),
            call(
                "enter",
                "EnterPlanMode",
                json!({"mode": "bypassPermissions"}),
            ),
            call("enter2", "EnterPlanMode", json!({})),
            call(
                "bad",
                "ExitPlanMode",
                json!({"allowedPrompts": [{"tool": "Write", "prompt": "x"}]}),
            ),
        ],
    )
    .await;
    assert_eq!(
        results[0].outcome,
        Outcome::ValidationFailed,
        "{}",
        results[0].text()
    );
    assert!(results[0].text().contains("not in plan mode"));
    assert_eq!(results[1].outcome, Outcome::InvalidInput);
    assert_eq!(results[2].outcome, Outcome::Success);
    assert_eq!(results[3].outcome, Outcome::InvalidInput);
    assert!(host.asked.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mcp_like_and_search_tools_still_run_in_plan_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.rs"), "fn main() {}\n").unwrap();
    let host = Arc::new(Host {
        answer: Approval::Allow,
        asked: Mutex::new(Vec::new()),
    });
    let engine = engine(d, host, PermissionMode::Plan);
    let results = run(
        &engine,
        vec![
            call("g", "Glob", json!({"pattern": "*.rs"})),
            call("r", "Grep", json!({"pattern": "main"})),
            call("b", "Bash", json!({"command": "ls"})),
            call(
                "e",
                "Edit",
                json!({"file_path": d.join("a.rs"), "old_string": "main", "new_string": "x"}),
            ),
        ],
    )
    .await;
    assert_eq!(
        results[0].outcome,
        Outcome::Success,
        "{}",
        results[0].text()
    );
    assert_eq!(
        results[1].outcome,
        Outcome::Success,
        "{}",
        results[1].text()
    );
    assert_eq!(results[3].outcome, Outcome::Denied, "{}", results[3].text());
}

/// Plain stdout of a UserPromptSubmit hook is context for the model, as in
/// Claude Code (a real shell hook through the library's `fire_hook`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_stdout_of_a_user_prompt_submit_hook_is_context() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo \"it is $(printf late)\""}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (builder, _settings) = Engine::configured(dir.path(), Some(settings.as_path())).unwrap();
    let engine = builder
        .state_dir(dir.path().join(".state"))
        .build()
        .unwrap();
    let mut fields = serde_json::Map::new();
    fields.insert("prompt".into(), json!("hello"));
    let outcome = engine
        .fire_hook(baton::engine::HookEvent::UserPromptSubmit, fields)
        .await;
    assert_eq!(outcome.additional_context, ["it is late"], "{outcome:?}");
}
