//! The Bash tool end to end, through the real pipeline and a real bash.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bash_common::{marker, next_task_note, Harness};
use baton_engine::call::Outcome;
use baton_engine::{CancelReason, ProgressSink, ToolUse};
use baton_test_support::procs::{running, settle, wait_started};
use baton_tools::bash::{self, BashConfig};
use serde_json::json;

use crate::bash_common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_a_command_and_merges_output_in_order() {
    let h = Harness::new();
    let r = h
        .bash(json!({"command": "echo one; echo two >&2; echo three", "description": "print"}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "one\ntwo\nthree");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_exit_is_an_error_with_its_code_and_output() {
    let h = Harness::new();
    let r = h.bash(json!({"command": "echo building; exit 3"})).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, Outcome::ToolError);
    let text = r.text();
    assert!(text.contains("building"), "{text}");
    assert!(text.contains("Exit code 3"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_without_match_is_an_answer_not_an_error() {
    let h = Harness::new();
    std::fs::write(h.work.join("f.txt"), "alpha\n").unwrap();
    let r = h.bash(json!({"command": "grep beta f.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().contains("Exit code 1"));
    let r = h.bash(json!({"command": "false"})).await;
    assert!(r.is_error);
    let r = h.bash(json!({"command": "grep beta missing-file"})).await;
    assert!(r.is_error, "exit 2 of grep is an error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_by_a_signal_is_an_error() {
    let h = Harness::new();
    let r = h.bash(json!({"command": "kill -9 $$"})).await;
    assert!(r.is_error);
    assert!(r.text().contains("signal 9"), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backgrounded_grandchild_does_not_hold_the_call() {
    let h = Harness::new();
    let m = marker();
    let started = Instant::now();
    let r = h
        .bash(json!({"command": format!("sleep {m} & echo hi")}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().starts_with("hi"), "{}", r.text());
    assert!(r.text().contains("still running"), "{}", r.text());
    assert_eq!(running(&m), 1);
    bash::stop_all(&h.session).await;
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_stops_the_group_and_keeps_output() {
    let h = Harness::killing_at_timeout();
    let m = marker();
    let r = h
        .bash(json!({"command": format!("echo before; sleep {m}"), "timeout": 500}))
        .await;
    assert!(r.is_error);
    let text = r.text();
    assert!(text.contains("before"), "{text}");
    assert!(text.contains("timed out after"), "{text}");
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_returns_promptly_with_output_so_far() {
    let h = Harness::new();
    let m = marker();
    let ctx = h.ctx("call-c");
    let cancel = ctx.cancel.clone();
    let marker_for_wait = m.clone();
    tokio::spawn(async move {
        // Two marked processes: the shell (the command is in its
        // arguments) and then `sleep`, which runs after `echo`. Waiting for
        // the shell alone raced the echo on a loaded machine.
        wait_started(&marker_for_wait, 2).await;
        cancel.cancel(CancelReason::User);
    });
    let started = Instant::now();
    let r = h
        .call(
            "Bash",
            json!({"command": format!("echo partial; sleep {m}")}),
            ctx,
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(r.is_error);
    assert_eq!(r.outcome, Outcome::Cancelled { started: true });
    assert!(r.text().contains("partial"), "{}", r.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cd_carries_over_inside_the_roots_only() {
    let h = Harness::new();
    std::fs::create_dir(h.work.join("sub")).unwrap();
    let r = h.bash(json!({"command": "cd sub && pwd"})).await;
    assert!(!r.is_error, "{}", r.text());
    let modifier = r
        .modifier
        .expect("a cd inside the roots changes the context");
    let next = modifier.apply(baton_engine::Context::new(&h.work));
    assert_eq!(next.cwd, h.work.join("sub"));

    let r = h.bash(json!({"command": "cd /"})).await;
    assert!(r.modifier.is_none());
    assert!(r.text().contains("outside the workspace"), "{}", r.text());

    let r = h.bash(json!({"command": "ls"})).await;
    assert!(r.modifier.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_output_keeps_head_and_tail_and_the_whole_file() {
    let config = BashConfig {
        inline_chars: 1_000,
        ..BashConfig::default()
    };
    let h = Harness::with_config(config);
    let r = h.bash(json!({"command": "seq 1 200000"})).await;
    assert!(!r.is_error);
    let text = r.text();
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(text.contains("199999\n200000"), "tail missing");
    assert!(text.contains("omitted"));
    assert!(text.len() < 2_000, "inline text too long: {}", text.len());
    let log = h.dir.path().join("state/shell/call-1.log");
    assert!(text.contains(&log.display().to_string()), "{text}");
    let full = std::fs::read_to_string(&log).unwrap();
    assert_eq!(full.lines().count(), 200_000);
    assert!(full.ends_with("200000\n"));
}

/// A single line longer than everything shown (the issue saw "0 lines"
/// for 2 GB; 3 MB is the same case): the counts say one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_huge_line_is_reported_as_one_line() {
    let config = BashConfig {
        inline_chars: 1_000,
        ..BashConfig::default()
    };
    let h = Harness::with_config(config);
    let r = h
        .bash(json!({"command": "head -c 3000000 /dev/zero | tr '\\0' x"}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let text = r.text();
    assert!(text.contains("omitted here (inside one line)"), "{text}");
    assert!(text.contains(", 1 line)"), "{text}");
    assert!(!text.contains("0 lines"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_waits_two_seconds_then_reports() {
    let h = Harness::new();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink_events = events.clone();
    let start = Instant::now();
    let mut ctx = h.ctx("call-p");
    ctx.progress = ProgressSink::new(move |p| {
        sink_events.lock().unwrap().push((start.elapsed(), p));
    });
    let r = h
        .call(
            "Bash",
            json!({"command": "echo tick; sleep 4; echo tock"}),
            ctx,
        )
        .await;
    assert!(!r.is_error);
    let events = events.lock().unwrap();
    assert!(!events.is_empty(), "no progress in 4 s");
    assert!(
        events[0].0 >= Duration::from_millis(1_900),
        "first event too early: {:?}",
        events[0].0
    );
    let data = events[0].1.data.as_ref().unwrap();
    assert_eq!(data["last_lines"][0], "tick");
    assert_eq!(data["bytes"], 5);
    assert_eq!(data["lines"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_get_clear_errors() {
    let h = Harness::new();
    for (input, expect) in [
        (json!({}), "command"),
        (json!({"command": 5}), "command"),
        (json!({"command": "ls", "bogus": 1}), "bogus"),
        (json!({"command": "ls", "timeout": "soon"}), "timeout"),
        (json!({"command": "ls", "timeout": -1}), "timeout"),
        (json!({"command": "   "}), "empty"),
        (json!({"command": "ls\u{0}rm"}), "NUL"),
        (json!({"command": "ls", "timeout": 0}), "timeout"),
        (json!({"command": "x".repeat(200_000)}), "bytes long"),
    ] {
        let r = h.bash(input.clone()).await;
        assert!(r.is_error, "{input}");
        assert!(r.text().contains(expect), "{input}: {}", r.text());
    }
    let r = h
        .bash(json!({"command": "echo ok", "timeout": 99_999_999_999u64}))
        .await;
    assert!(!r.is_error, "huge timeouts are clamped: {}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_output_and_a_vanished_directory_are_handled() {
    let h = Harness::new();
    let r = h.bash(json!({"command": "printf 'a\\377\\376b'"})).await;
    assert!(!r.is_error);
    assert!(
        r.text().starts_with('a') && r.text().ends_with('b'),
        "{}",
        r.text()
    );

    let gone = h.work.join("gone");
    std::fs::create_dir(&gone).unwrap();
    let ctx = h.ctx_in("call-g", &gone);
    std::fs::remove_dir(&gone).unwrap();
    let r = h.call("Bash", json!({"command": "ls"}), ctx).await;
    assert!(r.is_error);
    assert!(r.text().contains("no longer exists"), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classification_comes_from_the_parser() {
    let h = Harness::new();
    let prep = |cmd: &str| {
        h.pipeline
            .prepare(ToolUse::new("x", "Bash", json!({"command": cmd})))
    };
    let ls = prep("ls -la | wc -l");
    assert!(ls.safe && ls.read_only);
    let rm = prep("rm -rf build");
    assert!(!rm.safe && !rm.read_only);
    let cd = prep("cd src && ls");
    assert!(
        cd.read_only && !cd.safe,
        "a cd runs alone so it can carry over"
    );
    let sneaky = prep("echo $(rm -rf x)");
    assert!(!sneaky.safe);
    assert!(ls.cancels_siblings);
    assert_eq!(prep("make -j8 all").label, "Bash(make -j8 all)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_task_output_stop_and_notification() {
    let h = Harness::new();
    let mut notes = h.session.subscribe();
    let r = h
        .bash(json!({"command": "echo start; sleep 1; echo end", "run_in_background": true}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let text = r.text();
    assert!(text.contains("shell-1"), "{text}");

    let out = h
        .call(
            "TaskOutput",
            json!({"task_id": "shell-1", "timeout": 20_000}),
            h.ctx("c2"),
        )
        .await;
    assert!(!out.is_error, "{}", out.text());
    assert!(out.text().contains("start\nend"), "{}", out.text());
    assert!(out.text().contains("completed"), "{}", out.text());

    let note = next_task_note(&mut notes).await;
    assert_eq!(note.kind, "background_task_finished");
    assert_eq!(note.data.as_ref().unwrap()["exit_code"], 0);

    let m = marker();
    let r = h
        .bash(json!({"command": format!("echo waiting; sleep {m}"), "run_in_background": true}))
        .await;
    assert!(r.text().contains("shell-2"));
    wait_started(&m, 1).await;
    let peek = h
        .call(
            "TaskOutput",
            json!({"task_id": "shell-2", "block": false}),
            h.ctx("c3"),
        )
        .await;
    assert!(peek.text().contains("still running"), "{}", peek.text());
    let stop = h
        .call("TaskStop", json!({"task_id": "shell-2"}), h.ctx("c4"))
        .await;
    assert!(stop.text().contains("stopped"), "{}", stop.text());
    assert!(!stop.is_error, "{}", stop.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);

    let missing = h
        .call("TaskOutput", json!({"task_id": "nope"}), h.ctx("c5"))
        .await;
    assert!(missing.is_error);
    assert!(
        missing.text().contains("shell-1, shell-2"),
        "{}",
        missing.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_all_ends_background_tasks() {
    let h = Harness::new();
    let m = marker();
    for _ in 0..3 {
        let r = h
            .bash(json!({"command": format!("sleep {m}"), "run_in_background": true}))
            .await;
        assert!(!r.is_error);
    }
    wait_started(&m, 3).await;
    bash::stop_all(&h.session).await;
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
    let out = h
        .call(
            "TaskOutput",
            json!({"task_id": "shell-3", "block": false}),
            h.ctx("c"),
        )
        .await;
    assert!(out.text().contains("stopped"), "{}", out.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_wait_leaves_the_task_running() {
    let h = Harness::new();
    let m = marker();
    let r = h
        .bash(json!({"command": format!("sleep {m}"), "run_in_background": true}))
        .await;
    assert!(!r.is_error);
    wait_started(&m, 1).await;
    let ctx = h.ctx("wait");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel(CancelReason::NewMessage);
    });
    let started = Instant::now();
    let out = h
        .call(
            "TaskOutput",
            json!({"task_id": "shell-1", "timeout": 600_000}),
            ctx,
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.outcome, Outcome::Cancelled { started: true });
    assert!(running(&m) >= 1, "the task itself must keep running");
    let stop = h
        .call("TaskStop", json!({"task_id": "shell-1"}), h.ctx("s"))
        .await;
    assert!(stop.text().contains("stopped"), "{}", stop.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_shells_end_with_it_and_only_its() {
    let h = Harness::new();
    let parent = marker();
    let child = marker();
    let r = h
        .bash(json!({"command": format!("sleep {parent}"), "run_in_background": true}))
        .await;
    assert!(!r.is_error);
    let mut ctx = h.ctx("sub-1");
    ctx.context.extensions = ctx
        .context
        .extensions
        .with(bash::TaskOwner("agent-7".into()));
    let r = h
        .call(
            "Bash",
            json!({"command": format!("sleep {child}"), "run_in_background": true}),
            ctx.clone(),
        )
        .await;
    assert!(!r.is_error);
    let mut ctx2 = ctx.clone();
    ctx2.call_id = "sub-2".into();
    let r = h
        .call(
            "Bash",
            json!({"command": format!("sleep {child} & echo left")}),
            ctx2,
        )
        .await;
    assert!(r.text().contains("still running"), "{}", r.text());
    wait_started(&child, 2).await;
    wait_started(&parent, 1).await;

    bash::stop_owned(&h.session, "agent-7").await;
    assert_eq!(settle(&child, Duration::from_secs(10)).await, 0);
    assert!(running(&parent) >= 1, "the parent's task keeps running");
    bash::stop_all(&h.session).await;
    assert_eq!(settle(&parent, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_all_now_works_without_awaiting() {
    let h = Harness::new();
    let m = marker();
    let r = h
        .bash(json!({"command": format!("sleep {m}"), "run_in_background": true}))
        .await;
    assert!(!r.is_error);
    let r = h
        .bash(json!({"command": format!("sleep {m} & echo ok")}))
        .await;
    assert!(r.text().contains("still running"));
    wait_started(&m, 3).await;
    bash::stop_all_now(&h.session);
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_can_be_stopped_with_the_call() {
    let h = Harness::with_config(BashConfig {
        keep_background_jobs: false,
        ..BashConfig::default()
    });
    let m = marker();
    let r = h
        .bash(json!({"command": format!("sleep {m} & echo ok")}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().contains("were stopped"), "{}", r.text());
    assert_eq!(settle(&m, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_leads_its_own_session_without_a_terminal() {
    let h = Harness::new();
    let r = h
        .bash(json!({"command": "read -r _ _ _ _ pgid sid _ < /proc/$$/stat; echo \"$$ $pgid $sid\"; exec 3</dev/tty || echo no-tty"}))
        .await;
    let text = r.text();
    let first = text.lines().next().unwrap();
    let ids: Vec<&str> = first.split(' ').collect();
    assert_eq!(ids.len(), 3, "{text}");
    assert!(
        ids[0] == ids[1] && ids[1] == ids[2],
        "pid, group and session differ: {text}"
    );
    assert!(text.contains("no-tty"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_that_keeps_writing_does_not_hold_the_call() {
    // After the shell exits, the pipe never runs dry while `yes` writes to
    // it: reading what is there must stop by itself.
    let h = Harness::with_config(BashConfig {
        keep_background_jobs: false,
        ..BashConfig::default()
    });
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        h.bash(json!({"command": "yes baton-yes & sleep 0.2; echo done"})),
    )
    .await
    .expect("the call returned");
    assert!(started.elapsed() < Duration::from_secs(30));
    let head: String = r.text().chars().take(200).collect();
    assert!(r.text().contains("baton-yes"), "{head}");
    assert!(r.text().contains("were stopped"), "the job was not stopped");
}
