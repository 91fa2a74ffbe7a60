//! Real processes through the real pipeline: a REPL on a PTY, the cap on
//! sessions, deny rules, and nothing left behind.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::permission::RulePolicy;
use baton_engine::{Pipeline, ToolPool};
use serde_json::{json, Value};

use super::*;
use crate::test_support::{gone_within, pids_with, Harness};

fn harness() -> Harness {
    Harness::new(tools(&ExecConfig::default()).unwrap())
}

pub(super) fn text(result: &baton_engine::call::CallResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

fn session_id(reply: &str) -> Option<i32> {
    reply
        .lines()
        .find_map(|l| l.strip_prefix("Process running with session ID "))
        .and_then(|n| n.trim().parse().ok())
}

async fn exec(h: &Harness, input: Value) -> String {
    let r = h.run("exec_command", input, h.dir.path()).await;
    assert!(!r.is_error, "{}", text(&r));
    text(&r)
}

/// Reads the session's output half a second at a time, up to 40 times,
/// until `done` holds for everything seen (starting from `seen`).
async fn poll_until(h: &Harness, id: i32, mut seen: String, done: impl Fn(&str) -> bool) -> String {
    for _ in 0..40 {
        if done(&seen) {
            break;
        }
        let r = h
            .run(
                "write_stdin",
                json!({"session_id": id, "yield_time_ms": 500}),
                h.dir.path(),
            )
            .await;
        seen.push_str(&text(&r));
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_repl_on_a_pty_answers_42() {
    let h = harness();
    let reply = exec(
        &h,
        json!({"cmd": "python3 -q -i", "tty": true, "yield_time_ms": 500}),
    )
    .await;
    assert!(reply.starts_with("Chunk ID: "), "{reply}");
    assert!(reply.contains("Wall time: "), "{reply}");
    let id = session_id(&reply).unwrap_or_else(|| panic!("no session id in {reply}"));
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "print(6*7)\n", "yield_time_ms": 1000}),
            h.dir.path(),
        )
        .await;
    // A loaded machine may be slow to start Python: poll, generously.
    let seen = poll_until(&h, id, text(&r), |seen| {
        seen.lines().any(|l| l.trim() == "42")
    })
    .await;
    assert!(seen.lines().any(|l| l.trim() == "42"), "{seen}");
    // Ctrl-D ends the REPL: the reply gives its exit code, and the
    // session is gone. The reply may come once the REPL's last output
    // paused, before it exited (a loaded machine): poll for the exit.
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "\u{4}", "yield_time_ms": 5000}),
            h.dir.path(),
        )
        .await;
    let end = poll_until(&h, id, text(&r), |end| end.contains("Process exited")).await;
    assert!(end.contains("Process exited with code 0"), "{end}");
    let r = h
        .run("write_stdin", json!({"session_id": id}), h.dir.path())
        .await;
    assert!(r.is_error, "{}", text(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_command_reports_its_exit_code_and_a_plain_environment() {
    let h = harness();
    let reply = exec(
        &h,
        json!({"cmd": "echo \"pager=$PAGER term=$TERM color=$NO_COLOR\"; exit 3", "yield_time_ms": 10000}),
    )
    .await;
    assert!(reply.contains("Process exited with code 3"), "{reply}");
    assert!(reply.contains("pager=cat term=dumb color=1"), "{reply}");
    // Without a terminal, stdin is closed.
    let reply = exec(&h, json!({"cmd": "sleep 30", "yield_time_ms": 250})).await;
    let id = session_id(&reply).unwrap();
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "x\n"}),
            h.dir.path(),
        )
        .await;
    assert!(
        r.is_error && text(&r).contains("stdin is closed"),
        "{}",
        text(&r)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_sessions_then_the_oldest_idle_is_pruned() {
    let h = harness();
    let marker = "1964.25";
    let mut ids = Vec::new();
    for i in 0..MAX_SESSIONS {
        let reply = exec(
            &h,
            json!({"cmd": format!("sleep {marker}"), "yield_time_ms": 250}),
        )
        .await;
        ids.push(session_id(&reply).unwrap_or_else(|| panic!("{reply}")));
        if i + 1 >= WARN_SESSIONS {
            assert!(reply.contains("Warning: "), "session {}: {reply}", i + 1);
        } else {
            assert!(!reply.contains("Warning: "), "session {}: {reply}", i + 1);
        }
    }
    let store = ExecSessions::of(&h.session);
    assert_eq!(store.len(), MAX_SESSIONS);
    // Touch the first one: the second is now the one idle the longest.
    let r = h
        .run("write_stdin", json!({"session_id": ids[0]}), h.dir.path())
        .await;
    assert!(!r.is_error, "{}", text(&r));
    let reply = exec(&h, json!({"cmd": "sleep 1964.5", "yield_time_ms": 250})).await;
    assert!(reply.contains(&format!("Session {} (", ids[1])), "{reply}");
    assert_eq!(store.len(), MAX_SESSIONS);
    assert!(store.get(ids[1]).is_none() && store.get(ids[0]).is_some());
    let until = Instant::now() + Duration::from_secs(10);
    while pids_with(marker).len() > MAX_SESSIONS - 1 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(pids_with(marker).len(), MAX_SESSIONS - 1);
    store.stop_all().await;
    assert!(gone_within(marker, Duration::from_secs(10)).await);
    assert!(gone_within("1964.5", Duration::from_secs(10)).await);
}

/// Approves starting commands (the interactive shell asks), nothing else.
struct ApproveStarts;

#[baton_engine::async_trait]
impl baton_engine::permission::Approver for ApproveStarts {
    async fn approve(
        &self,
        request: baton_engine::permission::ApprovalRequest,
    ) -> baton_engine::permission::Approval {
        if request.tool_name == "exec_command" && !request.input.to_string().contains("rm ") {
            baton_engine::permission::Approval::Allow
        } else {
            baton_engine::permission::Approval::Deny { reason: None }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_rules_for_bash_cover_commands_and_shell_input() {
    let dir = tempfile::tempdir().unwrap();
    let policy =
        RulePolicy::parse(&["Bash(bash:*)"], &[], &["Bash(rm:*)"], None, dir.path()).unwrap();
    let mut h = harness();
    h.pipeline = Pipeline::new(ToolPool::of(tools(&ExecConfig::default()).unwrap()))
        .with_policy(Arc::new(policy))
        .with_approver(Arc::new(ApproveStarts));
    let victim = h.dir.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    let r = h
        .run("exec_command", json!({"cmd": "rm -f victim"}), h.dir.path())
        .await;
    assert!(r.is_error, "{}", text(&r));
    assert!(victim.exists());
    // A shell on a PTY (allowed): each line typed into it is judged too,
    // also when it is split over two writes.
    let reply = exec(
        &h,
        json!({"cmd": "bash --norc -i", "tty": true, "yield_time_ms": 500}),
    )
    .await;
    let id = session_id(&reply).unwrap_or_else(|| panic!("{reply}"));
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "rm -f victim\n"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error, "{}", text(&r));
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "r"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error, "a lone `r` is no allowed command: {}", text(&r));
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "\u{15}rm -f victim\n"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error, "{}", text(&r));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(victim.exists());
    ExecSessions::of(&h.session).stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_end_with_the_engine_leaving_no_process() {
    let marker = "2718.75";
    {
        let h = harness();
        exec(
            &h,
            json!({"cmd": format!("sleep {marker}"), "yield_time_ms": 250}),
        )
        .await;
        exec(
            &h,
            json!({"cmd": format!("sleep {marker}"), "tty": true, "yield_time_ms": 250}),
        )
        .await;
        exec(
            &h,
            json!({"cmd": format!("(sleep {marker} &) ; sleep {marker}"), "yield_time_ms": 250}),
        )
        .await;
        let until = Instant::now() + Duration::from_secs(10);
        while pids_with(marker).len() < 4 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(pids_with(marker).len(), 4);
        // The harness (and with it the engine's session) goes away here.
    }
    assert!(
        gone_within(marker, Duration::from_secs(10)).await,
        "{:?}",
        pids_with(marker)
    );
}

/// Writes `chars` until the shell takes it (it may still be starting, or
/// finishing the previous line); the reply, or the last refusal.
async fn type_when_ready(h: &Harness, id: i32, chars: &str) -> Result<String, String> {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let r = h
            .run(
                "write_stdin",
                json!({"session_id": id, "chars": chars, "yield_time_ms": 500}),
                h.dir.path(),
            )
            .await;
        if !r.is_error {
            return Ok(text(&r));
        }
        if Instant::now() > until {
            return Err(text(&r));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_reaches_a_shell_only_while_bash_holds_the_terminal() {
    let h = harness();
    let reply = exec(
        &h,
        json!({"cmd": "bash --norc -i", "tty": true, "yield_time_ms": 500}),
    )
    .await;
    let id = session_id(&reply).unwrap_or_else(|| panic!("{reply}"));
    // Bash reads plain lines: no readline.
    let out = type_when_ready(&h, id, "echo \"t=$TERM\"\n").await.unwrap();
    assert!(out.contains("t=dumb"), "{out}");
    let mut out = type_when_ready(&h, id, "cat\n").await.unwrap();
    // While `cat` holds the terminal, text is refused, saying so.
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "echo to-cat\n"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error && text(&r).contains("`cat`"), "{}", text(&r));
    // Ctrl-D alone ends `cat`; then bash takes text again.
    let r = h
        .run(
            "write_stdin",
            json!({"session_id": id, "chars": "\u{4}"}),
            h.dir.path(),
        )
        .await;
    assert!(!r.is_error, "{}", text(&r));
    out.push_str(
        &type_when_ready(&h, id, "echo back-$((6*7))\n")
            .await
            .unwrap(),
    );
    for _ in 0..20 {
        if out.contains("back-42") {
            break;
        }
        let r = h
            .run("write_stdin", json!({"session_id": id}), h.dir.path())
            .await;
        out.push_str(&text(&r));
    }
    assert!(out.contains("back-42"), "{out}");
    assert!(!out.contains("to-cat"), "{out}");
    ExecSessions::of(&h.session).stop_all().await;
}
