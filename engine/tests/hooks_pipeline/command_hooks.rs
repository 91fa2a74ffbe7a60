//! Process handling of command hooks: timeouts kill the whole process
//! group, dropped hooks leave nothing behind, matching hooks run in parallel.

use std::time::{Duration, Instant};

use baton_engine::hooks::{CommandHook, ToolNameMatcher};
use baton_engine::{Hook, HookEvent, HookInput, Outcome};
use baton_test_support::procs;
use serde_json::json;

use super::{quote, ran, Env};

/// Whether the process whose id a pid file held still runs.
fn alive(pid: &str) -> bool {
    pid.parse().is_ok_and(procs::alive)
}

/// Waits (generously) for `check` to hold.
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check()
}

/// A hook that starts a marked grandchild and then hangs.
fn hanging_script(env: &Env, marker: &str) -> String {
    let pids = env.project.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let script = env.script(
        "hang.sh",
        &format!(
            "#!/bin/bash\necho $$ > {p}/shell\nbash -c 'sleep 1000; true' {marker} &\necho $! > {p}/child\nsleep 1000\n",
            p = quote(&pids)
        ),
    );
    quote(&script)
}

fn unique_marker(tag: &str) -> String {
    procs::marker(&format!("baton-test-{tag}-"))
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_group() {
    let env = Env::new();
    let marker = unique_marker("timeout");
    let command = hanging_script(&env, &marker);
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": command, "timeout": 1}
        ]}]}
    }));
    let p = env.pipeline(&settings);
    let started = Instant::now();
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert!(ran(&r), "a timed-out hook must not block: {}", r.text());
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    assert!(
        r.diagnostics[0].contains("timed out"),
        "{:?}",
        r.diagnostics
    );

    let read = |name: &str| {
        std::fs::read_to_string(env.project.join("pids").join(name))
            .unwrap()
            .trim()
            .to_string()
    };
    let (shell, child) = (read("shell"), read("child"));
    assert!(
        eventually(|| !alive(&shell) && !alive(&child) && procs::pids_with(&marker).is_empty())
            .await,
        "left behind: shell alive={} child alive={} marked={:?}",
        alive(&shell),
        alive(&child),
        procs::pids_with(&marker)
    );
}

#[tokio::test]
async fn a_dropped_hook_leaves_no_process_behind() {
    let env = Env::new();
    let marker = unique_marker("drop");
    let command = hanging_script(&env, &marker);
    let hook = CommandHook::new(
        HookEvent::PreToolUse,
        ToolNameMatcher::All,
        command,
        &env.project,
    );
    let input = HookInput {
        session_id: "s".into(),
        transcript_path: String::new(),
        cwd: env.cwd.display().to_string(),
        permission_mode: "default".into(),
        hook_event_name: HookEvent::PreToolUse,
        tool_name: "Bash".into(),
        tool_input: json!({"command": "ls"}),
        tool_use_id: "t".into(),
        tool_response: None,
        error: None,
        caller: None,
        extra: Default::default(),
    };
    // The caller gives up (its call was cancelled) while the hook hangs.
    let marked = |m: &str| !procs::pids_with(m).is_empty();
    let mut run = Box::pin(hook.run(&input));
    let gave_up = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::select! {
            _ = &mut run => false,
            _ = async { while !marked(&marker) { tokio::time::sleep(Duration::from_millis(50)).await } } => true,
        }
    })
    .await
    .unwrap();
    assert!(gave_up, "the hook finished although it should hang");
    drop(run);
    assert!(
        eventually(|| procs::pids_with(&marker).is_empty()).await,
        "left behind: {:?}",
        procs::pids_with(&marker)
    );
}

#[tokio::test]
async fn matching_hooks_run_in_parallel() {
    let env = Env::new();
    let dir = env.project.join("rendezvous");
    std::fs::create_dir_all(&dir).unwrap();
    // Each hook announces itself, then waits for the other: run one after
    // the other, the first would give up and exit 1 (a diagnostic).
    let side = |me: &str, other: &str| {
        env.script(
            &format!("{me}.sh"),
            &format!(
                "#!/bin/bash\ncat >/dev/null\ntouch {d}/{me}\nfor i in $(seq 300); do [ -e {d}/{other} ] && exit 0; sleep 0.1; done\necho 'the other hook never ran' >&2\nexit 1\n",
                d = quote(&dir)
            ),
        )
    };
    let (a, b) = (side("a", "b"), side("b", "a"));
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": quote(&a)}]},
            {"matcher": ".*", "hooks": [{"type": "command", "command": quote(&b)}]}
        ]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r));
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

#[tokio::test]
async fn in_dont_ask_mode_a_hooks_ask_is_a_deny() {
    let env = Env::new();
    let script = env.script(
        "ask.sh",
        "#!/bin/bash\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"double-check\"}}'\n",
    );
    let settings = env.settings(json!({
        "permissions": {"defaultMode": "dontAsk", "allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": quote(&script)}]}]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("dontAsk"), "{}", r.text());
}

/// Claude Code's `AsyncHookJSONOutput`: a hook whose first line is
/// `{"async": true}` no longer holds up the call; its later answer is
/// ignored, and at its `asyncTimeout` it is killed with what it started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_answers_async_true_runs_on_in_the_background() {
    let env = Env::new();
    let marker = unique_marker("async");
    let pids = env.project.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let script = env.script(
        "async.sh",
        &format!(
            "#!/bin/bash\necho $$ > {p}/shell\nbash -c 'sleep 1000; true' {marker} &\necho $! > {p}/child\n\
             echo '{{\"async\": true, \"asyncTimeout\": 2000}}'\nsleep 1000\n\
             echo '{{\"decision\": \"block\", \"reason\": \"too late\"}}'\n",
            p = quote(&pids)
        ),
    );
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": quote(&script), "timeout": 600}
        ]}]}
    }));
    let p = env.pipeline(&settings);
    let started = Instant::now();
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    // Far below the hook's 600 s timeout and its 1000 s sleep.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    assert!(ran(&r), "{}", r.text());
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let read = |name: &str| {
        std::fs::read_to_string(pids.join(name))
            .unwrap()
            .trim()
            .to_string()
    };
    let (shell, child) = (read("shell"), read("child"));
    assert!(
        eventually(|| !alive(&shell) && !alive(&child) && procs::pids_with(&marker).is_empty())
            .await,
        "left behind after asyncTimeout: shell alive={} child alive={}",
        alive(&shell),
        alive(&child)
    );
}
